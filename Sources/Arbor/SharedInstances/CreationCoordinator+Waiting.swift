internal import ArborPrimitives

// The coordinator's two drivers. The claims, groups, merges and cycle checks are steps (`acquireStep`, `finishStep`)
// that run with the lock held and say what to do: an answer, or something to wait for. A synchronous resolution
// waits by blocking its thread; an `async` one suspends, and stops waiting when its task is cancelled. Nothing else
// differs.
//
// A suspended resolution is in `waits` under its own thread identity (``ThreadID/unbound(_:)``), like a blocked
// thread, so cycles of waits through `async` resolutions are found and merged as any others; and it is suspended in
// the coordinator's ``WaitLock`` under that identity, which every change a blocked thread is woken for resumes too,
// once the lock is released. Resumed, it looks again at what it waits for, as a woken thread does. Its cancellation
// handler resumes it alone: the task then sees its cancellation and stops waiting.
extension CreationCoordinator {
    // MARK: Claiming

    /// What `member` may do about the instance of `storage`: share it, build it (claimed), or an answer that ends the
    /// resolve. Waits, blocking the thread, while another group builds it — except for a build an `async` resolution
    /// takes part in, on the main actor or in a task (``Waiter``): `waiter` says which, asked only when it may wait.
    func acquire(
        _ storage: InstanceStorage, for member: Member, claims: inout Claims, waiter: () -> Waiter
    ) -> Acquisition {
        if claims.group == nil, let solo = acquireSolo(storage, for: member, solo: &claims.solo) { return solo }
        var stale: StoredValue?
        defer { withExtendedLifetime(stale) {} }  // After the lock.
        let waiter = waiter()
        lock.lock()
        defer { lock.unlock() }
        join(member, group: &claims.group, solo: &claims.solo)
        return blockUntilDone(as: member, inTask: waiter.blocksTaskThread) {
            acquireStep(storage, for: member, group: &claims.group, stale: &stale, waiter: waiter)
        }
    }

    /// `acquire` for `resolution`, an `async` one: it waits suspended. `.cancelled` if its task was cancelled while
    /// it waited.
    func acquireAsync(_ storage: InstanceStorage, for resolution: Resolution) async -> Acquisition {
        let member = resolution.member
        let solo = resolution.withClaims { claims in
            claims.group == nil ? acquireSolo(storage, for: member, solo: &claims.solo) : nil
        }
        if let solo { return solo }
        var stale: StoredValue?
        let acquisition = await withLockCancellably(as: member) {
            resolution.withClaims { join(member, group: &$0.group, solo: &$0.solo) }
            return await suspendUntilDone(as: member, cancelled: .cancelled) {
                resolution.withClaims { acquireStep(storage, for: member, group: &$0.group, stale: &stale) }
            }
        }
        withExtendedLifetime(stale) {}
        return acquisition
    }

    // MARK: Finishing

    /// Ends `member`'s part in its creation group: with `failure`, the group fails; without, the member waits,
    /// blocking, until the rest of the group has finished. The last member to finish publishes the group's
    /// instances, in the order their factories returned — or abandons them all if any member failed.
    ///
    /// A member without a group publishes its solo builds itself, without the coordinator's lock, unless one of them
    /// was promoted: then it joins the group made for it and finishes as a member of it.
    func finish(_ member: Member, claims: inout Claims, failure: (any Error)?) -> Outcome {
        if let outcome = publishAlone(member, claims: &claims, failure: failure) { return outcome }
        let blocksMainActor = isOnMainActor()
        lock.lock()
        guard let (group, left) = startFinishing(member, claims: &claims, failure: failure) else {
            lock.unlock()
            return .published
        }
        var ending = left
        if ending.outcome == nil {
            ending.outcome = blockUntilDone(as: member) {
                finishStep(member, group: group, blocksMainActor: blocksMainActor)
            }
        }
        let outcome = outcome(of: ending, group: group, failure: failure)
        lock.unlock()
        release(ending)
        return outcome
    }

    /// `finish` for `resolution`, an `async` one: it waits for its group suspended. If its task is cancelled meanwhile,
    /// it stops waiting (the group publishes without it) and fails with the cancellation.
    func finishAsync(_ resolution: Resolution, failure: (any Error)?) async -> Outcome {
        let member = resolution.member
        if let outcome = resolution.withClaims({ publishAlone(member, claims: &$0, failure: failure) }) {
            return outcome
        }
        let finished: (Ending, Outcome)? = await withLockCancellably(as: member) {
            guard let (group, left) = resolution.withClaims({ startFinishing(member, claims: &$0, failure: failure) })
            else { return nil }
            var ending = left
            if ending.outcome == nil {
                ending.outcome = await suspendUntilDone(as: member, cancelled: .cancelled) {
                    finishStep(member, group: group)
                }
            }
            return (ending, outcome(of: ending, group: group, failure: failure))
        }
        guard let (ending, outcome) = finished else { return .published }
        release(ending)
        return outcome
    }

