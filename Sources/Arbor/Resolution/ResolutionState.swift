internal import ArborPrimitives

/// What a resolution knows while it runs. Its fields are private to this file: the engine reaches them through the
/// operations below, each of which states its rule, so no other file can break one by touching a field.
///
/// It lives in an ``UncheckedCell``: a resolution is used from one thread (or one task) at a time, so the runtime's
/// exclusivity checks on a class's stored properties would buy nothing (measured: they were a quarter of the cost of
/// resolving a transient service without dependencies).
struct ResolutionState {
    /// The container that began the resolution. Unretained, as `context` is, in every build: the caller of
    /// `resolve` keeps the container alive until the resolution ends, and then `detach` keeps it as long as a user
    /// keeps the resolution (measured: retaining and releasing both containers on every resolve was a tenth of a
    /// transient resolve). A finished resolution still refers to the last containers it resolved in, which may be
    /// gone, and never uses them.
    fileprivate var origin: Unretained<Container>
    /// Counts the top-level resolves this object ran: with the resolution's number, the current one's identity.
    fileprivate var serial = 0
    /// Where the thread's stack ends: a nested resolve is refused below it.
    fileprivate var stackLimit: StackLimit
    /// The thread's context and look-up cache. Unretained in every build, and borrowed where used (measured: loading
    /// them from `unowned(unsafe)` properties retained and released each, two pairs per resolve): the thread keeps
    /// them while it runs, and a resolution touches them only while it runs on its thread; a detached one never does.
    fileprivate var threadContext: Unretained<ThreadContext>
    fileprivate var cache: Unretained<LookupCache>
    /// The thread's active resolution when this one began, restored when it finishes.
    fileprivate var previousActive: Unretained<Resolution>?
    fileprivate var maxDepth = 0
    fileprivate var phase = Resolution.Phase.finished
    /// Set when the resolution begins: its factories get it as their resolver, and may keep it.
    fileprivate var lentOut = false
    /// Where look-ups start: the origin, or the container that owns the permanent or weak instance being built.
    fileprivate var context: Unretained<Container>
    /// The depth of the instance whose factory or hook is running; nested resolves go one deeper.
    fileprivate var depth = -1
    /// The services whose factories are running, outermost first.
    fileprivate var building = UnsafeStack<Resolution.Frame>()
    /// While a hook runs: the path that created its instance, in `hooks`. Prefixes `building` in error paths.
    fileprivate var hookPath = HookQueue.PathRange()
    /// While a hook runs: how its instance is kept.
    fileprivate var hookStorage = ObjectScope.Storage.none
    fileprivate var graph = GraphInstances()
    /// The `initCompleted` hooks waiting for the outermost factory to return, in the order they run.
    fileprivate var hooks = HookQueue()
    /// The permanent, weak and per-container instances this resolution claimed (``CreationCoordinator``).
    fileprivate var claims = Claims()
    /// What the top-level resolve's read of the found registration's held instance, before it began, came to: the
    /// rules at depth 0 need not read it again (see ``TopLevelRead``).
    fileprivate var topLevelRead = TopLevelRead.notRead
    /// The observers and validation watching the origin. Usually `nil`: then they cost one check per resolve.
    fileprivate var diagnostics: Diagnostics?
    /// What the observers are told, while observers watch the running resolve (``Observation``). Usually `nil`.
    fileprivate var observation: Observation?
    /// The thread as the ``CreationCoordinator`` knows it, from `begin` on (`coordinationThreadAtBegin`): the
    /// resolution's own; for an `async` one, its task's; for one that begins inside the synchronous code of an
    /// `async` resolution, that one's (``ThreadContext/hostedAsync``).
    fileprivate var coordinationThread: ThreadID
    /// Owned by a task, not a thread: an `async` resolution.
    fileprivate var isAsync: Bool
    /// For an `async` resolution: the thread whose cache, context and stack limit the fields above hold now.
    fileprivate var boundThread: ThreadID
    /// For an `async` resolution, while it runs: the task that runs it, the only one it joins. Only compared.
    fileprivate var ownerTask: UnsafeRawPointer?
    /// For an `async` resolution: how many of its `async` factories and hooks it awaits now (nested ones count).
    fileprivate var userAwaits = 0
    /// For an `async` resolution: whether the coordinator knows it awaits them holding claims (``awaitsHolding``).
    fileprivate var isAwaitingKnown = false

