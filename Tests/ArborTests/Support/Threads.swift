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

/// A task executor with a thread of its own. A task that prefers it (`Task(executorPreference:)`) runs there, and
/// blocking that task's thread holds none of the few threads Swift runs other tasks on, which the tests running side by
/// side need: for tests of what a synchronous resolve in a task does while it waits.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    /// Starts the thread, which runs for the rest of the process.
    init() {
        Thread { [self] in
            while true {
                let job = condition.withLock {
                    while jobs.isEmpty { condition.wait() }
                    return jobs.removeFirst()
                }
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            jobs.append(job)
            condition.signal()
        }
    }
}

/// Runs `body` in a task on a thread of its own (``DedicatedThreadExecutor``); before macOS 15 and its peers, in a
/// detached task.
@discardableResult
func taskOnAThreadOfItsOwn<Success: Sendable>(
    _ body: @escaping @Sendable () async throws -> Success
) -> Task<Success, any Error> {
    if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
        return Task(executorPreference: DedicatedThreadExecutor(), operation: body)
    }
    return Task.detached(operation: body)
}
