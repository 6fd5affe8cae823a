internal import ArborPrimitives

/// Decides who builds each permanent and weak instance, and who waits for whom, across all containers and threads.
///
/// The rule it keeps: **a permanent instance is built at most once, and no resolution waits forever.**
///
/// - The first resolution that needs an instance nobody holds *claims* its storage and builds it. Others that need
///   it wait until the builder's resolution has finished — hooks and all — and *publishes* it.
/// - Every resolution that claims something belongs to a *creation group*, at first a group of its own. A group
///   publishes its claims when all of its members have finished, or abandons them all if any member failed: an
///   instance is never published while something it was wired with can still fail. (A resolution's outermost build, and
///   any build of an `async` resolution, is published at once, as it is recorded, when it is complete as its factory
///   returns — no hook of it, or of anything built before it, left to run: `builtAndPublished`.)
/// - Before a resolution waits, the coordinator follows the chain "waits for … which waits for …". If the chain
///   leads back to the waiting resolution, waiting would never end, and the coordinator does not back off (that
///   would throw away an instance and build it again). Instead:
///   - if every link is a resolution waiting for another's group (two threads that entered a cycle of permanent
///     services from opposite ends), the groups on the chain *merge*: their members share the instances they are
///     building, as a single resolution shares its own, and publish together. The result is the one a single
///     thread resolving the whole cycle would produce, and each factory ran once;
///   - if a link is a resolution suspended under another on its own thread (a factory or hook called a container's
///     `resolve` instead of its resolver, and that nested resolution needs an instance the outer one is building),
///     or the members of one group wait for each other's factories, no order of events can finish: the waiting
///     resolution throws `.circularDependency` at once.
///
/// One lock guards all of it, held only for these short transitions, never while a factory or hook runs. Lock
/// order: the coordinator's lock, then a container's. Members and waits refer to resolutions by identity and
/// thread only: a resolution finishes — leaving its group — before it can be reused or freed. The lock is a
/// ``WaitLock``: a change wakes blocked threads at once and resumes suspended tasks only after the lock is released,
/// and a cancelled task's handler resumes that task alone (see its rule).
final class CreationCoordinator: @unchecked Sendable {
    static let shared = CreationCoordinator()

    /// A resolution, as the coordinator knows it.
    struct Member: Hashable {
        let id: ObjectIdentifier
        let thread: ThreadID
    }

    /// Who builds a storage's instance: a member, and its group. Kept by the storage while it builds.
    struct Builder {
        let group: CreationGroup
        let member: Member
    }

    enum Acquisition {
        /// Published: share it.
        case held(Any)
        /// Built by the caller's own creation group, whose hooks may not have run yet: share it, as a resolution
        /// shares the instances it built itself.
        case shared(Any)
        /// The caller builds it now, and then calls `built` (or `abandon`, if its factory threw).
        case claimed
        /// The registration left its container: look the key up again.
        case retired
        /// The container that keeps the instance was closed, before or while it was built: a closed container builds
        /// and hands out nothing.
        case closed
        /// Waiting would never end. The detail says why, when it is not a plain cycle of factories.
        case circular(detail: String?)
        /// A member of the caller's creation group failed: the caller's resolution fails with the same error.
        case failed(any Error)
        /// The caller's task was cancelled while it waited (`acquireAsync` only).
        case cancelled
        /// The caller runs on the main actor and would block it waiting for a build that an `async` resolution takes
        /// part in, which may need the main actor to finish (`acquire` only): it throws `.asyncRequired` instead.
        case wouldBlockMainActor
        /// The caller, a synchronous resolve in a task, would block one of the threads tasks run on waiting for the
        /// build of the storage, which an `async` resolution takes part in that may need one of those threads to go
        /// on (`acquire` only). See ``Waiter``. A resolve that an `async` resolution hosts hands the wait to that
        /// resolution, which awaits the build and runs the code again
        /// (``Resolution/awaitingBuildsInstead(inRun:_:)``); any other throws `.asyncRequired`. Also what a resolve
        /// on the main actor gets in synchronous code that an `async` resolution hosts there
        /// (``Resolution/hostingOnMainActor(_:)``): it hands the wait over in the same way.
        case wouldBlockTaskThread(InstanceStorage)
    }

