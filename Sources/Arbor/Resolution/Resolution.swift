internal import ArborPrimitives

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
/// unless a factory kept a reference to it, so a resolve allocates no resolution of its own.
final class Resolution: Resolver, @unchecked Sendable {
    /// The thread the resolution runs on; only it touches the state below.
    let thread: ThreadID
    /// The thread's look-up cache, shared by the resolutions that run on it.
    let cache: LookupCache
    /// Everything else, behind a pointer: the resolution is used from one thread only, so the dynamic exclusivity
    /// checks Swift makes on a class's stored properties buy nothing here (measured: they were a quarter of the
    /// cost of resolving a transient service without dependencies).
    private let state: UnsafeMutablePointer<State>

    private struct State {
        /// The container that began the resolution.
        /// `unowned(unsafe)`, and `context` unretained: the caller of `resolve` keeps the container alive until the
        /// resolution ends, and then `keepOrigin()` retains it if a factory kept the resolver (measured: retaining
        /// and releasing both containers on every resolve was a tenth of a transient resolve).
        unowned(unsafe) var origin: Container
        /// Set when the resolution outlives its `resolve` call, so a captured resolver still has its container.
        var retainedOrigin: Container?
        var maxDepth = 0
        var phase = Phase.finished
        /// Set when the resolution begins: its factories get it as their resolver, and may keep it.
        var lentOut = false
        /// Where look-ups start: the origin, or the container that owns the permanent or weak instance being built.
        var context: Unmanaged<Container>
        /// The depth of the instance whose factory or hook is running; nested resolves go one deeper.
        var depth = -1
        /// The services whose factories are running, outermost first.
        var building = UnsafeStack<Frame>()
        /// While a hook runs: the path that created its instance, in `paths`. Prefixes `building` in error paths.
        var hookPath = PathRange()
        var graph = GraphInstances()
        /// Instances whose hooks are queued, in the order their factories returned.
        var pendingHooks = UnsafeStack<PendingHook>()
        /// The instances of queued hooks that the graph does not keep.
        var hookInstances = ValueStack()
        /// The paths that created the instances of queued hooks: `PathRange`s point into it.
        var paths = UnsafeStack<Unmanaged<ServiceEntry>>()
        /// How many queued hooks retained their context.
        var retainedContexts = 0
        var claims: [InstanceStorage] = []
        /// The leak trackers and validation observer watching the origin. Usually `nil`: then they cost one check
        /// per resolve.
        var diagnostics: Diagnostics?
        /// While a hook runs: how its instance is kept.
        var hookStorage = ObjectScope.Storage.none
    }

    private enum Phase {
        case active
        /// Waiting for another thread would have deadlocked: unwind and let the top level retry.
        case aborted
        /// Releasing what it kept. A `deinit` that resolves now starts a new resolution instead of reusing this one.
        case finishing
        case finished
    }

    /// How a resolve calls its registration's factory, with the resolve's runtime arguments if any. Called with
    /// `nil` when nothing is registered under the key: then it derives the service (``DerivedService``) at the
    /// given depth, or throws ``NotDerivable``.
    typealias Invocation<Service> = (Unmanaged<ServiceEntry>?, Resolution, Int) throws -> Service

    /// A service whose factory is running. Trivial, so pushing and popping one retains nothing.
    private struct Frame {
        /// Unretained: the container keeps it (see ``LookupCache``).
        let entry: Unmanaged<ServiceEntry>
        let slot: GraphSlot
        let storage: ObjectScope.Storage

        var key: ServiceKey { entry._withUnsafeGuaranteedRef { $0.key } }
    }

    /// The hooks of one instance, waiting for the outermost factory to return. Trivial: the record retains nothing,
    /// except a context that is not the origin (a `Lazy` may have been the only owner of its container). An
    /// instance that is not in the graph is kept, retained, in `hookInstances`.
    private struct PendingHook {
        /// The instance's registration, which holds the hooks. Unretained, like a frame's.
        let entry: Unmanaged<ServiceEntry>
        /// Where the instance is: in the graph, or in `hookInstances`.
        let inGraph: Bool
        let position: Int
        let path: PathRange
        let depth: Int
        let context: Unmanaged<Container>
        /// Whether `context` was retained for the hook (it is not the origin).
        let retainsContext: Bool
        let storage: ObjectScope.Storage
    }

    /// A path of registrations kept in `paths`: the services being built when an instance was created.
    struct PathRange {
        var start = 0
        var count = 0
    }

    init(origin: Container, cache: LookupCache) {
        state = .allocate(capacity: 1)
        state.initialize(to: State(origin: origin, context: .passUnretained(origin)))
        thread = .current
        self.cache = cache
    }