    init(origin: Container, context threadContext: ThreadContext, thread: ThreadID, isAsync: Bool) {
        self.origin = Unretained(origin, retainedInChecks: false)
        context = self.origin
        stackLimit = threadContext.stackLimit
        self.threadContext = Unretained(threadContext, retainedInChecks: false)
        cache = Unretained(threadContext.cache, retainedInChecks: false)
        coordinationThread = thread
        self.isAsync = isAsync
        boundThread = .current
    }
}

/// What a resolution has claimed from the ``CreationCoordinator``: its creation group, `nil` until it needs one, and
/// the instances it builds while it has none (``SoloClaims``).
struct Claims {
    var group: CreationGroup?
    var solo = SoloClaims()

    /// Whether anything is claimed: then the resolution publishes or abandons it when it ends.
    var isEmpty: Bool { group == nil && solo.isEmpty }
}

extension Resolution {
    // MARK: The thread

    /// Runs `body` with the thread's look-up cache, borrowed.
    @inline(__always)
    func withCache<Result>(_ body: (LookupCache) throws -> Result) rethrows -> Result {
        try state.value.cache.withObject(body)
    }

    /// The hazard word of the thread the resolution runs on now, which its look-up cache's reader has: what protects
    /// a permanent instance read without a lock (``PublishedValue``).
    var threadHazard: Reclamation.Hazard {
        withCache { $0.reader.hazard }
    }

    /// Binds an `async` resolution to the thread it runs on now: its look-up cache, its context and its stack limit.
    /// Call after each suspension, before anything that uses them.
    @inline(__always)
    func rebind() {
        let current = ThreadID.current
        guard state.value.boundThread != current else { return }
        let context = ThreadContext.current
        state.value.boundThread = current
        state.value.threadContext = Unretained(context, retainedInChecks: false)
        state.value.cache = Unretained(context.cache, retainedInChecks: false)
        state.value.stackLimit = context.stackLimit
    }

    /// Runs synchronous code of this `async` resolution — a factory, a hook, the synchronous engine — on the current
    /// thread: meanwhile the thread's active resolution is this one (a `Lazy` or `Provider` made in it joins it), and
    /// a resolution that begins on the thread is suspended under it (``ThreadContext/hostedAsync``). Throws
    /// ``AwaitBuildRequest`` instead of what the code returned or threw if a resolve in it gave a wait up: call it
    /// in ``awaitingBuildsInstead(inRun:_:)``.
    @inline(__always)
    func hostingSynchronousCode<Result>(_ body: () throws -> Result) throws -> Result {
        try state.value.threadContext.withObject { context in
            let saved = (context.active, context.hostedAsync)
            let hooksBefore = state.value.hooks.count
            context.active = Unretained(self, retainedInChecks: false)
            context.hostedAsync = state.value.coordinationThread
            defer { (context.active, context.hostedAsync) = saved }
            // The check is written twice, for the value and the error. One `Swift.Result { try body() }` and one check
            // after it, tried, made `async_resolve_of_sync` 8% slower: 13,116 → 14,218 instructions.
            do {
                let result = try body()
                if context.awaitedBuild != nil { throw AwaitBuildRequest.take(from: context, hooksBefore: hooksBefore) }
                return result
            } catch {
                if context.awaitedBuild != nil { throw AwaitBuildRequest.take(from: context, hooksBefore: hooksBefore) }
                throw error
            }
        }
    }

    // MARK: Awaiting factories and hooks

    /// An `async` resolution starts to await an `async` or main-actor factory, or an `async` hook's work: while it
    /// holds claims, the coordinator knows it may be suspended (``CreationCoordinator/Waiter``). Pair with
    /// `endUserAwait()`. The pair costs an `async` factory about 33 instructions while nothing is claimed
    /// (`async_graph_10`, ten factories: 19,945 → 20,278).
    @inline(__always)
    func beginUserAwait() {
        state.value.userAwaits += 1
        if hasClaims { awaitsHolding() }
    }

