internal import ArborPrimitives

/// The coordinator for `async` resolutions: the same claims, groups and cycle checks, but a resolution that must wait
/// suspends instead of blocking its thread, and stops waiting when its task is cancelled.
///
/// A suspended resolution is in `waits` under its own thread identity (``ThreadID/unbound(_:)``), like a blocked
/// thread, so cycles of waits through `async` resolutions are found and merged as any others; and it is suspended in
/// the coordinator's ``WaitLock`` under that identity, which every change a blocked thread is woken for resumes too,
/// once the lock is released. Resumed, it looks again at what it waits for, as a woken thread does. Its cancellation
/// handler resumes it alone: the task then sees its cancellation and stops waiting.
extension CreationCoordinator {
    /// How many resolutions wait now for the instance of `storage`, blocking a thread or suspended: for tests that
    /// check that `async` resolutions never block one.
    func waitingCounts(for storage: InstanceStorage) -> (blocked: Int, suspended: Int) {
        lock.withLock {
            var counts = (blocked: 0, suspended: 0)
            for (thread, wait) in waits {
                guard case .storage(let target, _) = wait.target, target === storage else { continue }
                if thread.isUnbound { counts.suspended += 1 } else { counts.blocked += 1 }
            }
            return counts
        }
    }

    /// Waits, suspended, until the next change, as `member` waiting for `target`. Call with the lock held; it is held
    /// again on return. The lock is let go only once the task is recorded, so no change is missed.
    private func suspendLocked(_ member: Member, waitingFor target: Target) async {
        waits[member.thread] = Wait(member: member, target: target)
        await lock.suspend(as: member.thread)
        waits[member.thread] = nil
    }

    /// `acquire` for `resolution`, an `async` one: it claims the storage, shares the instance, or waits for it
    /// suspended. `.cancelled` if its task was cancelled while it waited.
    func acquireAsync(_ storage: InstanceStorage, for resolution: Resolution) async -> Acquisition {
        let member = resolution.member
        if resolution.state.value.group == nil,
            let solo = acquireSolo(storage, for: member, solo: &resolution.state.value.solo)
        {
            return solo
        }
        return await withTaskCancellationHandler {
            var stale: StoredValue?
            lock.lock()
            join(member, group: &resolution.state.value.group, solo: &resolution.state.value.solo)
            while true {
                switch acquireStep(storage, for: member, group: &resolution.state.value.group, stale: &stale) {
                case .done(let acquisition):
                    lock.unlock()
                    withExtendedLifetime(stale) {}
                    return acquisition
                case .wait(let target):
                    if Task.isCancelled {
                        lock.unlock()
                        return .cancelled
                    }
                    await suspendLocked(member, waitingFor: target)
                }
            }
        } onCancel: {
            lock.resumeIfSuspended(member.thread)
        }
    }

    /// `finish` for `resolution`, an `async` one: a member whose group has not completed waits for it suspended. If
    /// its task is cancelled meanwhile, it stops waiting (the group publishes without it) and fails with the
    /// cancellation.
    func finishAsync(_ resolution: Resolution, failure: (any Error)?) async -> Outcome {
        let member = resolution.member
        var group = resolution.state.value.group
        resolution.state.value.group = nil
        if group == nil, failure == nil, !resolution.state.value.solo.wasPromoted {
            guard publishSolo(member, solo: &resolution.state.value.solo) else { return .published }
        }
        return await withTaskCancellationHandler {
            lock.lock()
            join(member, group: &group, solo: &resolution.state.value.solo)
            guard let group else {
                lock.unlock()
                return .published
            }
            var ending = leave(member, group: group, failure: failure)
            while ending.outcome == nil {
                switch finishStep(member, group: group) {
                case .done(let outcome):
                    ending.outcome = outcome
                case .wait(let target):
                    if Task.isCancelled {
                        ending.outcome = .failed(CancellationError())
                    } else {
                        await suspendLocked(member, waitingFor: target)
                    }
                }
            }
            return finishLocked(ending, group: group, failure: failure)
        } onCancel: {
            lock.resumeIfSuspended(member.thread)
        }
    }
}
