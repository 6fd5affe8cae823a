import Foundation

/// Runs `body(index)` on `count` new threads that start together, and waits at most `timeout` seconds for all of
/// them. `false` on timeout (the threads are left behind): a deadlock fails the test, never hangs it.
package func runThreads(
    _ count: Int, timeout: TimeInterval = 10, _ body: @escaping @Sendable (_ index: Int) -> Void
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
