internal import ArborPrimitives

// A resolution as the `Resolver` its factories receive: a resolve through it joins the resolution (one level deeper,
// the same graph) from its own thread — or, for an `async` resolution, its own task — while it runs; from anywhere
// else, or after it finished, it starts a new resolution in its origin.
extension Resolution {
    // MARK: Resolver

    func resolve<Service>(_ serviceType: Service.Type, name: String?) throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        guard isUsable() else { return try resolveAsNewResolution(key) { try $0.resolve(serviceType, name: name) } }
        let depth = self.depth + 1
        // A request's value, kept as it was registered in its child, while nothing watches (``PendingInstance``). Read
        // through the context borrowed: through `context.object`, a retain and a release of the child each read
        // (measured: `request_scope` 12,285 → 12,144 instructions).
        if context.withObject({ $0.mayKeepPending(key) }), diagnostics == nil, depth <= maxDepth {
            do { return try context.withObject { try $0.pendingInstance(key, as: Service.self) } } catch {}
        }
        // The common case inline, while nothing watches: an instance a permanent or weak registration holds.
        let found = find(key, in: context)
        if let found, found.hasHeldStorage {
            do throws(NotHeld) { return try takeHeldQuickly(found, depth: depth) } catch {}
        }
        return try resolve(key, found: found, depth: depth)
    }

    func resolve<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        arguments: repeat each Argument
    ) throws -> Service {
        guard isUsable() else {
            let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: (repeat each Argument).self)
            return try resolveAsNewResolution(key) {
                try $0.resolve(serviceType, name: name, arguments: repeat each arguments)
            }
        }
        return try resolve(serviceType, name: name, depth: depth + 1, arguments: repeat each arguments)
    }

    func resolve<Service>(_ serviceType: Service.Type, name: String?) async throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        guard isUsableByCurrentTask() else {
            return try await resolveAsNewResolution(key) { try await $0.resolve(serviceType, name: name) }
        }
        let found = find(key, in: context)
        let depth = self.depth + 1
        guard let found, isAsyncPlain(found) else {
            return try await resolveOutOfLine(key, found: found, depth: depth)
        }
        // The plain path, written out in the resolve's own frame: each `async` function a nested resolve passes
        // through allocates a frame from the task (measured: an `async` graph of ten took 34,700 instructions through
        // the rules, 30,850 with this path in a function of its own, 28,000 here). See AsyncPlainPath.swift.
        switch try beginAsyncPlain(found, key: key, depth: depth) {
        case .inGraph(let position):
            return graphInstance(at: position, as: Service.self)
        case .build(let build):
            return try await awaitAsyncPlainBuild(self, build, as: Service.self)
        case .general:  // Only the conveniences' entry point answers it.
            return try await resolveOutOfLine(key, found: found, depth: depth)
        }
    }

    func resolve<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        arguments: repeat each Argument
    ) async throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: (repeat each Argument).self)
        guard key.hasArguments else { return try await resolve(serviceType, name: name) }
        return try await resolveJoiningAsync(key, box: AsyncArgumentsBox.make(repeat each arguments)) { resolver in
            try resolver.resolve(serviceType, name: name, arguments: repeat each arguments)
        }
    }

    /// An `async` resolve of `key`, its runtime arguments in `box`, through this resolver: within the resolution from
    /// its own task, else as a new one in its origin. `synchronous` is the same resolve, synchronous, for a key without
    /// a registration.
    func resolveJoiningAsync<Service>(
        _ key: ServiceKey, box: AsyncArgumentsBox, synchronous: (any Resolver) throws -> Service
    ) async throws -> Service {
        guard isUsableByCurrentTask() else {
            return try await resolveAsNewResolution(key) {
                try await Resolution.resolveAsync(key, box: box, in: $0, synchronous: synchronous)
            }
        }
        let found = find(key, in: context)
        if found == nil, !(Service.self is any AsyncDerivedService.Type) {
            return try await awaitingBuildsInstead { try hostingSynchronousCode { try synchronous(self) } }
        }
        return try await resolveAsync(key, found: found, depth: depth + 1, arguments: box)
    }

    // MARK: Within the resolution, synchronously

    /// Resolves within this resolution, at `depth`.
    func resolve<Service>(_ serviceType: Service.Type, name: String?, depth: Int) throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        return try resolve(key, found: find(key, in: context), depth: depth)
    }

    /// Resolves `key`, a key without arguments, from what a look-up found: by the rules of its registration, or
    /// derived from another when it has none. Inlined into the resolver's `resolve`: one frame less for every level
    /// of a deep graph.
    @inline(__always)
    func resolve<Service>(_ key: ServiceKey, found: Found?, depth: Int) throws -> Service {
        try resolveRegistered(
            key, found: found, in: context,
            byRules: { try resolveByRules(key, found: $0, depth: depth, arguments: nil) },
            unregistered: { try resolveUnregistered(key, depth: depth) })
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
        return try resolve(key, found: find(key, in: context), depth: depth, arguments: repeat each arguments)
    }

    /// Resolves `key`, a key with runtime arguments, from what a look-up found.
    func resolve<Service, each Argument>(
        _ key: ServiceKey,
        found: Found?,
        depth: Int,
        arguments: repeat each Argument
    ) throws -> Service {
        return try ArgumentsTuple.with(repeat each arguments) { tuple in
            try resolveRegistered(
                key, found: found, in: context,
                byRules: { try resolveByRules(key, found: $0, depth: depth, arguments: tuple) },
                unregistered: { try resolveUnregistered(key, depth: depth, arguments: repeat each arguments) })
        }
    }

    /// Resolves `key`, which has no registration: derived from another registration (`Optional`, `Lazy`,
    /// `Provider`, every registration for `resolveAll`), or not registered.
    private func resolveUnregistered<Service, each Argument>(
        _ key: ServiceKey,
        depth: Int,
        arguments: repeat each Argument
    ) throws -> Service {
        try checkDepth(depth, key)
        do {
            return try derive(Service.self, name: key.name, depth: depth, arguments: repeat each arguments)
        } catch is NotDerivable {
            throw notRegisteredError(key)
        }
    }

    /// Resolves the target of a forward, whose build is running: the registration under `key` in `owner` (the
    /// container holding the forward) or its nearest ancestor, at the forward's depth. `arguments` points at the
    /// runtime arguments as a tuple, or is `nil` for none.
    func resolveTarget<Target>(
        _: Target.Type,
        key: ServiceKey,
        in owner: Container,
        arguments: ArgumentsTuple?
    ) throws -> Target {
        let depth = self.depth
        let owner = Unretained(owner, retainedInChecks: false)
        return try resolveRegistered(
            key, found: find(key, in: owner), in: owner,
            byRules: { try resolveByRules(key, found: $0, depth: depth, arguments: arguments) },
            unregistered: { throw missingTarget(key, depth: depth) })
    }

    /// A forward's target is not registered: the depth limit, if the forward is past it, else `.notRegistered`.
    private func missingTarget(_ key: ServiceKey, depth: Int) -> any Error {
        do {
            try checkDepth(depth, key)
            return notRegisteredError(key)
        } catch {
            return error
        }
    }

    // MARK: Within the resolution, async

    /// Resolves `key` from what a look-up found, at `depth`, in this `async` resolution: a synchronous factory's graph
    /// by the synchronous engine, anything else by the rules, awaited.
    @inline(__always)
    func resolveAsync<Service>(
        _ key: ServiceKey, found: Found?, depth: Int, arguments: AsyncArgumentsBox?
    ) async throws -> Service {
        try await resolveRegisteredAsync(
            key, found: found, in: context,
            byRules: { registered in
                if registered.isPlain, registered.factoryKind == .synchronous {
                    return try await awaitingBuildsInstead {
                        try resolveSynchronousGraph(key, found: registered, depth: depth, arguments: arguments)
                    }
                }
                return try await resolveByRulesAsync(key, found: registered, depth: depth, arguments: arguments)
            },
            unregistered: { try await resolveUnregisteredAsync(key, depth: depth, arguments: arguments) })
    }

    /// `resolveAsync`, for what the `async` resolve's own path does not build, in a frame of its own: inlined, the
    /// rules made that resolve's frame several times larger, and every `async` resolve allocates its frame from the
    /// task (measured: `async_graph_10` took 31,950 instructions with it inlined, 26,400 without).
    @inline(never)
    func resolveOutOfLine<Service>(_ key: ServiceKey, found: Found?, depth: Int) async throws -> Service {
        try await resolveAsync(key, found: found, depth: depth, arguments: nil)
    }

    /// `resolveTarget`, for an `async` resolution: the registration a forward points to, awaited.
    func resolveTargetAsync<Target>(
        _: Target.Type,
        key: ServiceKey,
        in owner: Container,
        arguments: AsyncArgumentsBox?
    ) async throws -> Target {
        let depth = self.depth
        let owner = Unretained(owner, retainedInChecks: false)
        return try await resolveRegisteredAsync(
            key, found: find(key, in: owner), in: owner,
            byRules: { try await resolveByRulesAsync(key, found: $0, depth: depth, arguments: arguments) },
            unregistered: { throw missingTarget(key, depth: depth) })
    }

    /// A synchronous factory's graph, which is synchronous all the way down: the synchronous engine builds it.
    ///
    /// A function of its own, not inlined into the `async` resolves: written out in them, its closure made this
    /// compiler's optimizer fail its ownership check on `resolve(_:name:) async` in release builds (Swift 6.3.1),
    /// depending on what else the module held. A synchronous call costs no task frame.
    @inline(never)
    private func resolveSynchronousGraph<Service>(
        _ key: ServiceKey, found: Found, depth: Int, arguments: AsyncArgumentsBox?
    ) throws -> Service {
        try hostingSynchronousCode {
            guard let arguments else { return try resolve(key, found: found, depth: depth) }
            return try arguments.withArgumentsTuple { tuple in
                return try resolveByRules(key, found: found, depth: depth, arguments: tuple)
            }
        }
    }

    /// `resolveUnregistered`, for an `async` resolution: `Optional<T>` and `resolveAll` resolve asynchronously; the
    /// other derived services (`Lazy`, `Provider`) only capture what they need, synchronously.
    private func resolveUnregisteredAsync<Service>(
        _ key: ServiceKey, depth: Int, arguments: AsyncArgumentsBox?
    ) async throws -> Service {
        try checkDepth(depth, key)
        if let derived = Service.self as? any AsyncDerivedService.Type {
            return try await deriveAsync(derived, key: key, depth: depth, arguments: arguments) as! Service
        }
        // A key with runtime arguments and no registration reaches here only as a forward's missing target: the
        // entry points resolve the others with their arguments.
        guard arguments == nil else { throw notRegisteredError(key) }
        return try await awaitingBuildsInstead {
            try hostingSynchronousCode { try resolve(key, found: nil, depth: depth) }
        }
    }

    private func deriveAsync<Derived: AsyncDerivedService>(
        _: Derived.Type, key: ServiceKey, depth: Int, arguments: AsyncArgumentsBox?
    ) async throws -> Any {
        try await Derived.deriveAsync(in: self, key: key, depth: depth, arguments: arguments)
    }

    // MARK: Later, for a wrapper

    /// Resolves for a wrapper that was resolved earlier and asks for its service now (`Lazy`, `Provider`): within
    /// the resolution that made the wrapper if it is the one running on this thread now (sharing its graph, one
    /// level deeper than the current depth), otherwise as a new top-level resolution. Either way the look-up starts
    /// in `context`, the container the wrapper was resolved in.
    ///
    /// The wrapper keeps the resolution's identity, not the resolution: it keeps no resolution, buffer or cache
    /// alive, and it can never join another resolution.
    static func resolveLater<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        in context: Container,
        joining identity: ResolutionIdentity,
        arguments: repeat each Argument
    ) throws -> Service {
        if let active = ThreadContext.existing?.active,
            active.withObject({ $0.isActive && $0.identity == identity })
        {
            return try active.withObject { resolution in
                try resolution.withContext(Unretained(context, retainedInChecks: false)) {
                    try resolution.resolve(
                        serviceType, name: name, depth: resolution.depth + 1, arguments: repeat each arguments)
                }
            }
        }
        return try context.resolve(serviceType, name: name, arguments: repeat each arguments)
    }

    // MARK: Deriving

    /// `.typeMismatch` for the forward `key`, whose frame is still on the path: the path ends with it once.
    func typeMismatch(_ key: ServiceKey, instance: Any, expected: Any.Type) -> any Error {
        let path = path()
        return ResolutionError(
            .typeMismatch, key: key, path: path.last == key ? path : path + [key],
            detail: """
                It forwards to a registration whose instance, of type \(type(of: instance)), is not of type \
                \(expected). Forward only to types the registered service conforms to or inherits from.
                """)
    }

    /// Whether `key` has a registration, or can be derived from one, where look-ups start at this point.
    func canResolve(_ key: ServiceKey) -> Bool {
        find(key, in: context) != nil
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

    func derive<Derived: DerivedService, each Argument>(
        _: Derived.Type,
        name: String?,
        depth: Int,
        arguments: repeat each Argument
    ) throws -> Any {
        try Derived.derive(Derivation(resolution: self, name: name, depth: depth), arguments: repeat each arguments)
    }
}