    /// Ends `beginUserAwait()`: once it awaits none, the coordinator no longer counts it as suspended.
    @inline(__always)
    func endUserAwait() {
        state.value.userAwaits -= 1
        if state.value.userAwaits == 0, state.value.isAwaitingKnown { awaitsNoMore() }
    }

    /// Tells the coordinator, once, that the resolution holds claims while it awaits a factory or hook: from the
    /// start of the await, or from a claim it keeps meanwhile (an instance whose hooks have not run: ``kept``).
    @inline(never)
    func awaitsHolding() {
        guard !state.value.isAwaitingKnown else { return }
        state.value.isAwaitingKnown = true
        CreationCoordinator.shared.beginAwaiting(member)
    }

    @inline(never)
    private func awaitsNoMore() {
        state.value.isAwaitingKnown = false
        CreationCoordinator.shared.endAwaiting(member)
    }

    /// A claimed build was recorded without being published (its hooks have not run): in an `async` resolution
    /// that awaits a factory or hook now, the coordinator counts it as suspended from now on.
    @inline(__always)
    func kept() {
        if state.value.isAsync, state.value.userAwaits > 0, !state.value.isAwaitingKnown { awaitsHolding() }
    }

    // MARK: Beginning and ending

    /// The container that began the resolution.
    var origin: Container { state.value.origin.object }

    /// `origin`, unretained: the caller of the top-level resolve keeps it alive until the resolution ends.
    @inline(__always)
    var originReference: Unretained<Container> { state.value.origin }

    /// Whether it is an `async` resolution, owned by a task.
    var isAsync: Bool { state.value.isAsync }

    /// Whether this synchronous resolution began while another ran on its thread: in a factory or hook of that one,
    /// which called a container's `resolve` instead of its resolver.
    var beganInsideAnother: Bool { !state.value.isAsync && state.value.previousActive != nil }

    /// Whether it began inside the synchronous code of an `async` resolution, which hosts it.
    var isHostedByAsync: Bool { !state.value.isAsync && state.value.coordinationThread != thread }

    /// Whether the resolution is finished and free for the next top-level resolve on its thread.
    var isIdle: Bool { state.value.phase == .finished }

    /// Whether it is running: a resolve through it joins it (from its thread or task).
    var isActive: Bool { state.value.phase == .active }

    /// Whether factories or hooks got the resolution as their resolver since the last call: then one of them may
    /// have kept it. Resets the answer.
    @inline(__always)
    func wasLentOut() -> Bool {
        defer { state.value.lentOut = false }
        return state.value.lentOut
    }

    /// Names the top-level resolve running now (see ``ResolutionIdentity``).
    var identity: ResolutionIdentity { ResolutionIdentity(resolution: uniqueID, serial: state.value.serial) }

    /// Starts a top-level resolve of `key` in `container`. A synchronous resolution becomes its thread's active one;
    /// an `async` one is owned by the current task instead. With `diagnostics`, it tells the observers, if any.
    func begin(
        _ key: ServiceKey, in container: Container, maxDepth: Int, diagnostics: Diagnostics?,
        topLevelRead: TopLevelRead = .notRead
    ) {
        state.value.topLevelRead = topLevelRead
        state.value.origin = Unretained(container, retainedInChecks: false)
        state.value.context = state.value.origin
        state.value.maxDepth = maxDepth
        state.value.depth = -1
        state.value.phase = .active
        state.value.lentOut = true
        state.value.serial &+= 1
        state.value.coordinationThread = coordinationThreadAtBegin
        if state.value.isAsync {
            state.value.ownerTask = CurrentTask.address
        } else {
            state.value.threadContext.withObject { context in
                state.value.previousActive = context.active
                context.active = Unretained(self, retainedInChecks: false)
            }
        }
        if let diagnostics {
            state.value.diagnostics = diagnostics  // `finish()` left it nil.
            // Once the resolution is active: an observer that resolves starts a resolution of its own, which no
            // observer sees (`Observation.report`).
            if !diagnostics.observers.isEmpty, !Observation.isReporting { beginObservation(key, in: container) }
        }
    }

