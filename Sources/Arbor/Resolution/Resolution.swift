/// One top-level `resolve` call: the state of the graph being built, and the ``Resolver`` its factories receive.
///
/// A resolution owns everything a graph needs while it is built and nothing outlives it: the depth, the path of
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
final class Resolution: Resolver, @unchecked Sendable {
    /// The container that began the resolution.
    let origin: Container
    /// The thread the resolution runs on; only it may touch the state below.
    let thread: ThreadID
    private let maxDepth: Int

    private enum Phase {
        case active
        /// Waiting for another thread would have deadlocked: unwind and let the top level retry.
        case aborted
        case finished
    }

    private var phase = Phase.active
    /// Where lookups start: the origin, or the container that owns the permanent or weak instance being built.
    private var context: Container
    /// The depth of the instance whose factory or hook is running; nested resolves go one deeper.
    private var depth = -1
    /// The services whose factories are running, outermost first.
    private var building: [Frame] = []
    /// While a hook runs: the path that created its instance. Prefixes `building` in error paths.
    private var hookPath: [ServiceKey] = []
    private var graphInstances: [GraphSlot: Any] = [:]
    private var pendingHooks: [PendingHook] = []
    private var claims: [InstanceStorage] = []

    private struct Frame {
        let key: ServiceKey
        let slot: GraphSlot
    }

    /// Identifies one instance within a graph: a registration, built from one context container.
    private struct GraphSlot: Hashable {
        let registration: ObjectIdentifier
        let context: ObjectIdentifier
    }

    private struct PendingHook {
        let hooks: [InitHook]
        let instance: Any
        let path: [ServiceKey]
        let depth: Int
        let context: Container
    }

    private init(origin: Container, maxDepth: Int) {
        self.origin = origin
        self.context = origin
        self.maxDepth = maxDepth
        self.thread = .current
    }

    // MARK: Top level

    /// Resolves `key` as a new top-level resolution that starts in `container`.
    static func resolve<Service, each Argument>(
        _ key: ServiceKey,
        in container: Container,
        arguments: repeat each Argument
    ) throws -> Service {
        let found = container.lookup(key)
        // Fast path: an instance a permanent or weak registration already holds needs no resolution at all.
        if let storage = found?.entry.storage, let instance = storage.heldInstance() {
            return try cast(instance, key: key, path: [key])
        }
        var retries = 0
        while true {
            let resolution = Resolution(origin: container, maxDepth: container.maxResolutionDepth)
            do {
                return try resolution.run(key, found: found, arguments: repeat each arguments)
            } catch is DeadlockRetry {
                // Another thread is building an instance this one needs, and waits for one this one built.
                // Everything this attempt claimed is released; give the other thread time to finish.
                retries += 1
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
        }
    }

    private func run<Service, each Argument>(
        _ key: ServiceKey,
        found: (entry: ServiceEntry, owner: Container)?,
        arguments: repeat each Argument
    ) throws -> Service {
        defer { finish() }
        do {
            let instance: Service = try resolve(key, found: found, depth: 0, arguments: repeat each arguments)
            try runPendingHooks()
            if !claims.isEmpty { CreationCoordinator.shared.publish(claims) }
            return instance
        } catch {
            if !claims.isEmpty { CreationCoordinator.shared.abandon(claims) }
            if phase == .aborted { throw DeadlockRetry() }
            throw error
        }
    }

    /// Drops every instance the resolution kept, so a resolver captured by a factory keeps nothing alive.
    private func finish() {
        phase = .finished
        graphInstances = [:]
        pendingHooks = []
        claims = []
        building = []
        hookPath = []
    }

    // MARK: Resolver

    func resolve<Service>(_ serviceType: Service.Type, name: String?) throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        guard try isUsable() else { return try origin.resolve(serviceType, name: name) }
        return try resolve(key, found: context.lookup(key), depth: depth + 1)
    }

