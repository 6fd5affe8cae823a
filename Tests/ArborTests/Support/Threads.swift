import Foundation
import Testing

/// Runs `body` on a new thread and waits at most `timeout` seconds for it. Returns its result, or `nil` on timeout:
/// the thread is then left behind, so a deadlock fails the test instead of hanging the run.
func onAnotherThread<Result: Sendable>(
    timeout: TimeInterval = 10, _ body: @escaping @Sendable () -> Result
) -> Result? {
    let box = Box<Result>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        box.value = body()
        done.signal()
    }
    thread.stackSize = 8 << 20
    thread.start()
    guard done.wait(timeout: .now() + timeout) == .success else { return nil }
    return box.value
}

/// Collects what worker threads found wrong, for the test to report on its own thread.
final class ProblemLog: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var samples: [String] = []

    func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { record(message()) }
    }

    func record(_ message: String) {
        lock.withLock {
            count += 1
            if samples.count < 8 { samples.append(message) }
        }
    }

    var isEmpty: Bool { lock.withLock { count == 0 } }

    var summary: String {
        lock.withLock { "\(count) problem(s), first ones:\n" + samples.map { "  - \($0)" }.joined(separator: "\n") }
    }

    /// Records a test issue unless no problem was recorded.
    func expectNone(sourceLocation: SourceLocation = #_sourceLocation) {
        let (count, summary) = lock.withLock { (self.count, self.samples) }
        #expect(count == 0, "\(count) failures, first ones: \(summary)", sourceLocation: sourceLocation)
    }
}

/// An integer shared between threads.
final class AtomicCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    init() {}

    @discardableResult
    func add(_ amount: Int = 1) -> Int {
        lock.withLock {
            count += amount
            return count
        }
    }

    var value: Int { lock.withLock { count } }
}
