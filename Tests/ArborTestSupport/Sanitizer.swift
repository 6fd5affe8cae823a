import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Whether a sanitizer runtime is linked in (`swift test --sanitize=…`). Sanitizers slow single-threaded code down
/// several times and keep freed memory in quarantine, and ThreadSanitizer reports a misused mutex itself: suites use
/// this to run less, or to skip a misuse made on purpose.
package let runsUnderSanitizer: Bool = {
    #if canImport(Glibc)
    guard let handle = dlopen(nil, RTLD_NOW) else { return false }
    defer { dlclose(handle) }
    let names: [String] = ["__asan_init", "__tsan_init", "__msan_init"]
    return names.contains { dlsym(handle, $0) != nil }
    #else
    return false
    #endif
}()
