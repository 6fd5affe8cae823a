internal import ArborPrimitives
internal import CArborSupport

/// One top-level `resolve` call: the state of the graph being built, and the ``Resolver`` its factories receive.
///
/// A resolution owns everything a graph needs while it is built, and nothing outlives it: the depth, the path of
/// services being built (for cycle detection and error messages), the graph-scoped instances, the queue of
/// deferred `initCompleted` hooks, and the permanent and weak storages it has claimed. It lives on one thread;
/// a resolver used from another thread, or after the resolution finished, starts a new resolution instead.
///
/// The flow of one resolve:
/// 1. look the key up, starting in the current context container (the one that began the resolution, or the
///    owner of the permanent or weak instance being built) and walking up its ancestors;
/// 2. let the scope decide: transient builds, graph shares per resolution, permanent and weak share through
///    the registration's ``InstanceStorage``;
/// 3. a build runs the factory one level deeper and queues the instance's hooks;
/// 4. when the outermost factory has returned, run the queued hooks in order, then publish the claimed
///    permanent and weak instances. On any error, abandon them instead.
///
/// Each thread keeps one finished resolution and reuses it for its next top-level resolve (``ResolutionPool``),
/// unless user code kept a reference to it — strong, `weak` or `unowned` — so a resolve allocates no resolution of
/// its own. A kept resolution is *detached* instead: it frees its buffers and from then on only starts new
/// resolutions in the container it began in (see ``detach(keptWeakly:)``).
final class Resolution: Resolver, @unchecked Sendable {
    /// The thread the resolution runs on; only it touches the state below.
    let thread: ThreadID
    /// A number no other resolution object had: with `State.serial`, names one top-level resolve
    /// (``ResolutionIdentity``).
    let uniqueID: Int
    /// An `async` resolution's own announcement of the tree it reads (``Reclamation``), held from its beginning to its
    /// end, across suspensions: no thread announces for it. `nil` for a synchronous one, which uses its thread's.
    let reader: Reclamation.Reader?
    /// Where a resolve made from another thread, or after the resolution finished, starts: the origin, kept as the
    /// user code kept this resolution (see ``detach(keptWeakly:)``). Behind a lock: another thread may read it while
    /// the resolution's own thread detaches it.
    private let outside = Protected.make(Outside())

    private struct Outside {
        var isDetached = false
        var strongOrigin: Container?
        weak var weakOrigin: Container?
    }
    /// Everything else, behind a pointer: the resolution is used from one thread only, so the dynamic exclusivity
    /// checks Swift makes on a class's stored properties buy nothing here (measured: they were a quarter of the
    /// cost of resolving a transient service without dependencies).
    let state: UncheckedCell<State>