    /// What blocking the caller's thread would hold up, and so which builds it may not wait for: a build that an
    /// `async` resolution takes part in (``Reach/task``), which may suspend, and then needs a thread to
    /// go on. Only a synchronous resolve blocks; an `async` one suspends and may wait for anything.
    struct Waiter {
        /// The caller would block the main actor, which such a build may need: it never waits for one.
        var blocksMainActor = false
        /// The caller runs in synchronous code an `async` resolution hosts, which awaits a build in its place.
        var isHosted = false
        /// The caller is a synchronous resolve in a task — or in synchronous code (a factory or hook) that an
        /// `async` resolution hosts — and would block one of the few threads Swift runs tasks on (as many as the
        /// machine has cores). An `async` resolution that is suspended needs one of them to go on: with a blocked
        /// resolve on each, nothing would. So it waits for a build only while no `async` resolution the build waits
        /// for is suspended — in a wait of its own, or while it awaits an `async` factory or hook holding what it
        /// claimed (``awaiting``) — or while the build's synchronous factory runs (its builder is on a thread then,
        /// and cannot suspend before the factory returns). Whenever that may have changed, the waiter is woken to
        /// look again (``wakeTaskThreads()``).
        var blocksTaskThread = false
        /// Whether the factory of the instance waited for is synchronous.
        var factoryIsSynchronous = true
        /// For a synchronous resolve in a task, not hosted: the task, as the coordinator knows its `async`
        /// resolutions.
        var task: ThreadID?

        /// A synchronous resolve that would block the calling thread: on the main actor, in synchronous code an
        /// `async` resolution hosts (`hosted`), in a task, or on a thread of its own.
        static func blockingHere(hosted: Bool, factoryIsSynchronous: Bool) -> Waiter {
            if isOnMainActor() { return Waiter(blocksMainActor: true, isHosted: hosted) }
            if hosted {
                return Waiter(isHosted: true, blocksTaskThread: true, factoryIsSynchronous: factoryIsSynchronous)
            }
            guard let task = CurrentTask.address else { return Waiter(factoryIsSynchronous: factoryIsSynchronous) }
            return Waiter(blocksTaskThread: true, factoryIsSynchronous: factoryIsSynchronous, task: .task(task))
        }
    }

    /// How a member's part in its group ended.
    enum Outcome {
        /// The group published its instances.
        case published
        /// Another member failed with this error: nothing was published.
        case failed(any Error)
        /// Waiting for the rest of the group would never end (see the type's documentation).
        case wouldDeadlock(detail: String)
        /// The member runs on the main actor, and an `async` member of its group, which may need the main actor, has
        /// not finished (`finish` only): the group fails rather than block the main actor.
        case wouldBlockMainActor
        /// The member's task was cancelled while it waited for the rest of its group (`finishAsync` only). It had
        /// left the group, which publishes without it.
        case cancelled
    }

    enum Target {
        /// The instance of a storage: what it waits for depends on who builds it, which a merge may change.
        case storage(InstanceStorage, waiterGroup: CreationGroup?)
        /// The rest of the waiter's own group finishing.
        case completion(CreationGroup)
    }

    struct Wait {
        let member: Member
        let target: Target
        /// Whether it blocks a thread (``waitingCounts(for:)``): a synchronous resolve, also one that an `async`
        /// resolution hosts, whose member has that resolution's identity.
        let blocksThread: Bool
    }

    let lock = WaitLock()
    /// What each waiting thread's innermost resolution waits for.
    var waits: [ThreadID: Wait] = [:]
    /// The `async` resolutions, by their coordination thread, that await an `async` factory or hook while they hold
    /// claims: they may be suspended, as in a wait (see ``Waiter``). A count, for the nested `async` resolutions of
    /// one task, which share its thread.
    var awaiting: [ThreadID: Int] = [:]
    /// How many synchronous resolves in tasks are blocked in a wait now (``Waiter/blocksTaskThread``).
    var blockedTaskThreads = 0
    /// The groups made for resolutions whose solo builds another resolution promoted, until each of those
    /// resolutions joins its group (see `join`).
    var promotedGroups: [Member: CreationGroup] = [:]

