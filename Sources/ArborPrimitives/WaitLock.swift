/// A mutex that threads wait under by blocking and tasks by suspending, and that never resumes a task while it is
/// held.
///
/// **The rule**: no continuation is resumed, and no waiter woken to run, while a lock that a cancellation handler or
/// another resolution may take is held. Resuming a continuation takes the resumed task's own status lock; cancelling
/// a task holds that same status lock while it runs the task's cancellation handler, and a handler that waits for this
/// mutex would then wait for a thread that waits for it. So ``wakeAll()`` only collects the suspended tasks, and the
/// thread that woke them resumes them in ``unlock()``, after the mutex is released. A cancellation handler resumes
/// only its own task (``resumeIfSuspended(_:)``), and not on its own thread: resuming there, with the cancelled task's
/// status lock held, would take a second lock while holding one that another thread may hold the other way round.
///
/// ```swift
/// waitLock.lock()
/// while !isReady {
///     if Task.isCancelled { break }          // checked under the lock, so no cancellation is missed
///     await waitLock.suspend(as: id)         // or, on a thread: waitLock.waitBlocking()
/// }
/// waitLock.unlock()
///
/// // Elsewhere, when something changed:
/// waitLock.withLock { isReady = true; waitLock.wakeAll() }   // resumed after the lock, by withLock
/// ```
///
/// Resumptions happen under a second, inner lock, `handoff`, that a resumed task passes through before it goes on. A
/// task may be resumed while it is still on its way to suspending; the concurrency runtime orders the two with atomics
/// of its own, which ThreadSanitizer does not see, and the handoff states that order where it can. It is held only
/// around `resume()` calls, which never wait for the resumed task, and no cancellation handler takes it.
///
/// Safe because: the collected continuations are touched only under the mutex, and each is resumed exactly once — it
/// leaves `suspended` (woken, or by its own cancellation handler) in the same critical section that hands it on,
/// and `woken` is emptied before the mutex is released, so it is empty whenever the mutex is free.
package final class WaitLock: @unchecked Sendable {
    private let base = Lock()
    /// Held around `resume()` calls, and passed through by each resumed task (see the type's documentation).
    private let handoff = Lock()
    /// The suspended tasks, by the identity they suspended as. Guarded by `base`.
    private var suspended: [ThreadID: UnsafeContinuation<Void, Never>] = [:]
    /// Tasks `wakeAll()` woke in the current critical section: resumed when it ends. Guarded by `base`; empty
    /// whenever `base` is free.
    private var woken: [UnsafeContinuation<Void, Never>] = []

    package init() {}

    package func lock() {
        base.lock()
    }

    /// Releases the lock, then resumes the tasks woken while it was held.
    package func unlock() {
        guard !woken.isEmpty else {
            base.unlock()
            return
        }
        let resumed = woken
        woken = []
        base.unlock()
        handoff.withLock {
            for continuation in resumed { continuation.resume() }
        }
    }

    /// Runs `body` with the lock held; then releases it and resumes the tasks `body` woke.
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Wakes every waiter: blocked threads now, suspended tasks once the lock is released. Each looks again at what it
    /// waits for. Call with the lock held.
    package func wakeAll() {
        base.broadcast()
        guard !suspended.isEmpty else { return }
        woken.append(contentsOf: suspended.values)
        suspended.removeAll(keepingCapacity: true)
    }

    /// Blocks the calling thread until `wakeAll()`, then takes the lock again. May return early, with the lock
    /// released and taken again in between (to resume tasks this critical section woke): the caller looks again at
    /// what it waits for, as after any wake-up. Call with the lock held.
    package func waitBlocking() {
        guard woken.isEmpty else {
            unlock()
            lock()
            return
        }
        base.wait()
    }

    /// Suspends the calling task as `id` — an identity no other waiter uses, such as an `async` resolution's
    /// ``ThreadID/unbound(_:)`` — until `wakeAll()`, or until its
    /// cancellation handler calls `resumeIfSuspended(id)`; then takes the lock again. The lock is released only once
    /// the task is recorded, so no wake-up is missed. Call with the lock held.
    package func suspend(as id: ThreadID) async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            internalInvariant(suspended[id] == nil, "two waiters suspended as \(id)")
            suspended[id] = continuation
            unlock()
        }
        handoff.withLock {}  // After the resumer's handoff: what it did is visible here.
        lock()
    }

    /// Resumes the task suspended as `id`, if it is suspended now: what its cancellation handler calls, so that it
    /// stops waiting. Resumes no other task, and not on the calling thread, which holds the cancelled task's status
    /// lock: a task of its own does it, under the handoff. Takes the lock; call without it.
    package func resumeIfSuspended(_ id: ThreadID) {
        base.lock()
        let continuation = suspended.removeValue(forKey: id)
        internalInvariant(woken.isEmpty, "tasks woken under a free lock")
        base.unlock()
        guard let continuation else { return }
        let handoff = handoff
        Task.detached { handoff.withLock { continuation.resume() } }
    }

    /// How many tasks are suspended now. Call with the lock held.
    package var suspendedCount: Int { suspended.count }
}
