internal import CArborSupport

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
#error("Arbor needs pthreads on this platform.")
#endif

/// Identifies the calling thread, so that a resolution can tell whether it is being used on the thread that owns it.
///
/// The address of a thread-local variable: unique among the threads that are running, and read without a library
/// call (measured: `pthread_self` and `pthread_equal` were two calls on every nested resolve).
struct ThreadID: Hashable, @unchecked Sendable {
    private let marker: UnsafeRawPointer

    static var current: ThreadID { ThreadID(marker: carbor_thread_marker()) }
}