    /// Detail of a `.circular` that goes through a resolution nested on one thread.
    static let nestedDetail = """
        The instance is being built by a resolution further down a thread's stack, which waits for this one: a \
        factory or hook called a container's resolve instead of the resolver it was given. Resolve through the \
        resolver to share the instance.
        """

    /// `nestedDetail`, when the nested resolve is an observer's: resolving in an event is allowed, but not an instance
    /// the resolution it observes is still building.
    static let observerNestedDetail = """
        The instance is being built by the resolution whose event an observer is handling, further down this \
        thread's stack: the observer's resolve cannot wait for it. Resolve it in resolveFinished, once the \
        resolution has published its instances, or outside the observer.
        """

    /// Detail of an `.asyncRequired` thrown instead of blocking the main actor.
    static let mainActorDetail = """
        another task is building it (or something it waits for), and that build may need the main actor, which this \
        synchronous resolve would block while it waits. Resolve it with `try await` on the main actor: an async \
        resolve waits suspended, leaving the main actor free.
        """

    /// Detail of an `.asyncRequired` thrown instead of blocking one of the threads tasks run on.
    static let taskThreadDetail = """
        another task's async resolve is building it (or something it waits for), and awaits meanwhile: it may be \
        suspended. This synchronous resolve runs in a task: waiting would block one of the few threads Swift runs \
        tasks on, which that resolve needs to go on, and with one blocked on each, nothing would. Resolve it with \
        `try await` (a synchronous helper that resolves it becomes async): an async resolve waits suspended.
        """

    /// Detail of the `.asyncRequired` that unwinds synchronous code an `async` resolve runs, when a resolve in it
    /// would block one of the threads tasks run on, or the main actor: the `async` resolve catches it, awaits, and
    /// runs the code again.
    static let hostedWaitDetail = """
        another task's async resolve is building it (or something it waits for). This synchronous code runs in an \
        async resolve, on the main actor or on one of the few threads Swift runs tasks on, which that build may need \
        and waiting would block: that resolve awaits the build instead and then runs this code again from the start, \
        whatever it returned. If this error reaches you, the code kept it past its end; keep side effects after the \
        resolves.
        """

    /// Detail of a `.circularDependency` thrown by a synchronous resolve in an `async` factory (or hook) that needs
    /// what the `async` resolve running that factory builds.
    static let ownTaskDetail = """
        This task's own async resolve is building it, and awaits the code that resolves it now: a Lazy, a Provider or \
        a container's synchronous resolve in one of that resolve's async factories or hooks. Resolve it through the \
        resolver the factory was given, `try await r.resolve(…)`, to share the instance.
        """

