import Foundation

/// Runs `body(index)` on `count` new threads that start together, and waits at most `timeout` seconds for all of
/// them. `false` on timeout (the threads are left behind): a deadlock fails the test, never hangs it. The timeout
/// tells a deadlock from slowness only: by default the watchdog's patience, as the suites running alongside may take
/// the cores for minutes (under ThreadSanitizer, 10 s failed a run of 3,000 rounds with the other suites beside it).
package func runThreads(
    _ count: Int, timeout: TimeInterval = Watchdog.patience, _ body: @escaping @Sendable (_ index: Int) -> Void
) -> Bool {
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
        thread.stackSize = 8 << 20
        thread.start()
    }
    started.wait()
    for _ in 0..<count { go.signal() }
    return finished.wait(timeout: .now() + timeout) == .success
}

/// Runs `body` on a new thread and returns what it returns, suspended meanwhile. For a long synchronous test (a soak,
/// a property-based run, threads it waits for): on a thread of its own it holds none of the few threads Swift runs
/// tasks on (two on a 2-core machine), which every `async` test running alongside needs. Checks belong in the
/// caller's task, on what `body` returns: an `#expect` on the thread is no test's.
package func onAThreadOfItsOwn<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}