    deinit {
        state.pointee.building.deallocate()
        state.pointee.graph.deallocate()
        state.pointee.pendingHooks.deallocate()
        state.pointee.hookInstances.deallocate()
        state.pointee.paths.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The container that began the resolution.
    var origin: Container { state.pointee.origin }

    // MARK: Top level

    /// Resolves a service as a new top-level resolution that starts in `container`.
    ///
    /// Usually in the thread's pooled resolution, borrowed without taking it out of the pool; in a new one when
    /// that is busy (a factory called a container's `resolve`) or after a deadlock retry.
    @inline(__always)
    static func resolve<Service>(_ serviceType: Service.Type, name: String?, in container: Container) throws -> Service
    {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        if let pooled = ResolutionPool.idle() {
            // Back to the pool only after the borrow ended: if a factory kept the resolution, leaving the pool
            // releases the pool's reference, and the last one may be another thread's.
            let instance: Service
            do {
                instance = try pooled._withUnsafeGuaranteedRef { try $0.resolveTopLevel(key, in: container) }
            } catch {
                ResolutionPool.returnToPool(pooled)
                guard error is DeadlockRetry else { throw error }
                return try resolveRetrying(key, in: container, after: 1) { try $0.resolveTopLevel(key, in: container) }
            }
            ResolutionPool.returnToPool(pooled)
            return instance
        }
        return try resolveRetrying(key, in: container, after: 0) { try $0.resolveTopLevel(key, in: container) }
    }

    /// Resolves a service whose factory takes runtime arguments, as a new top-level resolution that starts in
    /// `container`: the general path, for every kind of registration. The common case, a plain registration found
    /// in the thread's cache, takes `resolveQuickly` from the resolver's inlined `resolve(_:arguments:_:)`.
    static func resolve<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        in container: Container,
        arguments: repeat each Argument
    ) throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: (repeat each Argument).self)
        guard key.hasArguments else { return try resolve(serviceType, name: name, in: container) }
        if let pooled = ResolutionPool.idle() {
            do {
                defer { ResolutionPool.returnToPool(pooled) }
                return try pooled._withUnsafeGuaranteedRef {
                    try $0.resolveTopLevel(key, in: container, arguments: repeat each arguments)
                }
            } catch is DeadlockRetry {
                return try resolveRetrying(key, in: container, after: 1) {
                    try $0.resolveTopLevel(key, in: container, arguments: repeat each arguments)
                }
            }
        }
        return try resolveRetrying(key, in: container, after: 0) {
            try $0.resolveTopLevel(key, in: container, arguments: repeat each arguments)
        }
    }

    /// Resolves a plain registration with runtime arguments that the thread's look-up cache knows, as a new
    /// top-level resolution that starts in `container`, and writes the instance to `result`. Returns `false` when
    /// the registration is not plain, is not in the cache, or anything watches, having done nothing; and after an
    /// attempt would have deadlocked with another thread, having undone it and paused: either way the caller takes
    /// the general path.
    @inline(__always)
    static func resolveQuickly<Service>(
        _ key: ServiceKey,
        in container: Container,
        arguments: UnsafeRawPointer,
        into result: UnsafeMutablePointer<Service>
    ) throws -> Bool {
        guard let pooled = ResolutionPool.idle() else { return false }
        let resolved: Bool
        do {
            resolved = try pooled._withUnsafeGuaranteedRef {
                try $0.resolveTopLevelQuickly(key, in: container, arguments: arguments, into: result)
            }
        } catch {
            ResolutionPool.returnToPool(pooled)
            guard error is DeadlockRetry else { throw error }
            pauseBriefly(attempt: 1)
            return false  // The general path retries.
        }
        ResolutionPool.returnToPool(pooled)
        return resolved
    }

    /// Runs `attempt` in resolutions taken from the pool or made for the purpose, retrying while an attempt would
    /// have deadlocked with another thread.
    private static func resolveRetrying<Service>(
        _ key: ServiceKey,
        in container: Container,
        after failedAttempts: Int,
        attempt: (Resolution) throws -> Service
    ) throws -> Service {
        var retries = failedAttempts
        while true {
            if retries > 0 {
                // Another thread is building an instance this one needs, and waits for one this one built.
                // Everything the last attempt claimed is released; give the other thread time to finish.
                guard retries < maxRetries else {
                    throw ResolutionError(
                        .circularDependency, key: key, path: [key],
                        detail: """
                            Threads kept waiting for each other's permanent or weak instances \(maxRetries) times: \
                            the services involved form a cycle that is entered from several threads, and a factory \
                            resolves through a container instead of the resolver it was given.
                            """)
                }
                pauseBriefly(attempt: retries)
            }
            var resolution = ResolutionPool.take(for: container)
            do {
                defer { ResolutionPool.recycle(&resolution) }
                return try attempt(resolution)
            } catch is DeadlockRetry {
                retries += 1
            }
        }
    }

    /// One attempt at a top-level resolve of a key without runtime arguments, in this idle resolution.
    @inline(__always)
    private func resolveTopLevel<Service>(_ key: ServiceKey, in container: Container) throws -> Service {
        try resolveTopLevel(key, in: container) { found in
            if let found, found.isPlain, state.pointee.diagnostics == nil {
                if found.shape == .transient, !found.hasHooks { return try buildOutermost(found, key: key) }
                return try resolvePlain(found, key: key, depth: 0)
            }
            return try resolve(key, found: found, name: key.name, depth: 0)
        }
    }

    /// The outermost build of a transient registration without hooks or arguments: `buildPlain` without the
    /// checks that cannot fail at depth 0 with nothing else being built (no cycle, no depth limit: it is at least
    /// 0).
    @inline(__always)
    private func buildOutermost<Service>(_ found: Found, key: ServiceKey) throws -> Service {
        let slot = GraphSlot(registration: found.identity, context: state.pointee.context.toOpaque())
        state.pointee.building.push(Frame(entry: found.entry, slot: slot, storage: .none))
        state.pointee.depth = 0
        defer { leave(toDepth: -1) }
        do {
            return try found.entry._withUnsafeGuaranteedRef { try NullaryEntry<Service>.build($0, self) }
        } catch {
            throw failure(error, key: key, path: path(), detail: "its factory threw an error")
        }
    }

    /// One attempt at a top-level resolve of a key with runtime arguments, in this idle resolution.
    private func resolveTopLevel<Service, each Argument>(
        _ key: ServiceKey,
        in container: Container,
        arguments: repeat each Argument
    ) throws -> Service {
        try resolveTopLevel(key, in: container) { found in
            try resolve(key, found: found, depth: 0, arguments: repeat each arguments)
        }
    }

    /// One attempt at a top-level resolve, in this idle resolution: looks `key` up, then lets `resolveFound` resolve
    /// what it found at depth 0, then completes the resolution.
    @inline(__always)
    private func resolveTopLevel<Service>(
        _ key: ServiceKey,
        in container: Container,
        resolveFound: (Found?) throws -> Service
    ) throws -> Service {
        cache.beginResolving(in: container)
        defer { cache.endResolving() }
        let lookup = try lookUpTopLevel(key, in: container)
        // Fast path: an instance a permanent or weak registration already holds needs no resolution at all.
        if let found = lookup.found, found.shape == .held {
            do throws(NotHeld) { return try found.loadHeld(as: Service.self) } catch {}
        }
        begin(in: container, maxDepth: lookup.depthLimit, diagnostics: lookup.diagnostics)
        do {
            let instance = try resolveFound(lookup.found)
            try complete()
            return instance
        } catch {
            throw failed(error)
        }
    }

    /// `resolveTopLevel(_:in:arguments:)` for a plain registration the cache knows; `false` for anything else.
    @inline(__always)
    private func resolveTopLevelQuickly<Service>(
        _ key: ServiceKey,
        in container: Container,
        arguments: UnsafeRawPointer,
        into result: UnsafeMutablePointer<Service>
    ) throws -> Bool {
        cache.beginResolving(in: container)
        defer { cache.endResolving() }
        guard let slot = cache.hit(key, in: container), !slot.pointee.isClosed, slot.pointee.diagnostics == nil else {
            return false
        }
        let found = Found(entry: slot.pointee.entry!, owner: slot.pointee.owner!)
        guard found.isPlain else { return false }
        begin(in: container, maxDepth: slot.pointee.depthLimit, diagnostics: nil)
        do {
            // Straight into `result`: a local would be copied there, a retain and a release.
            result.initialize(to: try resolvePlain(found, key: key, depth: 0, arguments: arguments))
        } catch {
            throw failed(error)
        }
        do {
            try complete()
        } catch {
            result.deinitialize(count: 1)
            throw failed(error)
        }
        return true
    }

    /// Resolves a plain registration with runtime arguments within this resolution, as a factory's nested resolve,
    /// and writes the instance to `result`. `false`, having done nothing, when the general path must do it.
    func resolveQuickly<Service>(
        _ key: ServiceKey,
        arguments: UnsafeRawPointer,
        into result: UnsafeMutablePointer<Service>
    ) throws -> Bool {
        guard thread == .current, state.pointee.phase == .active, state.pointee.diagnostics == nil,
            let found = find(key, in: state.pointee.context), found.isPlain
        else { return false }
        result.initialize(to: try resolvePlain(found, key: key, depth: state.pointee.depth + 1, arguments: arguments))
        return true
    }

    /// What a top-level resolve needs to know before it begins: where the key is registered, and the settings of
    /// the container it starts in. From the thread's look-up cache, or found under the registries' locks and then
    /// cached. Throws if the container was closed.
    @inline(__always)
    private func lookUpTopLevel(
        _ key: ServiceKey,
        in container: Container
    ) throws -> (found: Found?, depthLimit: Int, diagnostics: Diagnostics?) {
        if let slot = cache.hit(key, in: container) {
            if slot.pointee.isClosed { throw ResolutionError(.containerClosed, key: key, path: [key]) }
            let found = Found(entry: slot.pointee.entry!, owner: slot.pointee.owner!)
            // Copied only when there is one: copying `nil` still calls the runtime to retain and release it.
            var diagnostics: Diagnostics?
            if slot.pointee.diagnostics != nil { diagnostics = slot.pointee.diagnostics }
            return (found, slot.pointee.depthLimit, diagnostics)
        }
        let lookup = container.lookupForResolution(key)
        if lookup.isClosed { throw ResolutionError(.containerClosed, key: key, path: [key]) }
        if let found = lookup.found {
            cache.store(key, in: container, version: lookup.version, found: found, lookup: lookup)
        }
        return (lookup.found, lookup.depthLimit, lookup.diagnostics)
    }

    private static let maxRetries = 1_000

    /// Whether the resolution is finished and free for the next top-level resolve on its thread.
    var isIdle: Bool { state.pointee.phase == .finished }

    /// Whether factories or hooks got the resolution as their resolver since the last call: then one of them may
    /// have kept it. Resets the answer.
    func wasLentOut() -> Bool {
        defer { state.pointee.lentOut = false }
        return state.pointee.lentOut
    }

    /// Keeps the origin alive for a resolution that a factory kept (a captured resolver, a `Lazy`): it may start
    /// new resolutions there after the `resolve` call that made it has returned.
    func keepOrigin() {
        state.pointee.retainedOrigin = state.pointee.origin
    }

    private func begin(
        in container: Container,
        maxDepth: Int,
        diagnostics: Diagnostics?
    ) {
        if diagnostics != nil { state.pointee.diagnostics = diagnostics }  // `finish()` left it nil.
        state.pointee.origin = container
        state.pointee.context = .passUnretained(container)
        state.pointee.maxDepth = maxDepth
        state.pointee.depth = -1
        state.pointee.phase = .active
        state.pointee.lentOut = true
    }

    /// Completes a resolution whose outermost resolve returned: runs the hooks it queued, then publishes the
    /// permanent and weak instances it built, then finishes. If that throws, call `failed`.
    @inline(__always)
    private func complete() throws {
        // A factory that swallowed a nested `DeadlockRetry` returns normally from an aborted resolution.
        if state.pointee.phase == .aborted { throw DeadlockRetry() }
        if !state.pointee.pendingHooks.isEmpty { try runPendingHooks() }
        if !state.pointee.claims.isEmpty { CreationCoordinator.shared.publish(state.pointee.claims) }
        finish()
    }

    /// Ends a resolution that failed: abandons the permanent and weak instances it claimed, finishes, and returns
    /// the error to throw.
    private func failed(_ error: any Error) -> any Error {
        if !state.pointee.claims.isEmpty { CreationCoordinator.shared.abandon(state.pointee.claims) }
        let aborted = state.pointee.phase == .aborted
        finish()
        return aborted ? DeadlockRetry() : error
    }

    /// Drops every instance the resolution kept, so a resolver captured by a factory keeps nothing alive. Keeps
    /// the capacity of its buffers for the next resolution on this thread.
    /// (`hookPath` is empty already: running the hooks restores it, also when one throws.)
    @inline(__always)
    private func finish() {
        state.pointee.phase = .finishing
        if !state.pointee.graph.isEmpty { state.pointee.graph.removeAll() }
        if !state.pointee.pendingHooks.isEmpty { dropPendingHooks() }
        if !state.pointee.claims.isEmpty { state.pointee.claims.removeAll(keepingCapacity: true) }
        if !state.pointee.building.isEmpty { state.pointee.building.removeAll() }
        if state.pointee.diagnostics != nil { state.pointee.diagnostics = nil }
        state.pointee.phase = .finished
    }

    // MARK: Resolver

    func resolve<Service>(_ serviceType: Service.Type, name: String?) throws -> Service {
        guard try isUsable() else { return try origin.resolve(serviceType, name: name) }
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        let depth = state.pointee.depth + 1
        // The common case inline: a transient or graph-scoped registration, while nothing watches.
        let found = find(key, in: state.pointee.context)
        if let found, found.isPlain, state.pointee.diagnostics == nil {
            return try resolvePlain(found, key: key, depth: depth)
        }
        return try resolve(key, found: found, name: name, depth: depth)
    }

    func resolve<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        arguments: repeat each Argument
    ) throws -> Service {
        guard try isUsable() else {
            return try origin.resolve(serviceType, name: name, arguments: repeat each arguments)
        }
        return try resolve(serviceType, name: name, depth: state.pointee.depth + 1, arguments: repeat each arguments)
    }

    /// Resolves within this resolution, at `depth`.
    func resolve<Service>(_ serviceType: Service.Type, name: String?, depth: Int) throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        return try resolve(key, found: find(key, in: state.pointee.context), name: name, depth: depth)
    }

    /// Resolves `key`, a key without arguments named `name`, from what a look-up found.
    private func resolve<Service>(_ key: ServiceKey, found: Found?, name: String?, depth: Int) throws -> Service {
        try resolve(key, found: found, depth: depth) { entry, resolution, depth in
            guard let entry else { return try resolution.derive(Service.self, name: name, depth: depth) }
            return try entry._withUnsafeGuaranteedRef { try $0.make(resolution, as: Service.self) }
        }
    }

    /// Resolves within this resolution, at `depth`, with runtime arguments.
    func resolve<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        depth: Int,
        arguments: repeat each Argument
    ) throws -> Service {
        let argumentsType: Any.Type = (repeat each Argument).self
        guard argumentsType != Void.self else { return try resolve(serviceType, name: name, depth: depth) }
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: argumentsType)
        return try resolve(
            key, found: find(key, in: state.pointee.context), depth: depth, arguments: repeat each arguments)
    }

    /// Resolves `key`, a key with runtime arguments, from what a look-up found.
    private func resolve<Service, each Argument>(
        _ key: ServiceKey,
        found: Found?,
        depth: Int,
        arguments: repeat each Argument
    ) throws -> Service {
        if let found, found.isPlain, state.pointee.diagnostics == nil {
            return try withUnsafePointer(to: (repeat each arguments)) { arguments in
                try resolvePlain(found, key: key, depth: depth, arguments: UnsafeRawPointer(arguments))
            }
        }
        return try resolve(key, found: found, depth: depth) { entry, resolution, depth in
            guard let entry else {
                return try resolution.derive(
                    Service.self, name: key.name, depth: depth, arguments: repeat each arguments)
            }
            return try resolution.make(entry.takeUnretainedValue(), as: Service.self, arguments: repeat each arguments)
        }
    }

    /// Resolves for a wrapper that was resolved earlier and asks for its service now (`Lazy`, `Provider`): within
    /// this resolution if it is still running on this thread (sharing its graph, one level deeper than the current
    /// depth), otherwise as a new top-level resolution. Either way the look-up starts in `context`, the container
    /// the wrapper was resolved in.
    func resolveLater<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        in context: Container,
        arguments: repeat each Argument
    ) throws -> Service {
        guard try isUsable() else {
            return try context.resolve(serviceType, name: name, arguments: repeat each arguments)
        }
        let saved = state.pointee.context
        state.pointee.context = .passUnretained(context)
        defer { state.pointee.context = saved }
        return try resolve(serviceType, name: name, depth: state.pointee.depth + 1, arguments: repeat each arguments)
    }

    /// Resolves the target of a forward, whose build is running: the registration under `key` in `owner` (the
    /// container holding the forward) or its nearest ancestor, at the forward's depth. `arguments` points at the
    /// runtime arguments as a tuple, or is `nil` for none.
    func resolveTarget<Target>(
        _: Target.Type,
        key: ServiceKey,
        in owner: Container,
        arguments: UnsafeRawPointer?
    ) throws -> Target {
        try resolve(key, found: find(key, in: owner), depth: state.pointee.depth) { entry, resolution, _ in
            guard let entry = entry?.takeUnretainedValue() else { throw NotDerivable() }
            guard let arguments else { return try entry.make(resolution, as: Target.self) }
            return try ArgumentsEntry<Target>.build(entry, resolution, arguments: arguments)
        }
    }

    /// Calls `entry`'s factory with these arguments, or forwards them. `entry` is registered under a key with
    /// arguments.
    func make<Service, each Argument>(
        _ entry: ServiceEntry,
        as _: Service.Type,
        arguments: repeat each Argument
    ) throws -> Service {
        return try withUnsafePointer(to: (repeat each arguments)) { tuple in
            let pointer = UnsafeRawPointer(tuple)
            if entry.forwardTarget != nil {
                return try unsafeDowncast(entry, to: ForwardingEntry.self)
                    .forward(as: Service.self, in: self, arguments: pointer)
            }
            return try ArgumentsEntry<Service>.build(entry, self, arguments: pointer)
        }
    }

    func typeMismatch(_ key: ServiceKey, instance: Any, expected: Any.Type) -> ResolutionError {
        error(
            .typeMismatch, key: key,
            detail: """
                It forwards to a registration whose instance, a \(type(of: instance)), is not a \(expected). \
                Forward only to types the registered service conforms to or inherits from.
                """)
    }

    /// The container where look-ups start at this point of the resolution.
    var currentContext: Container { state.pointee.context.takeUnretainedValue() }

    /// Whether `key` has a registration, or can be derived from one, where look-ups start at this point.
    func canResolve(_ key: ServiceKey) -> Bool {
        find(key, in: state.pointee.context) != nil
    }

    /// Builds a service that has no registration of its own from one that has: `Optional<T>` from `T`, and so on.
    func derive<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        depth: Int,
        arguments: repeat each Argument
    ) throws -> Service {
        guard let derived = Service.self as? any DerivedService.Type else { throw NotDerivable() }
        let instance = try derive(derived, name: name, depth: depth, arguments: repeat each arguments)
        return instance as! Service  // `derived` is `Service.self`.
    }

    private func derive<Derived: DerivedService, each Argument>(
        _: Derived.Type,
        name: String?,
        depth: Int,
        arguments: repeat each Argument
    ) throws -> Any {
        try Derived.derive(in: self, name: name, depth: depth, arguments: repeat each arguments)
    }

    /// Whether a resolve through this resolver joins the resolution. `false` on another thread or after the
    /// resolution finished: then it starts a new one.
    private func isUsable() throws -> Bool {
        guard thread == .current else { return false }
        switch state.pointee.phase {
        case .active: return true
        case .aborted: throw DeadlockRetry()
        case .finishing, .finished: return false
        }
    }

    // MARK: Resolving one key

    /// Where `key` is registered, for a look-up that starts in `container`: from the thread's cache, or found under
    /// the registries' locks and then cached.
    @inline(__always)
    private func find(_ key: ServiceKey, in container: Container) -> Found? {
        find(key, in: .passUnretained(container))
    }

    /// `container` unretained: it is the resolution's context, which the caller keeps alive.
    @inline(__always)
    private func find(_ key: ServiceKey, in container: Unmanaged<Container>) -> Found? {
        let version = container._withUnsafeGuaranteedRef { $0.version }.loadInTotalOrder()
        let slot = cache.hit(key, at: container.toOpaque(), version: version)
        if let slot { return Found(entry: slot.pointee.entry!, owner: slot.pointee.owner!) }
        return findSlowly(key, in: container.takeUnretainedValue())
    }

    private func findSlowly(_ key: ServiceKey, in container: Container) -> Found? {
        let lookup = container.lookupForResolution(key)
        guard let found = lookup.found else { return nil }
        cache.store(key, in: container, version: lookup.version, found: found, lookup: lookup)
        return found
    }

    private func resolve<Service>(
        _ key: ServiceKey,
        found: Found?,
        depth: Int,
        invoke: Invocation<Service>
    ) throws -> Service {
        guard depth <= state.pointee.maxDepth else {
            throw error(.depthLimitExceeded, key: key, detail: depthLimitDetail)
        }
        guard let found else {
            do {
                return try invoke(nil, self, depth)
            } catch is NotDerivable {
                throw error(.notRegistered, key: key, alternatives: currentContext.registrations(of: key))
            }
        }
        // While nothing watches, a transient or graph-scoped registration takes the short path. (For a key without
        // arguments, `invoke` would call the same factory.)
        if found.isPlain, key.argumentsType == Void.self, state.pointee.diagnostics == nil {
            return try resolvePlain(found, key: key, depth: depth)
        }
        if let observer = state.pointee.diagnostics?.observer {
            observe(key, entry: found.entry.takeUnretainedValue(), by: observer)
        }
        switch found.shape {
        case .transient:
            let slot = GraphSlot(registration: found.identity, context: state.pointee.context.toOpaque())
            return try build(found.entry, key: key, slot: slot, depth: depth, invoke: invoke)
        case .graph:
            let slot = GraphSlot(registration: found.identity, context: state.pointee.context.toOpaque())
            if let position = state.pointee.graph.position(of: slot) {
                return state.pointee.graph.instance(at: position, as: Service.self)
            }
            return try build(found.entry, key: key, slot: slot, depth: depth, addingToGraph: true, invoke: invoke)
        case .held:
            // Permanent and weak instances are built from the container that owns the registration.
            do throws(NotHeld) { return try found.loadHeld(as: Service.self) } catch {}
            let entry = found.entry.takeUnretainedValue()
            return try acquire(
                entry, storage: entry.storage!, owner: found.owner, key: key, depth: depth, invoke: invoke)
        }
    }

    private func acquire<Service>(
        _ entry: ServiceEntry,
        storage: InstanceStorage,
        owner: Container,
        key: ServiceKey,
        depth: Int,
        invoke: Invocation<Service>
    ) throws -> Service {
        switch CreationCoordinator.shared.acquire(storage, for: self) {
        case .held(let instance), .ownBuild(let instance?):
            return try cast(instance, key: key)
        case .ownBuild(nil):
            throw error(.circularDependency, key: key)
        case .sameThread:
            throw error(
                .circularDependency, key: key,
                detail: """
                    \(key) is being built by another resolution further down this thread's stack: a factory \
                    called a container's resolve instead of the resolver it was given. Resolve through the \
                    factory's resolver to share the instance.
                    """)
        case .deadlock:
            state.pointee.phase = .aborted
            throw DeadlockRetry()
        case .claimed:
            state.pointee.claims.append(storage)
            let slot = GraphSlot(registration: entry.identity, context: Unmanaged.passUnretained(owner).toOpaque())
            let saved = state.pointee.context
            state.pointee.context = .passUnretained(owner)
            defer { state.pointee.context = saved }
            let instance: Service
            do {
                instance = try build(
                    Unmanaged.passUnretained(entry), key: key, slot: slot, depth: depth, invoke: invoke)
            } catch {
                // Release the claim now, so threads waiting for this instance can build it themselves.
                removeClaim(storage)
                CreationCoordinator.shared.abandon([storage])
                throw error
            }
            if storage.retention == .weak, asObject(instance) == nil {
                // A value type has no identity to share: weak scope behaves as transient for it.
                removeClaim(storage)
                CreationCoordinator.shared.abandon([storage])
            } else {
                storage.built(instance)
                // Claims are published in the order their factories returned: the instances' creation order.
                if state.pointee.claims.last !== storage {
                    state.pointee.claims.removeAll { $0 === storage }
                    state.pointee.claims.append(storage)
                }
            }
            return instance
        }
    }

    /// Drops one claim. Not necessarily the last: instances built inside the factory claimed theirs after it.
    private func removeClaim(_ storage: InstanceStorage) {
        if let index = state.pointee.claims.lastIndex(where: { $0 === storage }) {
            state.pointee.claims.remove(at: index)
        }
    }

    /// Resolves a transient or graph-scoped registration, while nothing watches the resolution:
    /// what `resolve(_:found:depth:invoke:)` and `build` do, without the steps that cannot apply (measured: a
    /// tenth of a nested resolve).
    private func resolvePlain<Service>(_ found: Found, key: ServiceKey, depth: Int) throws -> Service {
        try resolvePlain(found, key: key, depth: depth, argumentsAt: nil)
    }

    /// `resolvePlain` for a key with runtime arguments, which `arguments` points at as a tuple.
    private func resolvePlain<Service>(
        _ found: Found,
        key: ServiceKey,
        depth: Int,
        arguments: UnsafeRawPointer
    ) throws -> Service {
        try resolvePlain(found, key: key, depth: depth, argumentsAt: arguments)
    }

    /// The two `resolvePlain`s; each inlines it, with or without arguments.
    @inline(__always)
    private func resolvePlain<Service>(
        _ found: Found,
        key: ServiceKey,
        depth: Int,
        argumentsAt arguments: UnsafeRawPointer?
    ) throws -> Service {
        guard depth <= state.pointee.maxDepth else {
            throw error(.depthLimitExceeded, key: key, detail: depthLimitDetail)
        }
        let slot = GraphSlot(registration: found.identity, context: state.pointee.context.toOpaque())
        guard found.shape == .graph else {
            guard found.hasHooks else {
                return try buildPlain(found, key: key, slot: slot, depth: depth, arguments: arguments)
            }
            let instance: Service = try buildPlain(found, key: key, slot: slot, depth: depth, arguments: arguments)
            queueHooks(of: found.entry, instance: instance, depth: depth, graphPosition: nil, builtLast: true)
            return instance
        }
        if let position = state.pointee.graph.position(of: slot) {
            return state.pointee.graph.instance(at: position, as: Service.self)
        }
        let instance: Service = try buildPlain(found, key: key, slot: slot, depth: depth, arguments: arguments)
        // The outermost instance, with no hooks waiting to run: the resolution is over, nothing can ask for it
        // again, and the graph need not keep it (a retain and a release saved).
        if depth == 0, !found.hasHooks, state.pointee.pendingHooks.isEmpty { return instance }
        let position = state.pointee.graph.add(instance, for: slot)
        if found.hasHooks {
            queueHooks(of: found.entry, instance: instance, depth: depth, graphPosition: position, builtLast: true)
        }
        return instance
    }

    /// Runs a plain registration's factory one level deeper. A resolution that a nested resolve aborted is noticed
    /// by the top level (`complete`).
    @inline(__always)
    private func buildPlain<Service>(
        _ found: Found,
        key: ServiceKey,
        slot: GraphSlot,
        depth: Int,
        arguments: UnsafeRawPointer?
    ) throws -> Service {
        let outerDepth = try enter(
            Frame(entry: found.entry, slot: slot, storage: found.shape == .graph ? .graph : .none), key: key,
            depth: depth)
        defer { leave(toDepth: outerDepth) }
        do {
            return try found.entry._withUnsafeGuaranteedRef { entry in
                // The key names the service type and argument types exactly: the entry is a `NullaryEntry<Service>`
                // or an `ArgumentsEntry<Service>`, and the downcasts are reinterpretations.
                guard let arguments else { return try NullaryEntry<Service>.build(entry, self) }
                return try ArgumentsEntry<Service>.build(entry, self, arguments: arguments)
            }
        } catch {
            throw failure(error, key: key, path: path(), detail: "its factory threw an error")
        }
    }

    /// Runs the factory one level deeper, adds the instance to the graph if asked, and queues its hooks.
    private func build<Service>(
        _ entry: Unmanaged<ServiceEntry>,
        key: ServiceKey,
        slot: GraphSlot,
        depth: Int,
        addingToGraph: Bool = false,
        invoke: Invocation<Service>
    ) throws -> Service {
        let storage = entry._withUnsafeGuaranteedRef { $0.storageKind }
        let outerDepth = try enter(Frame(entry: entry, slot: slot, storage: storage), key: key, depth: depth)
        defer { leave(toDepth: outerDepth) }
        let instance: Service
        do {
            instance = try invoke(entry, self, depth)
        } catch {
            throw failure(error, key: key, path: path(), detail: "its factory threw an error")
        }
        if state.pointee.phase == .aborted { throw DeadlockRetry() }
        let graphPosition = addingToGraph ? state.pointee.graph.add(instance, for: slot) : nil
        if state.pointee.diagnostics != nil || entry._withUnsafeGuaranteedRef({ $0.hasHooks }) {
            afterBuild(entry, instance: instance, depth: depth, graphPosition: graphPosition)
        }
        return instance
    }

    /// Starts building `frame` at `depth`, unless its instance is already being built further up: a cycle. Returns
    /// the depth to go back to with `leave(toDepth:)`.
    @inline(__always)
    private func enter(_ frame: Frame, key: ServiceKey, depth: Int) throws -> Int {
        if state.pointee.building.elements.contains(where: { $0.slot == frame.slot }) {
            throw error(.circularDependency, key: key)
        }
        state.pointee.building.push(frame)
        defer { state.pointee.depth = depth }
        return state.pointee.depth
    }

    @inline(__always)
    private func leave(toDepth outerDepth: Int) {
        state.pointee.building.pop()
        state.pointee.depth = outerDepth
    }

    /// Records a new instance for the leak trackers, and queues its hooks. `graphPosition` is where the graph keeps
    /// the instance, if it does.
    private func afterBuild<Service>(
        _ entry: Unmanaged<ServiceEntry>,
        instance: Service,
        depth: Int,
        graphPosition: Int?
    ) {
        if let trackers = state.pointee.diagnostics?.trackers, !trackers.isEmpty {
            LeakTracker.record(
                instance, entry: entry.takeUnretainedValue(), owner: currentContext, path: path(), in: trackers)
        }
        guard entry._withUnsafeGuaranteedRef({ $0.hasHooks }) else { return }
        queueHooks(of: entry, instance: instance, depth: depth, graphPosition: graphPosition, builtLast: false)
    }

    /// Queues the hooks of a new instance of `entry`, built at `depth`. `graphPosition` is where the graph keeps
    /// the instance, if it does. `builtLast` says that the instance's own frame has left `building` already: its
    /// registration ends the path.
    private func queueHooks<Service>(
        of entry: Unmanaged<ServiceEntry>,
        instance: Service,
        depth: Int,
        graphPosition: Int?,
        builtLast: Bool
    ) {
        let position = graphPosition ?? state.pointee.hookInstances.push(instance)
        let context = state.pointee.context
        let retainsContext = context.toOpaque() != Unmanaged.passUnretained(origin).toOpaque()
        if retainsContext {
            _ = context.retain()
            state.pointee.retainedContexts += 1
        }
        state.pointee.pendingHooks.push(
            PendingHook(
                entry: entry, inGraph: graphPosition != nil, position: position,
                path: recordPath(appending: builtLast ? entry : nil), depth: depth, context: context,
                retainsContext: retainsContext, storage: entry._withUnsafeGuaranteedRef { $0.storageKind }))
    }

    /// Copies the path to the service being built now, and `last` if given, into `paths`.
    private func recordPath(appending last: Unmanaged<ServiceEntry>?) -> PathRange {
        let start = state.pointee.paths.count
        let hookPath = state.pointee.hookPath
        for index in hookPath.start..<(hookPath.start + hookPath.count) {
            state.pointee.paths.push(state.pointee.paths[index])
        }
        for frame in state.pointee.building.elements {
            state.pointee.paths.push(frame.entry)
        }
        if let last { state.pointee.paths.push(last) }
        return PathRange(start: start, count: state.pointee.paths.count - start)
    }

    /// The keys of a path kept in `paths`.
    private func keys(of path: PathRange) -> [ServiceKey] {
        (path.start..<(path.start + path.count)).map { state.pointee.paths[$0]._withUnsafeGuaranteedRef { $0.key } }
    }

    /// Forgets the queued hooks of a resolution that ended, and what they kept.
    private func dropPendingHooks() {
        if state.pointee.retainedContexts > 0 {
            for pending in state.pointee.pendingHooks.elements where pending.retainsContext {
                pending.context.release()
            }
            state.pointee.retainedContexts = 0
        }
        state.pointee.pendingHooks.removeAll()
        state.pointee.hookInstances.removeAll()
        state.pointee.paths.removeAll()
    }

    // MARK: Validation

    /// Tells `observer` that `key` is being resolved here: the edge from the service being built (or whose hook
    /// runs), and — for a weak-scoped or short-lived service resolved while a strongly kept instance is built or
    /// wired — a captive.
    private func observe(_ key: ServiceKey, entry: ServiceEntry, by observer: ValidationObserver) {
        let scope = entry.scope
        let building = state.pointee.building.elements
        let hookPath = keys(of: state.pointee.hookPath)
        let inHook = building.isEmpty && !hookPath.isEmpty
        let from = building.last?.key ?? hookPath.last
        observer.recordEdge(from: from, to: key, scope: scope, viaHook: inHook)
        guard scope.storage == .weak || entry.isShortLived else { return }
        let holder =
            building.last(where: { $0.storage == .strong })?.key
            ?? (state.pointee.hookStorage == .strong ? hookPath.last : nil)
        if let holder { observer.recordCaptive(key, heldBy: holder, path: path() + [key]) }
    }

    // MARK: Hooks

    /// Runs the queued `initCompleted` hooks in the order their instances' factories returned. Hooks may resolve
    /// more services; their hooks join the end of the queue. A resolve inside a hook goes one level deeper than
    /// the hook's instance, so a chain of hooks that never ends runs into the depth limit.
    private func runPendingHooks() throws {
        var next = 0
        while next < state.pointee.pendingHooks.count {
            let pending = state.pointee.pendingHooks[next]
            next += 1
            let saved = (state.pointee.context, state.pointee.depth, state.pointee.hookPath, state.pointee.hookStorage)
            state.pointee.context = pending.context
            state.pointee.depth = pending.depth
            state.pointee.hookPath = pending.path
            state.pointee.hookStorage = pending.storage
            defer {
                (state.pointee.context, state.pointee.depth, state.pointee.hookPath, state.pointee.hookStorage) = saved
            }
            try runHook(of: pending) { entry, instance in try entry.firstHook?.run(self, instance) }
            let count = pending.entry._withUnsafeGuaranteedRef { $0.hooks.count }
            for index in 1..<max(1, count) {
                try runHook(of: pending) { entry, instance in try entry.hooks[index].run(self, instance) }
            }
        }
    }

    /// Runs one hook of a pending instance, handing it the instance's address.
    @inline(__always)
    private func runHook(
        of pending: PendingHook,
        _ run: (ServiceEntry, UnsafeRawPointer) throws -> Void
    ) throws {
        do {
            // Found again for each hook: a hook may add instances, which can move the others. The hook copies its
            // instance before it runs user code.
            let instance =
                pending.inGraph
                ? state.pointee.graph.instances.address(of: pending.position)
                : state.pointee.hookInstances.address(of: pending.position)
            try pending.entry._withUnsafeGuaranteedRef { try run($0, instance) }
        } catch {
            let path = keys(of: pending.path)
            throw failure(error, key: path.last!, path: path, detail: "an initCompleted hook threw")
        }
        if state.pointee.phase == .aborted { throw DeadlockRetry() }
    }

    // MARK: Errors

    /// The path to the service being built now, outermost first.
    private func path() -> [ServiceKey] {
        keys(of: state.pointee.hookPath) + state.pointee.building.elements.map(\.key)
    }

    private func error(
        _ reason: ResolutionError.Reason,
        key: ServiceKey,
        alternatives: [ServiceKey] = [],
        detail: String? = nil
    ) -> ResolutionError {
        ResolutionError(reason, key: key, path: path() + [key], registeredAlternatives: alternatives, detail: detail)
    }

    /// A `ResolutionError` from a nested resolve passes up unchanged; any other error becomes `.factoryFailed`.
    private func failure(_ error: any Error, key: ServiceKey, path: [ServiceKey], detail: String) -> any Error {
        if state.pointee.phase == .aborted || error is DeadlockRetry { return DeadlockRetry() }
        if error is ResolutionError { return error }
        return ResolutionError(.factoryFailed(error), key: key, path: path, detail: detail)
    }

    private var depthLimitDetail: String {
        "The limit is \(state.pointee.maxDepth) (maxResolutionDepth of the container where the resolution started)."
    }

    /// An instance a storage handed out as `Any`, as the `Service` its registration's factory made.
    ///
    /// When the instance's dynamic type is `Service` itself — a class or struct registered as itself — it is
    /// taken out of the `Any` without a dynamic cast (measured: the cast into `Service?` cost as much as a whole
    /// nested resolve). A protocol service (`any Engine`) goes through the checked cast.
    @inline(__always)
    private func cast<Service>(_ instance: Any, key: ServiceKey) throws -> Service {
        func projected<Contained>(_ contained: Contained) -> Service {
            unsafeBitCast(contained, to: Service.self)  // `Contained` is `Service`: checked below.
        }
        if type(of: instance) == Service.self { return projected(instance) }
        return try castChecked(instance, key: key)
    }

    /// `cast`'s checked path, in a function of its own: a function that holds a `Service?` looks its metadata up
    /// when it begins, whether the path runs or not (measured: a third of a resolve that found an instance).
    @inline(never)
    private func castChecked<Service>(_ instance: Any, key: ServiceKey) throws -> Service {
        guard let service = instance as? Service else {
            throw error(
                .typeMismatch, key: key,
                detail: "The registration produced a \(type(of: instance)), which is not a \(Service.self).")
        }
        return service
    }
}

/// Unwinds a resolution that found it would deadlock with another thread. Never escapes a top-level `resolve`.
struct DeadlockRetry: Error {}

/// Says that a service without a registration cannot be derived either: the resolve throws `.notRegistered`.
struct NotDerivable: Error {}
