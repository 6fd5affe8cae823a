import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A small seedable random number generator (SplitMix64), so a failing sequence can be replayed from its seed.
struct SplitMix64 {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `range`.
    mutating func int(in range: Range<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    /// `true` in `percent` of the calls.
    mutating func percent(_ percent: Int) -> Bool {
        int(in: 0..<100) < percent
    }
}

/// Counts the objects made and freed in one test, to show that nothing leaked and nothing was freed early.
final class Tally {
    var made = 0
    var freed = 0
    var alive: Int { made - freed }
}

/// An object that reports its birth and death to a tally.
final class Tracked {
    let id: Int
    let tally: Tally

    init(_ id: Int, _ tally: Tally) {
        self.id = id
        self.tally = tally
        tally.made += 1
    }

    deinit { tally.freed += 1 }
}

/// A counter that threads share; only the primitive under test makes sharing it safe.
final class UnsafeCounter: @unchecked Sendable {
    var value = 0
}

/// Runs `body(index)` on `count` new threads that start together, and waits at most `timeout` seconds for them.
/// `false` on timeout (the threads are left behind), so a deadlock fails the test instead of hanging the run.
func runThreads(_ count: Int, timeout: TimeInterval = 10, _ body: @escaping @Sendable (_ index: Int) -> Void) -> Bool {
    let started = DispatchGroup()
    let go = DispatchSemaphore(value: 0)
    let finished = DispatchGroup()
    for index in 0..<count {
        started.enter()
        finished.enter()
        let thread = Thread {
            started.leave()
            go.wait()
            body(index)
            finished.leave()
        }
        thread.start()
    }
    started.wait()
    for _ in 0..<count { go.signal() }
    return finished.wait(timeout: .now() + timeout) == .success
}

/// Values that threads hand back to the test, one slot per thread.
final class PerThread<Value>: @unchecked Sendable {
    private var slots: [Value]
    private let lock = NSLock()

    init(count: Int, initial: Value) { slots = Array(repeating: initial, count: count) }

    subscript(index: Int) -> Value {
        get { lock.withLock { slots[index] } }
        set { lock.withLock { slots[index] = newValue } }
    }

    var all: [Value] { lock.withLock { slots } }
}

/// Whether a sanitizer runtime is linked in (`swift test --sanitize=…`). ThreadSanitizer intercepts the pthread
/// calls and reports a misused mutex itself, so the tests that misuse one on purpose do not run under it.
let runsUnderSanitizer: Bool = {
    #if canImport(Glibc)
    guard let handle = dlopen(nil, RTLD_NOW) else { return false }
    defer { dlclose(handle) }
    let names: [String] = ["__asan_init", "__tsan_init", "__msan_init"]
    return names.contains { dlsym(handle, $0) != nil }
    #else
    return false
    #endif
}()