    /// Whether some thread waits for the instance of `storage` now: for tests that must act only once one does.
    func isWaited(on storage: InstanceStorage) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return waits.values.contains { wait in
            if case .storage(let target, _) = wait.target { return target === storage }
            return false
        }
    }

    /// Whether `member` has solo builds that another resolution promoted, and has not joined their group yet: for
    /// tests, which expect none once its resolve has returned.
    func hasPromotedGroup(for member: Member) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return promotedGroups[member] != nil
    }

    // MARK: Claiming

    /// The first look of a member without a group: a solo claim, or an answer that needs no coordinator; `nil` when
    /// the coordinator must decide.
    func acquireSolo(_ storage: InstanceStorage, for member: Member, solo: inout SoloClaims) -> Acquisition? {
        switch storage.claimSolo(by: member) {
        case .claimed(let stale):
            withExtendedLifetime(stale) {}
            solo.append(storage)
            return .claimed
        case .shared(let instance):
            return .shared(instance)
        case .circular:
            return .circular(detail: nil)
        case .retired:
            return .retired
        case .closed:
            return .closed
        case .unavailable:
            return nil
        }
    }

    /// What a step of waiting for something comes to: an answer, or something to wait for before the next step.
    enum Step<Answer> {
        case done(Answer)
        case wait(Target)
    }

    /// One look at `storage` for `acquire`: claim it, share it, or say what to wait for. Call with the lock held,
    /// after `join`; again after each wait. `waiter`: what blocking the caller would hold up, for a synchronous
    /// resolve (``Waiter``); an `async` one waits for anything.
    func acquireStep(
        _ storage: InstanceStorage, for member: Member, group: inout CreationGroup?, stale: inout StoredValue?,
        waiter: Waiter = Waiter()
    ) -> Step<Acquisition> {
        while true {
            let own = group.map(Self.root)
            if let failure = own?.failure { return .done(.failed(failure)) }
            switch storage.snapshot() {
            case .holding(let instance):
                return .done(.held(instance))
            case .retired:
                return .done(.retired)
            case .closed:
                return .done(.closed)
            case .soloBuilding:
                promote(storage)
                continue
            case .empty:
                // A solo build may have claimed it since the snapshot: then look again.
                guard let expired = storage.claim() else { continue }
                stale = expired
                let claiming = own ?? CreationGroup(member)
                group = claiming
                claiming.claim(storage, by: member, isBuilt: false)
                return .done(.claimed)
            case .building(let instance, let isRetired):
                guard let builder = storage.builder else { preconditionFailure("A storage is built by a member.") }
                if Self.root(builder.group) === own {
                    if let instance { return .done(.shared(instance)) }
                    // Its factory has not returned: the caller's own is a factory cycle; another member's may
                    // return.
                    if builder.member == member { return .done(.circular(detail: nil)) }
                } else if isRetired {
                    return .done(.retired)
                }
            }
            let target = Target.storage(storage, waiterGroup: own)
            let (cycle, reach) = findCycle(from: member, waitingFor: target, own: own)
            switch cycle {
            case .none:
                if let refusal = refusal(of: waiter, reach: reach, waitingFor: storage) { return .done(refusal) }
                return .wait(target)
            case .throughNesting:
                return .done(.circular(detail: Self.nestedDetail))
            case .throughChildTask:
                return .done(.circular(detail: Lineage.waitDetail))
            case .withinGroup:
                return .done(.circular(detail: nil))
            case .merge(let groups):
                merge(groups)
                continue
            }
        }
    }

    /// What `waiter` gets instead of waiting for the build of `storage`, given what the build's chain of waits
    /// reaches; `nil` if it may wait (see ``Waiter``). Call with the lock held.
    private func refusal(of waiter: Waiter, reach: Reach, waitingFor storage: InstanceStorage) -> Acquisition? {
        guard reach.task else { return nil }
        if waiter.blocksMainActor { return waiter.isHosted ? .wouldBlockTaskThread(storage) : .wouldBlockMainActor }
        guard waiter.blocksTaskThread, reach.suspendedTask else { return nil }
        // Built by an `async` resolution of the caller's own task, which awaits the code that resolves now: a
        // `Lazy`, `Provider` or container resolve in one of its `async` factories. Waiting would never end.
        if let builder = storage.builder, builder.member.thread == waiter.task {
            return .circular(detail: Self.ownTaskDetail)
        }
        // Its synchronous factory runs on its builder's thread now (not waiting for anything itself): the builder
        // records the instance, or gives the claim up, when it returns, and either wakes the waiter.
        if waiter.factoryIsSynchronous, !storage.isBuilt, let builder = storage.builder,
            waits[builder.member.thread] == nil
        {
            return nil
        }
        return .wouldBlockTaskThread(storage)
    }

    /// Wakes the synchronous resolves in tasks that wait, if any, to look again at what they wait for: something it
    /// waits for may have become able to suspend (see ``Waiter``). Call with the lock held.
    func wakeTaskThreads() {
        if blockedTaskThreads > 0 { lock.wakeAll() }
    }

    /// Records that `member`, an `async` resolution that holds claims, awaits an `async` factory or hook: it may be
    /// suspended until that returns (``endAwaiting(_:)``).
    func beginAwaiting(_ member: Member) {
        lock.withLock {
            awaiting[member.thread, default: 0] += 1
            wakeTaskThreads()
        }
    }

    /// Ends `beginAwaiting(_:)`.
    func endAwaiting(_ member: Member) {
        lock.withLock {
            guard let count = awaiting[member.thread] else { return }
            awaiting[member.thread] = count > 1 ? count - 1 : nil
        }
    }

    /// The order in which held instances came to be, which their release hooks run in reverse: a number no
    /// instance had before, larger than every earlier one's (also those registered as instances).
    static func nextBuildSequence() -> UInt64 {
        UInt64(UniqueNumber.next())
    }

    /// Records the instance a claiming member's factory returned: its group shares it from now on.
    func built<Service>(_ instance: Service, in storage: InstanceStorage, by member: Member, solo: inout SoloClaims) {
        if solo.contains(storage) {
            let sequence = Self.nextBuildSequence()
            if let replaced = storage.builtSolo(StoredValue.make(instance), by: member, sequence: sequence) {
                withExtendedLifetime(replaced) {}
                solo.recordBuilt(storage, sequence: sequence)
                return
            }
            solo.wasPromoted = true
        }
        let replaced = lock.withLock {
            storage.isBuilt = true
            if !waits.isEmpty { lock.wakeAll() }
            return storage.built(instance, sequence: Self.nextBuildSequence())
        }
        withExtendedLifetime(replaced) {}
    }

    /// Gives up one claim (its factory threw, or a weak registration built a value type, which has no identity to
    /// share): the storage is empty again, and a waiting resolution may claim it.
    func abandon(_ storage: InstanceStorage, by member: Member, solo: inout SoloClaims) {
        if solo.contains(storage) {
            solo.remove(storage)
            if let dropped = storage.abandonSolo(by: member) {
                withExtendedLifetime(dropped) {}
                return
            }
            solo.wasPromoted = true
        }
        // The claim goes after the lock: it may be the last reference to its container.
        let (dropped, claim) = lock.withLock {
            var claim: CreationGroup.Claim?
            if let builder = storage.builder {
                let group = Self.root(builder.group)
                if let index = group.claims.lastIndex(where: { $0.storage === storage }) {
                    claim = group.claims.remove(at: index)
                }
            }
            storage.builder = nil
            storage.isBuilt = false
            lock.wakeAll()
            return (storage.abandon(), claim)
        }
        withExtendedLifetime((dropped, claim)) {}
    }

    // MARK: Finishing

    /// What a member's leaving its group comes to: what the group's completion handed back to release, and the
    /// outcome, `nil` while the member still waits for the rest of its group.
    struct Ending {
        var published: [InstanceStorage.Publication] = []
        var abandoned: [StoredValue] = []
        /// The completed group's claims, whose containers it kept alive until now.
        var claims: [CreationGroup.Claim] = []
        var outcome: Outcome?
    }

    /// Takes `member` out of `group`: the last member completes the group; with `failure`, the group fails. Call with
    /// the lock held, after `join`.
    func leave(_ member: Member, group: CreationGroup, failure: (any Error)?) -> Ending {
        var ending = Ending()
        let root = Self.root(group)
        root.members.removeAll { $0 == member }
        if let failure, root.failure == nil { root.failure = failure }
        if root.members.isEmpty {
            (ending.published, ending.abandoned, ending.claims) = complete(root)
            ending.outcome = .published
        } else if failure != nil {
            ending.outcome = .published
        }
        return ending
    }

    /// One look at whether `member`'s group has completed: done, or what to wait for. Call with the lock held.
    /// `blocksMainActor`: the caller would wait by blocking the main actor's thread, which the group's `async`
    /// members may need.
    func finishStep(_ member: Member, group: CreationGroup, blocksMainActor: Bool = false) -> Step<Outcome> {
        let root = Self.root(group)
        guard !root.isComplete else { return .done(.published) }
        let target = Target.completion(root)
        let (cycle, reach) = findCycle(from: member, waitingFor: target, own: root)
        switch cycle {
        case .none, .withinGroup, .merge:
            if blocksMainActor, reach.task {
                if root.failure == nil { root.failure = MainActorWait() }
                return .done(.wouldBlockMainActor)
            }
            // Nothing waits for a finished member but through its group: any cycle here goes through another
            // member, which finds it when it waits.
            return .wait(target)
        case .throughNesting:
            if root.failure == nil { root.failure = CoordinatorDeadlock() }
            return .done(.wouldDeadlock(detail: Self.nestedDetail))
        case .throughChildTask:
            if root.failure == nil { root.failure = CoordinatorDeadlock(description: Lineage.waitDetail) }
            return .done(.wouldDeadlock(detail: Lineage.waitDetail))
        }
    }

    /// The outcome the member reports at the end of `finish`, given its group's failure. Call with the lock held.
    func outcome(of ending: Ending, group: CreationGroup, failure: (any Error)?) -> Outcome {
        let outcome = ending.outcome ?? .published
        if case .published = outcome, failure == nil, let groupFailure = Self.root(group).failure {
            return .failed(groupFailure)
        }
        return outcome
    }

    /// Runs the release hooks of instances published into a closed container, and releases what the group's
    /// completion handed back: last, the containers it kept, whose deinit may run hooks too. Call without the lock.
    func release(_ ending: consuming Ending) {
        ReleasedInstance.run(ending.published.compactMap(\.released))
        ending.published = []
        ending.abandoned = []
        ending.claims = []
    }

    /// Publishes (or, after a failure, abandons) a group's claims once all of its members have finished. Wakes
    /// the resolutions waiting for them. Called with the lock held; what it hands back — the claims too, which keep
    /// their containers alive — is released after it.
    private func complete(
        _ group: CreationGroup
    ) -> (published: [InstanceStorage.Publication], abandoned: [StoredValue], claims: [CreationGroup.Claim]) {
        group.isComplete = true
        defer { lock.wakeAll() }
        let claims = group.claims
        group.claims = []
        for claim in claims {
            claim.storage.builder = nil
            claim.storage.isBuilt = false
        }
        if group.failure != nil {
            return ([], claims.compactMap { $0.storage.abandon() }, claims)
        }
        let inBuildOrder = claims.count == 1 ? claims : claims.sorted { $0.storage.sequence < $1.storage.sequence }
        return (inBuildOrder.map { $0.storage.publish() }, [], claims)
    }

    static func root(_ group: CreationGroup) -> CreationGroup {
        var group = group
        while let next = group.mergedInto { group = next }
        return group
    }

}