    /// The first step of finishing, without the lock: a member with nothing but solo builds, none of them promoted,
    /// publishes them itself. `nil` when the member must finish under the lock.
    private func publishAlone(_ member: Member, claims: inout Claims, failure: (any Error)?) -> Outcome? {
        guard claims.group == nil, failure == nil, !claims.solo.wasPromoted else { return nil }
        return publishSolo(member, solo: &claims.solo) ? nil : .published
    }

    /// Takes `member`'s group out of its claims, joins its solo claims into it, and leaves it: the group, and what
    /// leaving came to; `nil` if the member had nothing to finish. Call with the lock held.
    private func startFinishing(
        _ member: Member, claims: inout Claims, failure: (any Error)?
    ) -> (group: CreationGroup, ending: Ending)? {
        var group = claims.group
        claims.group = nil
        join(member, group: &group, solo: &claims.solo)
        guard let group else { return nil }
        return (group, leave(member, group: group, failure: failure))
    }

    // MARK: The two ways to wait

    /// Runs `step` until it is done, blocking the thread whenever it says to wait. Call with the lock held; it is
    /// held again on return. `inTask`: the caller is a synchronous resolve in a task (``Waiter/blocksTaskThread``).
    ///
    /// A member that starts to wait wakes the synchronous resolves in tasks that wait: one may wait for what it
    /// builds, and it may now wait for a suspended resolution (see ``Waiter``).
    private func blockUntilDone<Answer>(
        as member: Member, inTask: Bool = false, _ step: () -> Step<Answer>
    ) -> Answer {
        var isFirstWait = true
        while true {
            switch step() {
            case .done(let answer):
                return answer
            case .wait(let target):
                if isFirstWait {
                    isFirstWait = false
                    wakeTaskThreads()
                }
                waits[member.thread] = Wait(member: member, target: target, blocksThread: true)
                if inTask { blockedTaskThreads += 1 }
                lock.waitBlocking()
                if inTask { blockedTaskThreads -= 1 }
                waits[member.thread] = nil
            }
        }
    }

    /// Runs `step` until it is done, suspending the task whenever it says to wait; `cancelled` once the task is
    /// cancelled while it waits (checked under the lock, so no cancellation is missed). Call inside
    /// `withLockCancellably`, with the lock held; it is held again on return. The lock is let go only once the task is
    /// recorded, so no change is missed. Starting to wait, it wakes the synchronous resolves in tasks that wait, as
    /// `blockUntilDone` does.
    private func suspendUntilDone<Answer>(
        as member: Member, cancelled: Answer, _ step: () -> Step<Answer>
    ) async -> Answer {
        var isFirstWait = true
        while true {
            switch step() {
            case .done(let answer):
                return answer
            case .wait(let target):
                if Task.isCancelled { return cancelled }
                if isFirstWait {
                    isFirstWait = false
                    wakeTaskThreads()
                }
                waits[member.thread] = Wait(member: member, target: target, blocksThread: false)
                await lock.suspend(as: member.thread)
                waits[member.thread] = nil
            }
        }
    }

    /// Runs `body` with the lock held, and releases it after; meanwhile the task's cancellation resumes it if it is
    /// suspended (``WaitLock/resumeIfSuspended(_:)``). The handler is in place before the lock is taken: a task
    /// cancelled already runs it at once, and it takes the lock itself.
    private func withLockCancellably<Result>(as member: Member, _ body: () async -> Result) async -> Result {
        await withTaskCancellationHandler {
            lock.lock()
            defer { lock.unlock() }
            return await body()
        } onCancel: {
            lock.resumeIfSuspended(member.thread)
        }
    }

    /// How many resolutions wait now for the instance of `storage`, blocking a thread or suspended: for tests that
    /// check that `async` resolutions never block one.
    func waitingCounts(for storage: InstanceStorage) -> (blocked: Int, suspended: Int) {
        lock.withLock {
            var counts = (blocked: 0, suspended: 0)
            for wait in waits.values {
                guard case .storage(let target, _) = wait.target, target === storage else { continue }
                if wait.blocksThread { counts.blocked += 1 } else { counts.suspended += 1 }
            }
            return counts
        }
    }
}
