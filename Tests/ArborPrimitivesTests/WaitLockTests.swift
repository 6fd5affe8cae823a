import ArborPrimitives
import ArborTestSupport
import Foundation
import Testing

/// State a test guards with a `WaitLock`.
private final class Shared: @unchecked Sendable {
    let lock = WaitLock()
    var generation = 0
    var stop = false
}

@Suite struct WaitLockTests {
    @Test func aBlockedThreadWakesWhenSomethingChanges() {
        let shared = Shared()
        let finished = runThreads(2) { index in
            if index == 0 {
                shared.lock.lock()
                while shared.generation == 0 { shared.lock.waitBlocking() }
                shared.lock.unlock()
            } else {
                usleep(2_000)
                shared.lock.withLock {
                    shared.generation += 1
                    shared.lock.wakeAll()
                }
            }
        }
        #expect(finished)
    }

    @Test func aSuspendedTaskResumesOnceTheLockIsFree() async {
        let shared = Shared()
        let waiter = Task {
            shared.lock.lock()
            while shared.generation == 0 { await shared.lock.suspend(as: .unbound(1)) }
            // Resumed after the waker released the lock: taking it again here cannot wait for the waker.
            let seen = shared.generation
            shared.lock.unlock()
            return seen
        }
        while shared.lock.withLock({ shared.lock.suspendedCount }) == 0 { await Task.yield() }
        shared.lock.withLock {
            shared.generation = 7
            shared.lock.wakeAll()
            #expect(shared.lock.suspendedCount == 0, "woken tasks leave the suspended ones at once")
        }
        #expect(await waiter.value == 7)
    }

    @Test func aCancellationHandlerResumesItsOwnTaskOnly() async {
        let shared = Shared()
        let patient = Task {
            shared.lock.lock()
            while shared.generation == 0 { await shared.lock.suspend(as: .unbound(2)) }
            shared.lock.unlock()
            return true
        }
        let cancelled = Task {
            await withTaskCancellationHandler {
                shared.lock.lock()
                while shared.generation == 0, !Task.isCancelled { await shared.lock.suspend(as: .unbound(3)) }
                shared.lock.unlock()
                return Task.isCancelled
            } onCancel: {
                shared.lock.resumeIfSuspended(.unbound(3))
            }
        }
        while shared.lock.withLock({ shared.lock.suspendedCount }) < 2 { await Task.yield() }
        cancelled.cancel()
        #expect(await cancelled.value, "the cancelled task stopped waiting")
        #expect(shared.lock.withLock { shared.lock.suspendedCount } == 1, "the other task still waits")
        shared.lock.withLock {
            shared.generation = 1
            shared.lock.wakeAll()
        }
        #expect(await patient.value)
    }

    /// The deadlock this type exists to prevent: a task being cancelled holds its own status lock while its handler
    /// waits for this lock, and a thread that holds this lock resumes that task, which takes the task's status lock.
    /// Many tasks wait and are cancelled while threads keep waking them; with resumption under the lock, the run
    /// stops for good within a few thousand rounds.
    @Test func cancellingWaitersWhileOthersWakeThemNeverDeadlocks() async {
        let watchdog = Watchdog("cancelling WaitLock waiters while they are woken", seconds: Watchdog.patience)
        defer { watchdog.disarm() }
        let rounds = runsUnderSanitizer ? 300 : 2_000
        for round in 0..<rounds {
            let shared = Shared()
            let tasks = (0..<16).map { index in
                Task {
                    let id = ThreadID.unbound(round * 100 + index)
                    await withTaskCancellationHandler {
                        shared.lock.lock()
                        while !shared.stop, !Task.isCancelled { await shared.lock.suspend(as: id) }
                        shared.lock.unlock()
                    } onCancel: {
                        shared.lock.resumeIfSuspended(id)
                    }
                }
            }
            let waker = Task.detached {
                for _ in 0..<8 {
                    shared.lock.withLock {
                        shared.generation += 1
                        shared.lock.wakeAll()
                    }
                    await Task.yield()
                }
            }
            for (index, task) in tasks.enumerated() where index % 2 == 0 { task.cancel() }
            await waker.value
            shared.lock.withLock {
                shared.stop = true
                shared.lock.wakeAll()
            }
            for task in tasks { await task.value }
            watchdog.progress()
        }
    }
}