    /// Drops every instance the resolution kept, so a resolver captured by a factory keeps nothing alive. Keeps
    /// the capacity of its buffers for the next resolution on this thread. (`hookPath` is empty already: running the
    /// hooks restores it, also when one throws.)
    @inline(__always)
    func finish() {
        state.value.phase = .finishing
        if !state.value.graph.isEmpty { state.value.graph.removeAll() }
        if !state.value.hooks.isEmpty { state.value.hooks.removeAll() }
        if !state.value.building.isEmpty { state.value.building.removeAll() }
        if state.value.diagnostics != nil {
            state.value.diagnostics = nil
            if state.value.observation != nil { endObservation(nil) }
        }
        if state.value.isAsync {
            internalInvariant(state.value.userAwaits == 0, "a finished resolution awaits no factory")
            state.value.ownerTask = nil
        } else {
            state.value.threadContext.withObject { $0.active = state.value.previousActive }
        }
        state.value.phase = .finished
    }

    /// Tells the observers that the resolve ended, with `error` if it failed; does nothing if none watch, or if they
    /// were told already. A resolve that fails calls it with its error before `finish()`.
    @inline(never)
    func endObservation(_ error: (any Error)?) {
        let observation = state.value.observation
        state.value.observation = nil
        observation?.finished(error)
    }

    /// Takes the finished resolution out of service for good: its buffers are freed (``detach(keptWeakly:)``).
    func retire() {
        state.value.phase = .detached
        deallocateBuffers()
    }

    func deallocateBuffers() {
        state.value.building.deallocate()
        state.value.graph.deallocate()
        state.value.hooks.deallocate()
    }

    /// Whether the resolution was taken out of service (``retire()``).
    var isRetired: Bool { state.value.phase == .detached }

    /// Whether a resolve through this resolver joins the resolution: on its own thread while it runs, or — for an
    /// `async` resolution — from the task that runs it (which binds it to the current thread). Otherwise it starts a
    /// new one.
    @inline(__always)
    func isUsable() -> Bool {
        guard thread == .current else { return isUsableByCurrentTask() }
        return state.value.phase == .active
    }

    /// `isUsable` for an `async` resolution, used from another thread than its own: only from the task that runs it.
    func isUsableByCurrentTask() -> Bool {
        guard state.value.isAsync, state.value.phase == .active else { return false }
        guard let task = CurrentTask.address, task == state.value.ownerTask else { return false }
        rebind()
        return true
    }

    // MARK: Where and how deep

    /// Where look-ups start at this point of the resolution: the origin, or the container that owns the instance
    /// being built, or the context of the hook that runs.
    @inline(__always)
    var context: Unretained<Container> { state.value.context }

    /// `context`, as the container.
    var currentContext: Container { state.value.context.object }

    /// Makes `owner` the context — a claimed instance is built from the container that keeps it — and returns the
    /// context to restore afterwards.
    @inline(__always)
    func switchContext(to owner: Unretained<Container>) -> Unretained<Container> {
        defer { state.value.context = owner }
        return state.value.context
    }

    @inline(__always)
    func restoreContext(_ saved: Unretained<Container>) {
        state.value.context = saved
    }

    /// Resolves through `context` for a wrapper made there (a `Lazy` or `Provider`), then restores the context.
    @inline(__always)
    func withContext<Result>(_ context: Unretained<Container>, _ body: () throws -> Result) rethrows -> Result {
        let saved = switchContext(to: context)
        defer { restoreContext(saved) }
        return try body()
    }

    /// The depth of the service being built or wired now; a nested resolve goes one deeper.
    @inline(__always)
    var depth: Int { state.value.depth }

    /// The depth limit of the container the resolution began in.
    var maxDepth: Int { state.value.maxDepth }

    /// The rule of depth: a resolve at `depth` past the limit throws `.depthLimitExceeded`.
    @inline(__always)
    func checkDepth(_ depth: Int, _ key: ServiceKey) throws {
        guard depth <= state.value.maxDepth else { throw depthLimitError(key) }
    }

    // MARK: Building one level deeper