    struct State {
        /// The container that began the resolution.
        /// Unretained, as `context` is, in every build: the caller of `resolve` keeps the container alive until the
        /// resolution ends, and then `detach` keeps it as long as a user keeps the resolution (measured: retaining
        /// and releasing both containers on every resolve was a tenth of a transient resolve). A finished resolution
        /// still refers to the last containers it resolved in, which may be gone, and never uses them.
        var origin: Unretained<Container>
        /// Counts the top-level resolves this object ran: with `uniqueID`, the current one's identity.
        var serial = 0
        /// The thread's ``ThreadContext/stackLimit``, where a nested resolve is refused.
        var stackLimit: UInt = 0
        /// The thread's context and look-up cache. Unretained in every build, and borrowed where used (measured:
        /// loading them from `unowned(unsafe)` properties retained and released each, two pairs per resolve): the
        /// thread keeps them while it runs, and a resolution touches them only while it runs on its thread; a
        /// detached one never does.
        var threadContext: Unretained<ThreadContext>
        var cache: Unretained<LookupCache>
        /// The thread's active resolution when this one began, restored when it finishes.
        var previousActive: Unretained<Resolution>?
        var maxDepth = 0
        var phase = Phase.finished
        /// Set when the resolution begins: its factories get it as their resolver, and may keep it.
        var lentOut = false
        /// Where look-ups start: the origin, or the container that owns the permanent or weak instance being built.
        var context: Unretained<Container>
        /// The depth of the instance whose factory or hook is running; nested resolves go one deeper.
        var depth = -1
        /// The services whose factories are running, outermost first.
        var building = UnsafeStack<Frame>()
        /// While a hook runs: the path that created its instance, in `hooks`. Prefixes `building` in error paths.
        var hookPath = HookQueue.PathRange()
        var graph = GraphInstances()
        /// The `initCompleted` hooks waiting for the outermost factory to return, in the order they run.
        var hooks = HookQueue()
        /// The creation group of the permanent and weak instances this resolution builds; `nil` until it claims
        /// one (``CreationCoordinator``).
        var group: CreationGroup?
        /// The permanent and weak instances this resolution builds while it has no group: nothing else needed them
        /// yet (``SoloClaims``).
        var solo = SoloClaims()
        /// The leak trackers and validation observer watching the origin. Usually `nil`: then they cost one check
        /// per resolve.
        var diagnostics: Diagnostics?
        /// While a hook runs: how its instance is kept.
        var hookStorage = ObjectScope.Storage.none
        /// The thread as the ``CreationCoordinator`` knows it: the resolution's own, or — for a resolution that
        /// begins inside the synchronous code of an `async` resolution — that one's (``ThreadContext/hostedAsync``).
        var coordinationThread: ThreadID
        /// Owned by a task, not a thread: an `async` resolution (Resolution+Async.swift).
        var isAsync = false
        /// For an `async` resolution: the thread whose cache, context and stack limit the fields above hold now.
        var boundThread: ThreadID
        /// For an `async` resolution, while it runs: the task that runs it, the only one it joins. An address, only
        /// compared (``currentTask()``).
        var ownerTask: UnsafeRawPointer?
    }

    enum Phase {
        case active
        /// Releasing what it kept. A `deinit` that resolves now starts a new resolution instead of reusing this one.
        case finishing
        case finished
        /// Kept by user code after it finished: its buffers are freed, and it never runs again.
        case detached
    }

    /// A service whose factory is running. Trivial, so pushing and popping one retains nothing.
    struct Frame {
        /// Unretained: the container keeps it (see ``LookupCache``).
        let entry: Unretained<ServiceEntry>
        let slot: GraphSlot
        let storage: ObjectScope.Storage

        var key: ServiceKey { entry.withObject { $0.key } }
    }

    init(origin: Container) {
        let context = ThreadContext.current
        state = UncheckedCell(
            State(
                origin: Unretained(origin, retainedInChecks: false), stackLimit: context.stackLimit,
                threadContext: Unretained(context, retainedInChecks: false),
                cache: Unretained(context.cache, retainedInChecks: false),
                context: Unretained(origin, retainedInChecks: false), coordinationThread: .current,
                boundThread: .current))
        thread = .current
        uniqueID = UniqueNumber.next()
        reader = nil
    }

    /// An `async` resolution: owned by the task that runs it, not by a thread (Resolution+Async.swift). Its thread is
    /// an identity no thread has, and it announces its reads of the registries itself, for as long as it runs.
    init(asyncOrigin origin: Container) {
        let context = ThreadContext.current
        let number = UniqueNumber.next()
        let unbound = ThreadID.unbound(number)
        state = UncheckedCell(
            State(
                origin: Unretained(origin, retainedInChecks: false), stackLimit: context.stackLimit,
                threadContext: Unretained(context, retainedInChecks: false),
                cache: Unretained(context.cache, retainedInChecks: false),
                context: Unretained(origin, retainedInChecks: false), coordinationThread: unbound,
                isAsync: true, boundThread: .current))
        thread = unbound
        uniqueID = number
        reader = Reclamation.Reader()
    }

    deinit {
        if state.value.phase != .detached { deallocateBuffers() }
        state.deallocate()
    }

    /// Runs `body` with the thread's look-up cache, borrowed.
    @inline(__always)
    func withCache<Result>(_ body: (LookupCache) throws -> Result) rethrows -> Result {
        try state.value.cache.withObject(body)
    }