    func resolve<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        arguments: repeat each Argument
    ) throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: (repeat each Argument).self)
        guard try isUsable() else {
            return try origin.resolve(serviceType, name: name, arguments: repeat each arguments)
        }
        return try resolve(key, found: context.lookup(key), depth: depth + 1, arguments: repeat each arguments)
    }

    /// Whether a resolve through this resolver joins the resolution. `false` on another thread or after the
    /// resolution finished: then it starts a new one.
    private func isUsable() throws -> Bool {
        guard thread == .current else { return false }
        switch phase {
        case .active: return true
        case .aborted: throw DeadlockRetry()
        case .finished: return false
        }
    }

    // MARK: Resolving one key

    private func resolve<Service, each Argument>(
        _ key: ServiceKey,
        found: (entry: ServiceEntry, owner: Container)?,
        depth: Int,
        arguments: repeat each Argument
    ) throws -> Service {
        guard depth <= maxDepth else {
            throw error(.depthLimitExceeded, key: key, detail: depthLimitDetail)
        }
        guard let (entry, owner) = found else {
            throw error(.notRegistered, key: key, alternatives: context.registrations(of: key))
        }
        // The key names the service and argument types exactly, so this is the entry of those types.
        let factoryEntry = unsafeDowncast(entry, to: FactoryEntry<Service, repeat each Argument>.self)
        switch entry.scope.storage {
        case .none:
            let slot = GraphSlot(registration: ObjectIdentifier(entry.token), context: ObjectIdentifier(context))
            return try build(factoryEntry, key: key, slot: slot, depth: depth, arguments: repeat each arguments)
        case .graph:
            let slot = GraphSlot(registration: ObjectIdentifier(entry.token), context: ObjectIdentifier(context))
            if let shared = graphInstances[slot] {
                return try Self.cast(shared, key: key, path: path(to: key))
            }
            let instance = try build(factoryEntry, key: key, slot: slot, depth: depth, arguments: repeat each arguments)
            graphInstances[slot] = instance
            return instance
        case .strong, .weak:
            // Permanent and weak instances are built from the container that owns the registration.
            let storage = entry.storage!
            if let held = storage.heldInstance() {
                return try Self.cast(held, key: key, path: path(to: key))
            }
            return try acquire(
                factoryEntry, storage: storage, owner: owner, key: key, depth: depth, arguments: repeat each arguments)
        }
    }

    private func acquire<Service, each Argument>(
        _ entry: FactoryEntry<Service, repeat each Argument>,
        storage: InstanceStorage,
        owner: Container,
        key: ServiceKey,
        depth: Int,
        arguments: repeat each Argument
    ) throws -> Service {
        switch CreationCoordinator.shared.acquire(storage, for: self) {
        case .held(let instance):
            return try Self.cast(instance, key: key, path: path(to: key))
        case .ownBuild(let instance?):
            return try Self.cast(instance, key: key, path: path(to: key))
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
            phase = .aborted
            throw DeadlockRetry()
        case .claimed:
            claims.append(storage)
            let slot = GraphSlot(registration: ObjectIdentifier(entry.token), context: ObjectIdentifier(owner))
            let saved = context
            context = owner
            defer { context = saved }
            let instance: Service
            do {
                instance = try build(entry, key: key, slot: slot, depth: depth, arguments: repeat each arguments)
            } catch {
                // Release the claim now, so threads waiting for this instance can build it themselves.
                claims.removeLast()
                CreationCoordinator.shared.abandon([storage])
                throw error
            }
            if storage.retention == .weak, asObject(instance) == nil {
                // A value type has no identity to share: weak scope behaves as transient for it.
                claims.removeLast()
                CreationCoordinator.shared.abandon([storage])
            } else {
                storage.built(instance)
            }
            return instance
        }
    }

    /// Runs the factory one level deeper, and queues the instance's hooks.
    private func build<Service, each Argument>(
        _ entry: FactoryEntry<Service, repeat each Argument>,
        key: ServiceKey,
        slot: GraphSlot,
        depth: Int,
        arguments: repeat each Argument
    ) throws -> Service {
        if building.contains(where: { $0.slot == slot }) {
            throw error(.circularDependency, key: key)
        }
        building.append(Frame(key: key, slot: slot))
        let outerDepth = self.depth
        self.depth = depth
        defer {
            building.removeLast()
            self.depth = outerDepth
        }
        let instance: Service
        do {
            instance = try entry.factory(self, repeat each arguments)
        } catch {
            throw failure(error, key: key, path: path(), detail: "its factory threw an error")
        }
        if phase == .aborted { throw DeadlockRetry() }
        if !entry.hooks.isEmpty {
            pendingHooks.append(
                PendingHook(hooks: entry.hooks, instance: instance, path: path(), depth: depth, context: context))
        }
        return instance
    }

    // MARK: Hooks

    /// Runs the queued `initCompleted` hooks in the order their instances' factories returned. Hooks may resolve
    /// more services; their hooks join the end of the queue. A resolve inside a hook goes one level deeper than
    /// the hook's instance, so a chain of hooks that never ends runs into the depth limit.
    private func runPendingHooks() throws {
        var next = 0
        while next < pendingHooks.count {
            let pending = pendingHooks[next]
            next += 1
            let saved = (context, depth, hookPath)
            context = pending.context
            depth = pending.depth
            hookPath = pending.path
            defer { (context, depth, hookPath) = saved }
            for hook in pending.hooks {
                do {
                    try hook.run(self, pending.instance)
                } catch {
                    throw failure(
                        error, key: pending.path.last!, path: pending.path, detail: "an initCompleted hook threw")
                }
                if phase == .aborted { throw DeadlockRetry() }
            }
        }
        pendingHooks.removeAll()
    }

    // MARK: Errors

    /// The path to the service being built now, outermost first.
    private func path() -> [ServiceKey] {
        hookPath + building.map(\.key)
    }

    private func path(to key: ServiceKey) -> [ServiceKey] {
        path() + [key]
    }

    private func error(
        _ reason: ResolutionError.Reason,
        key: ServiceKey,
        alternatives: [ServiceKey] = [],
        detail: String? = nil
    ) -> ResolutionError {
        ResolutionError(reason, key: key, path: path(to: key), registeredAlternatives: alternatives, detail: detail)
    }

    /// A `ResolutionError` from a nested resolve passes up unchanged; any other error becomes `.factoryFailed`.
    private func failure(_ error: any Error, key: ServiceKey, path: [ServiceKey], detail: String) -> any Error {
        if phase == .aborted || error is DeadlockRetry { return DeadlockRetry() }
        if error is ResolutionError { return error }
        return ResolutionError(.factoryFailed(error), key: key, path: path, detail: detail)
    }

    private var depthLimitDetail: String {
        "The limit is \(maxDepth) (maxResolutionDepth of the container where the resolution started)."
    }

    static func cast<Service>(_ instance: Any, key: ServiceKey, path: [ServiceKey]) throws -> Service {
        guard let service = instance as? Service else {
            throw ResolutionError(
                .typeMismatch, key: key, path: path,
                detail: "The registration produced a \(type(of: instance)), which is not a \(Service.self).")
        }
        return service
    }

    private static let maxRetries = 1_000
}

/// Unwinds a resolution that found it would deadlock with another thread. Never escapes a top-level `resolve`.
struct DeadlockRetry: Error {}