    /// Starts building `frame` at `depth`, unless its instance is already being built further up (a cycle), or the
    /// thread's stack is nearly used up. Returns the depth to go back to with `leave(toDepth:)`.
    ///
    /// The stack check compares this frame's address with the thread's limit: one comparison per nested build, so
    /// a deep graph on a thread with a small stack throws `.depthLimitExceeded` instead of overflowing.
    @inline(__always)
    func enter(_ frame: Frame, key: ServiceKey, depth: Int) throws -> Int {
        if state.value.stackLimit.isReached { throw stackExhaustedError(key, depth: depth) }
        if state.value.building.elements.contains(where: { $0.slot == frame.slot }) {
            throw error(.circularDependency, key: key)
        }
        state.value.building.push(frame)
        defer { state.value.depth = depth }
        return state.value.depth
    }

    /// `enter`, for the outermost build of a transient registration without hooks or arguments: at depth 0 with
    /// nothing else being built, neither a cycle nor the depth limit can stop it. The stack can: a factory that calls
    /// a container's `resolve` of its own service starts each round at depth 0 of a resolution of its own.
    @inline(__always)
    func enterOutermost(_ frame: Frame, key: ServiceKey) throws {
        if state.value.stackLimit.isReached { throw stackExhaustedError(key, depth: 0) }
        state.value.building.push(frame)
        state.value.depth = 0
    }

    @inline(__always)
    func leave(toDepth outerDepth: Int) {
        state.value.building.pop()
        state.value.depth = outerDepth
    }

    /// The services whose factories are running, outermost first.
    var frames: UnsafeMutableBufferPointer<Frame> { state.value.building.elements }

    // MARK: The graph

    /// Where the graph keeps the instance of `slot`, if it has one.
    @inline(__always)
    func graphPosition(of slot: GraphSlot) -> Int? {
        state.value.graph.position(of: slot)
    }

    /// The graph's instance at `position`, which was kept as a `Service`.
    @inline(__always)
    func graphInstance<Service>(at position: Int, as _: Service.Type) -> Service {
        state.value.graph.instance(at: position, as: Service.self)
    }

    /// Keeps `instance` for `slot` for the rest of the resolution, and returns where.
    @inline(__always)
    func keepInGraph<Service>(_ instance: Service, for slot: GraphSlot) -> Int {
        state.value.graph.add(instance, for: slot)
    }

    // MARK: Hooks

    /// Whether hooks wait for the outermost factory to return.
    @inline(__always)
    var hasPendingHooks: Bool { !state.value.hooks.isEmpty }

    /// Queues the hooks of a new instance of `entry`, built at `depth`. `graphPosition` is where the graph keeps
    /// the instance, if it does. `builtLast` says that the instance's own frame has left `building` already: its
    /// registration ends the path.
    func queueHooks<Service>(
        of entry: Unretained<ServiceEntry>, instance: Service, depth: Int, graphPosition: Int?, builtLast: Bool
    ) {
        let context = state.value.context
        state.value.hooks.enqueue(
            entry, instance: instance, graphPosition: graphPosition, depth: depth, context: context,
            retainingContext: !context.refers(to: origin), path: state.value.hookPath, building: state.value.building,
            appending: builtLast ? entry : nil)
    }

    /// Drops the hooks queued since there were `mark` of them for transient instances that only the queue holds
    /// (``HookQueue/dropOrphans(since:)``).
    func dropOrphanedHooks(since mark: Int) {
        state.value.hooks.dropOrphans(since: mark)
    }

    /// Switches the resolution to the next queued hook's instance — its context, depth and path — and returns it
    /// with what to restore; `nil` when every hook has run. `next` counts the hooks taken.
    func beginHook(_ next: inout Int) -> HookRun? {
        var pending: HookQueue.Pending
        repeat {
            guard next < state.value.hooks.count else { return nil }
            pending = state.value.hooks[next]
            next += 1
        } while pending.isDropped
        let run = HookRun(
            pending: pending,
            saved: (state.value.context, state.value.depth, state.value.hookPath, state.value.hookStorage),
            count: pending.entry.withObject { max(1, $0.hooks.count) })
        // Its start kept in the observation, not here: a `ContinuousClock.Instant?` in `HookRun`, a type of another
        // module whose layout is known only at run time, made every hook run copy it through value witnesses
        // (measured: circular_pair 3,108 → 3,525 instructions).
        if let observation = state.value.observation { observation.startTiming() }
        state.value.context = pending.context
        state.value.depth = pending.depth
        state.value.hookPath = pending.path
        state.value.hookStorage = pending.storage
        return run
    }