    private func deallocateBuffers() {
        state.value.building.deallocate()
        state.value.graph.deallocate()
        state.value.hooks.deallocate()
    }

    /// The container that began the resolution.
    var origin: Container { state.value.origin.object }

    /// Whether the resolution is finished and free for the next top-level resolve on its thread.
    var isIdle: Bool { state.value.phase == .finished }

    /// Whether factories or hooks got the resolution as their resolver since the last call: then one of them may
    /// have kept it. Resets the answer.
    func wasLentOut() -> Bool {
        defer { state.value.lentOut = false }
        return state.value.lentOut
    }

    /// Takes a finished resolution that user code kept out of service for good: it frees its buffers, and from now
    /// on every resolve through it starts a new resolution in its origin — never in another container.
    ///
    /// Kept strongly, it keeps the origin alive. Kept only `weak` or `unowned`, the origin keeps *it* alive
    /// instead (``Container/keep(_:)``), and it holds the origin weakly: it stays usable as long as its container
    /// lives, and a resolve through it after the container is gone throws.
    func detach(keptWeakly: Bool) {
        let origin = state.value.origin.object
        state.value.phase = .detached
        deallocateBuffers()
        outside.withLock { outside in
            outside.isDetached = true
            if keptWeakly {
                outside.weakOrigin = origin
            } else {
                outside.strongOrigin = origin
            }
        }
        if keptWeakly { origin.keep(self) }
    }

    /// The container a resolve that does not join this resolution starts in: the origin, unless it is gone.
    func originForNewResolution(_ key: @autoclosure () -> ServiceKey) throws -> Container {
        let origin = outside.withLock { outside -> Container? in
            guard outside.isDetached else { return state.value.origin.object }  // Alive while the resolution runs.
            return outside.strongOrigin ?? outside.weakOrigin
        }
        guard let origin else {
            let key = key()
            throw ResolutionError(
                .containerClosed, key: key, path: [key],
                detail: """
                    The container this resolver's resolution began in no longer exists. A resolver kept weak or \
                    unowned resolves only as long as its container lives; keep the container, or resolve a \
                    Provider instead of keeping the resolver.
                    """)
        }
        return origin
    }

    /// Names the top-level resolve running now (see ``ResolutionIdentity``).
    var identity: ResolutionIdentity { ResolutionIdentity(resolution: uniqueID, serial: state.value.serial) }

    func begin(
        in container: Container,
        maxDepth: Int,
        diagnostics: Diagnostics?
    ) {
        if diagnostics != nil { state.value.diagnostics = diagnostics }  // `finish()` left it nil.
        state.value.origin = Unretained(container, retainedInChecks: false)
        state.value.context = state.value.origin
        state.value.maxDepth = maxDepth
        state.value.depth = -1
        state.value.phase = .active
        state.value.lentOut = true
        state.value.serial &+= 1
        state.value.threadContext.withObject { context in
            state.value.previousActive = context.active
            context.active = Unretained(self, retainedInChecks: false)
            state.value.coordinationThread = context.hostedAsync ?? thread
        }
    }

    /// Completes a resolution whose outermost resolve returned: runs the hooks it queued, then publishes the
    /// permanent and weak instances it built, then finishes. If that throws, call `failed`.
    @inline(__always)
    func complete(_ key: ServiceKey) throws {
        if !state.value.hooks.isEmpty { try runPendingHooks() }
        if state.value.group != nil || !state.value.solo.isEmpty { try publish(key: key) }
        finish()
    }

    /// Publishes the permanent and weak instances this resolution built: its solo builds at once, and its part in its
    /// creation group once the whole group has finished. Throws if another member failed, or waiting for the others
    /// would never end.
    func publish(key: ServiceKey) throws {
        let group = state.value.group
        state.value.group = nil
        switch CreationCoordinator.shared.finish(member, group: group, solo: &state.value.solo, failure: nil) {
        case .published:
            return
        case .failed(let failure):
            throw groupFailure(failure, key: key)
        case .wouldDeadlock:
            throw error(.circularDependency, key: key, detail: CreationCoordinator.nestedDetail)
        case .wouldBlockMainActor:
            throw error(.asyncRequired, key: key, detail: CreationCoordinator.mainActorDetail)
        }
    }

