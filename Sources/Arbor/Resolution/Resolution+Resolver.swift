internal import ArborPrimitives

extension Resolution {
    // MARK: Resolver

    func resolve<Service>(_ serviceType: Service.Type, name: String?) throws -> Service {
        guard try isUsable() else {
            return try originForNewResolution(
                ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
            )
            .resolve(serviceType, name: name)
        }
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        let depth = state.value.depth + 1
        // The common case inline: a transient or graph-scoped registration, while nothing watches.
        let found = find(key, in: state.value.context)
        if let found, takesFastPath(found) { return try resolvePlain(found, key: key, depth: depth) }
        return try resolve(key, found: found, depth: depth)
    }

    func resolve<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        arguments: repeat each Argument
    ) throws -> Service {
        guard try isUsable() else {
            let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: (repeat each Argument).self)
            return try originForNewResolution(key).resolve(serviceType, name: name, arguments: repeat each arguments)
        }
        return try resolve(serviceType, name: name, depth: state.value.depth + 1, arguments: repeat each arguments)
    }

    /// Resolves within this resolution, at `depth`.
    func resolve<Service>(_ serviceType: Service.Type, name: String?, depth: Int) throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        return try resolve(key, found: find(key, in: state.value.context), depth: depth)
    }

    /// Resolves `key`, a key without arguments, from what a look-up found: by the rules of its registration, or
    /// derived from another when it has none. Inlined into the resolver's `resolve`: one frame less for every level
    /// of a deep graph.
    @inline(__always)
    func resolve<Service>(_ key: ServiceKey, found: Found?, depth: Int) throws -> Service {
        var found = found
        while true {
            guard let registered = found else { return try resolveUnregistered(key, depth: depth) }
            do {
                return try resolveByRules(key, found: registered, depth: depth, arguments: nil)
            } catch is LookAgain {
                found = findUncached(key, in: currentContext)
            }
        }
    }

    /// Resolves `key`, which has no registration: derived from another registration (`Optional`, `Lazy`,
    /// `Provider`), or not registered.
    private func resolveUnregistered<Service, each Argument>(
        _ key: ServiceKey,
        depth: Int,
        arguments: repeat each Argument
    ) throws -> Service {
        guard depth <= state.value.maxDepth else { throw depthLimitError(key) }
        do {
            return try derive(Service.self, name: key.name, depth: depth, arguments: repeat each arguments)
        } catch is NotDerivable {
            throw notRegisteredError(key)
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
            key, found: find(key, in: state.value.context), depth: depth, arguments: repeat each arguments)
    }

    /// Resolves `key`, a key with runtime arguments, from what a look-up found.
    func resolve<Service, each Argument>(
        _ key: ServiceKey,
        found: Found?,
        depth: Int,
        arguments: repeat each Argument
    ) throws -> Service {
        if let found, takesFastPath(found) {
            return try ArgumentsTuple.with(repeat each arguments) { arguments in
                try resolvePlain(found, key: key, depth: depth, arguments: arguments)
            }
        }
        var found = found
        while true {
            guard let registered = found else {
                return try resolveUnregistered(key, depth: depth, arguments: repeat each arguments)
            }
            do {
                return try ArgumentsTuple.with(repeat each arguments) { arguments in
                    try resolveByRules(key, found: registered, depth: depth, arguments: arguments)
                }
            } catch is LookAgain {
                found = findUncached(key, in: currentContext)
            }
        }
    }

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
            active.withObject({ $0.state.value.phase == .active && $0.identity == identity })
        {
            return try active.withObject {
                try $0.resolveJoining(serviceType, name: name, in: context, arguments: repeat each arguments)
            }
        }
        return try context.resolve(serviceType, name: name, arguments: repeat each arguments)
    }

    /// `resolveLater` within this resolution, which runs on this thread.
    func resolveJoining<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        in context: Container,
        arguments: repeat each Argument
    ) throws -> Service {
        let saved = state.value.context
        state.value.context = Unretained(context, retainedInChecks: false)
        defer { state.value.context = saved }
        return try resolve(serviceType, name: name, depth: state.value.depth + 1, arguments: repeat each arguments)
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
        let depth = state.value.depth
        var found = find(key, in: owner)
        while true {
            guard let registered = found else {
                guard depth <= state.value.maxDepth else { throw depthLimitError(key) }
                throw notRegisteredError(key)
            }
            do {
                return try resolveByRules(key, found: registered, depth: depth, arguments: arguments)
            } catch is LookAgain {
                found = findUncached(key, in: owner)
            }
        }
    }

    func typeMismatch(_ key: ServiceKey, instance: Any, expected: Any.Type) -> any Error {
        error(
            .typeMismatch, key: key,
            detail: """
                It forwards to a registration whose instance, a \(type(of: instance)), is not a \(expected). \
                Forward only to types the registered service conforms to or inherits from.
                """)
    }

    /// The container where look-ups start at this point of the resolution.
    var currentContext: Container { state.value.context.object }

    /// Whether `key` has a registration, or can be derived from one, where look-ups start at this point.
    func canResolve(_ key: ServiceKey) -> Bool {
        find(key, in: state.value.context) != nil
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
        try Derived.derive(in: self, name: name, depth: depth, arguments: repeat each arguments)
    }
}