    /// Restores what `beginHook` switched, and tells the observers, if any, that the hooks ran.
    func endHook(_ run: HookRun) {
        if let observation = state.value.observation {
            observation.hooksRan(run.pending.entry.object, depth: state.value.depth)
        }
        (state.value.context, state.value.depth, state.value.hookPath, state.value.hookStorage) = run.saved
    }

    /// Where the instance of a pending hook is now. Found again for each hook: a hook may add instances, which can
    /// move the others.
    func location(of pending: HookQueue.Pending) -> ValueStack.Location {
        state.value.hooks.location(of: pending, in: state.value.graph)
    }

    /// The keys of a path kept in the hook queue.
    func keys(of path: HookQueue.PathRange) -> [ServiceKey] {
        state.value.hooks.keys(of: path)
    }

    /// The path of the hook running now, and how its instance is kept (`.none` outside hooks).
    var hookPath: (keys: [ServiceKey], storage: ObjectScope.Storage) {
        (keys(of: state.value.hookPath), state.value.hookStorage)
    }

    // MARK: Claims and watchers

    /// How the coordinator knows this resolution.
    var member: CreationCoordinator.Member {
        CreationCoordinator.Member(id: ObjectIdentifier(self), thread: state.value.coordinationThread)
    }

    /// How the coordinator will know this idle resolution once `begin` has run: what a top-level resolve claims by
    /// before it begins (``TopLevelRead/claimed(_:)``).
    var memberAtBegin: CreationCoordinator.Member {
        CreationCoordinator.Member(id: ObjectIdentifier(self), thread: coordinationThreadAtBegin)
    }

    /// The thread the coordinator knows a resolution by from `begin` on: for an `async` one, its task's
    /// (``ThreadID/task(_:)``), which an `async` resolve begun in one of its factories shares, as a nested resolve
    /// shares its thread's: waiting for what the outer one builds is then a cycle, not a wait for ever; for a
    /// synchronous one, the `async` resolution whose synchronous code it begins in, if any, else its thread's.
    private var coordinationThreadAtBegin: ThreadID {
        if state.value.isAsync { return CurrentTask.address.map(ThreadID.task) ?? thread }
        return state.value.threadContext.withObject { $0.hostedAsync ?? thread }
    }

    /// Runs `body` with what the resolution claimed: the coordinator's operations change it in place.
    @inline(__always)
    func withClaims<Result>(_ body: (inout Claims) throws -> Result) rethrows -> Result {
        try body(&state.value.claims)
    }

    /// What the top-level resolve's read before it began came to (`begin`'s `topLevelRead`). Taking it leaves
    /// `.notRead`: a claim is built once.
    @inline(__always)
    func takeTopLevelRead() -> TopLevelRead {
        defer { state.value.topLevelRead = .notRead }
        return state.value.topLevelRead
    }

    /// Whether the resolution claimed anything it must publish or abandon when it ends.
    @inline(__always)
    var hasClaims: Bool { !state.value.claims.isEmpty }

    /// What watches the resolution: observers, `validate()`'s validation. Usually `nil`.
    @inline(__always)
    var diagnostics: Diagnostics? { state.value.diagnostics }

    /// What the observers are told, while observers watch the running resolve. Usually `nil`.
    @inline(__always)
    var observation: Observation? { state.value.observation }

    /// Tells the observers that a resolve of `key` begins in `container`. Out of line: see ``Observation``.
    @inline(never)
    private func beginObservation(_ key: ServiceKey, in container: Container) {
        guard let diagnostics = state.value.diagnostics else { return }
        state.value.observation = Observation(
            observers: diagnostics.observers, key: key, container: container,
            resolve: ResolveID(resolution: uniqueID, serial: state.value.serial), isAsync: state.value.isAsync)
    }
}

/// A hook about to run, with the resolution's position to restore after it (``Resolution/beginHook(_:)``).
struct HookRun {
    let pending: HookQueue.Pending
    let saved: (Unretained<Container>, Int, HookQueue.PathRange, ObjectScope.Storage)
    /// How many hooks the instance has.
    let count: Int
}