/// Resolutions that build permanent or weak instances together: a resolution that claimed something, and any that
/// merged with it (see ``CreationCoordinator``). Guarded by the coordinator's lock, which already makes accesses
/// exclusive: the runtime's exclusivity checks are off (measured: they were 350 instructions of each per-container build).
final class CreationGroup {
    /// Set when the group merged into another, which speaks for both from then on.
    @exclusivity(unchecked) var mergedInto: CreationGroup?
    /// The members that have not finished.
    @exclusivity(unchecked) var members: [CreationCoordinator.Member]
    /// The storages the members claimed and have not abandoned.
    @exclusivity(unchecked) var claims: [Claim] = []
    /// The error of the first member that failed.
    @exclusivity(unchecked) var failure: (any Error)?
    @exclusivity(unchecked) var isComplete = false

    init(_ member: CreationCoordinator.Member) {
        members = [member]
        // Room for a request's few claims at once. (Measured: growing one at a time was 450 instructions.)
        claims.reserveCapacity(4)
    }

    /// A storage a member claimed, and the container that keeps it, retained until the group completes. A member
    /// that fails, or whose task is cancelled while it waits, leaves at once, and its caller may drop the container
    /// it resolved in (a request's child) before the group publishes or abandons what that member built there —
    /// under that container's lock, which goes with it.
    struct Claim {
        let storage: InstanceStorage
        let keeper: Container
    }

    /// Makes the group the builder of `storage`, for `member`, and adds it to the claims. `isBuilt`: whether the
    /// member's factory has returned (a solo build the group takes over may have). Call with the coordinator's lock
    /// held, from a resolution that keeps the storage's container alive: the claimant's own look-up found it.
    func claim(_ storage: InstanceStorage, by member: CreationCoordinator.Member, isBuilt: Bool) {
        storage.builder = CreationCoordinator.Builder(group: self, member: member)
        storage.isBuilt = isBuilt
        claims.append(Claim(storage: storage, keeper: storage.owner))
    }
}

/// The failure of a group one of whose members could only wait forever.
struct CoordinatorDeadlock: Error, CustomStringConvertible {
    /// Why: through a resolution nested on one thread (the default), or up the lineage (``Lineage/waitDetail``).
    var description = CreationCoordinator.nestedDetail
}

/// The failure of a group whose member on the main actor would have blocked it waiting for the group's `async`
/// members.
struct MainActorWait: Error, CustomStringConvertible {
    var description: String { CreationCoordinator.mainActorDetail }
}