    /// Ends a resolution that failed: its creation group fails, and abandons the permanent and weak instances its
    /// members claimed. Finishes, and returns the error to throw.
    func failed(_ error: any Error) -> any Error {
        if state.value.group != nil || !state.value.solo.isEmpty {
            let group = state.value.group
            state.value.group = nil
            _ = CreationCoordinator.shared.finish(member, group: group, solo: &state.value.solo, failure: error)
        }
        finish()
        return error
    }

    /// How the coordinator knows this resolution.
    var member: CreationCoordinator.Member {
        CreationCoordinator.Member(id: ObjectIdentifier(self), thread: state.value.coordinationThread)
    }

    /// The error to throw when another member of the creation group failed: its own `ResolutionError`, which says
    /// what failed and where; `.circularDependency` when waiting for the group would never have ended; and for any
    /// other error of another member's — its task was cancelled — `.factoryFailed` wrapping it, saying that the
    /// instances built together were dropped.
    func groupFailure(_ failure: any Error, key: ServiceKey) -> any Error {
        if failure is ResolutionError { return failure }
        if failure is CoordinatorDeadlock {
            return error(.circularDependency, key: key, detail: CreationCoordinator.nestedDetail)
        }
        if failure is MainActorWait {
            return error(.asyncRequired, key: key, detail: CreationCoordinator.mainActorDetail)
        }
        return self.failure(
            failure, key: key, path: path() + [key],
            detail: """
                another resolution that built the same cycle of instances together with this one failed, so none of \
                them is kept (resolve again)
                """)
    }

    /// Drops every instance the resolution kept, so a resolver captured by a factory keeps nothing alive. Keeps
    /// the capacity of its buffers for the next resolution on this thread.
    /// (`hookPath` is empty already: running the hooks restores it, also when one throws.)
    @inline(__always)
    func finish() {
        state.value.phase = .finishing
        if !state.value.graph.isEmpty { state.value.graph.removeAll() }
        if !state.value.hooks.isEmpty { state.value.hooks.removeAll() }
        if !state.value.building.isEmpty { state.value.building.removeAll() }
        if state.value.diagnostics != nil { state.value.diagnostics = nil }
        state.value.threadContext.withObject { $0.active = state.value.previousActive }
        state.value.phase = .finished
    }

    /// Whether a resolve through this resolver joins the resolution. `false` on another thread or after the
    /// resolution finished: then it starts a new one.
    func isUsable() throws -> Bool {
        // An `async` resolution's thread is no thread's: it joins from its own task (Resolution+Async.swift).
        guard thread == .current else { return isUsableByCurrentTask() }
        switch state.value.phase {
        case .active: return true
        case .finishing, .finished, .detached: return false
        }
    }

    // MARK: Building one level deeper

    /// Starts building `frame` at `depth`, unless its instance is already being built further up (a cycle), or the
    /// thread's stack is nearly used up. Returns the depth to go back to with `leave(toDepth:)`.
    ///
    /// The stack check compares this frame's address with the thread's limit: one comparison per nested build, so
    /// a deep graph on a thread with a small stack throws `.depthLimitExceeded` instead of overflowing.
    @inline(__always)
    func enter(_ frame: Frame, key: ServiceKey, depth: Int) throws -> Int {
        if UInt(carbor_frame_address()) < state.value.stackLimit { throw stackExhaustedError(key, depth: depth) }
        if state.value.building.elements.contains(where: { $0.slot == frame.slot }) {
            throw error(.circularDependency, key: key)
        }
        state.value.building.push(frame)
        defer { state.value.depth = depth }
        return state.value.depth
    }

    @inline(__always)
    func leave(toDepth outerDepth: Int) {
        state.value.building.pop()
        state.value.depth = outerDepth
    }
}
