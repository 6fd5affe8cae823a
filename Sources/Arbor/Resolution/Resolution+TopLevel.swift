internal import ArborPrimitives

extension Resolution {
    // MARK: Top level

    /// Resolves a service as a new top-level resolution that starts in `container`.
    ///
    /// Usually in the thread's pooled resolution, borrowed without taking it out of the pool; in a new one when
    /// that is busy (a factory called a container's `resolve`).
    @inline(__always)
    static func resolve<Service>(_ serviceType: Service.Type, name: String?, in container: Container) throws -> Service
    {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        if let pooled = ResolutionPool.idle() {
            // Back to the pool only after the borrow ended: if a factory kept the resolution, leaving the pool
            // releases the pool's reference, and the last one may be another thread's.
            defer { ResolutionPool.returnToPool(pooled) }
            return try pooled.withObject { try $0.resolveTopLevel(key, in: container) }
        }
        return try resolveInNewResolution(in: container) { try $0.resolveTopLevel(key, in: container) }
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
            defer { ResolutionPool.returnToPool(pooled) }
            return try pooled.withObject {
                try $0.resolveTopLevel(key, in: container, arguments: repeat each arguments)
            }
        }
        return try resolveInNewResolution(in: container) {
            try $0.resolveTopLevel(key, in: container, arguments: repeat each arguments)
        }
    }

    /// Resolves a plain registration with runtime arguments that the thread's look-up cache knows, as a new
    /// top-level resolution that starts in `container`, and writes the instance to `result`. Returns `false` when
    /// the registration is not plain, is not in the cache, or anything watches, having done nothing: the caller
    /// takes the general path.
    @inline(__always)
    static func resolveQuickly<Service>(
        _ key: ServiceKey,
        in container: Container,
        arguments: ArgumentsTuple,
        into result: ResultSlot<Service>
    ) throws -> Bool {
        guard let pooled = ResolutionPool.idle() else { return false }
        defer { ResolutionPool.returnToPool(pooled) }
        return try pooled.withObject {
            try $0.resolveTopLevelQuickly(key, in: container, arguments: arguments, into: result)
        }
    }

    /// Runs `body` in a resolution taken from the pool or made for the purpose: the pooled one is busy (a factory
    /// called a container's `resolve`), or the thread has none yet.
    static func resolveInNewResolution<Service>(
        in container: Container,
        _ body: (Resolution) throws -> Service
    ) throws -> Service {
        var resolution = ResolutionPool.take(for: container)
        defer { ResolutionPool.recycle(&resolution) }
        return try body(resolution)
    }

    /// One attempt at a top-level resolve of a key without runtime arguments, in this idle resolution.
    @inline(__always)
    func resolveTopLevel<Service>(_ key: ServiceKey, in container: Container) throws -> Service {
        try resolveTopLevel(key, in: container) { found in
            if let found, takesFastPath(found), found.shape == .transient, !found.hasHooks {
                return try buildOutermost(found, key: key)
            }
            return try resolve(key, found: found, depth: 0)
        }
    }

    /// One attempt at a top-level resolve of a key with runtime arguments, in this idle resolution.
    func resolveTopLevel<Service, each Argument>(
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
    func resolveTopLevel<Service>(
        _ key: ServiceKey,
        in container: Container,
        resolveFound: (Found?) throws -> Service
    ) throws -> Service {
        withCache { $0.beginResolving(in: container) }
        defer { withCache { $0.endResolving() } }
        let lookup = try lookUpTopLevel(key, in: container)
        if let pending = lookup.pending { return pending.load(as: Service.self) }
        // Fast path: an instance a permanent or weak registration already holds needs no resolution at all, unless
        // something watches. Gated on the shape, which takes per-container registrations in too (their read throws at
        // once): `hasHeldStorage`, which the nested resolve uses to leave them out, cost `transient_leaf` and
        // `singleton_hit` 1% here.
        var read = TopLevelRead.notRead
        if let found = lookup.found, found.shape == .held, lookup.diagnostics == nil {
            do throws(NotHeld) { return try readHeld(found, as: Service.self, into: &read) } catch {}
        }
        begin(key, in: container, maxDepth: lookup.depthLimit, diagnostics: lookup.diagnostics, topLevelRead: read)
        do {
            let instance = try resolveFound(lookup.found)
            try complete(key)
            return instance
        } catch {
            throw failed(error)
        }
    }

    /// The top-level resolve's fast path, before it begins: the instance a permanent or weak registration holds. When
    /// it holds none, the storage is claimed for this resolution's build in the same critical section, if nothing
    /// else builds it (`read` becomes `.claimed`, and the claim is the resolution's), or left as it was (`.foundNone`).
    /// A per-container registration keeps no instance here (`read` becomes `.foundNone` at once).
    @inline(__always)
    func readHeld<Service>(
        _ found: Found, as _: Service.Type, into read: inout TopLevelRead
    ) throws(NotHeld) -> Service {
        guard let storage = found.entry.withObject({ $0.heldStorage }) else {
            read = .foundNone
            throw NotHeld()
        }
        internalInvariant(!hasClaims, "an idle resolution has claimed nothing")
        var claimed = false
        do throws(NotHeld) {
            return try storage.loadHeld(
                as: Service.self, protectedBy: threadHazard, claimingFor: memberAtBegin, claimed: &claimed)
        } catch {
            if claimed {
                withClaims { $0.solo.append(storage.object) }
                read = .claimed(storage)
            } else {
                read = .foundNone
            }
            throw error
        }
    }

    // MARK: Top level, async

    /// Resolves a service as a new top-level `async` resolution that starts in `container`.
    static func resolveAsync<Service>(
        _ serviceType: Service.Type, name: String?, in container: Container
    ) async throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        return try await resolveAsync(key, box: nil, in: container) { _ in
            try container.resolve(serviceType, name: name)
        }
    }

    /// Resolves a service whose factory takes runtime arguments, as a new top-level `async` resolution.
    static func resolveAsync<Service, each Argument>(
        _ serviceType: Service.Type, name: String?, in container: Container, arguments: repeat each Argument
    ) async throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: (repeat each Argument).self)
        guard key.hasArguments else { return try await resolveAsync(serviceType, name: name, in: container) }
        return try await resolveAsync(key, box: AsyncArgumentsBox.make(repeat each arguments), in: container) { _ in
            try container.resolve(serviceType, name: name, arguments: repeat each arguments)
        }
    }

    /// Resolves `key`, its runtime arguments in `box`, as a new top-level `async` resolution. `synchronous` is the same
    /// resolve, synchronous: what a key without a registration takes (a `Lazy`, a `Provider`, `.notRegistered`).
    static func resolveAsync<Service>(
        _ key: ServiceKey,
        box: AsyncArgumentsBox?,
        in container: Container,
        synchronous: (any Resolver) throws -> Service
    ) async throws -> Service {
        var resolution = AsyncResolutionPool.take(for: container)
        defer { AsyncResolutionPool.recycle(&resolution) }
        return try await resolution.resolveTopLevelAsync(key, in: container, arguments: box) {
            try synchronous(container)
        }
    }

    /// One top-level `async` resolve in this idle `async` resolution. `unregistered` resolves the key when it has no
    /// registration, with the caller's runtime arguments, as a synchronous top-level resolve.
    func resolveTopLevelAsync<Service>(
        _ key: ServiceKey,
        in container: Container,
        arguments: AsyncArgumentsBox?,
        unregistered: () throws -> Service
    ) async throws -> Service {
        rebind()
        reader?.enter(container.root)
        defer { reader?.exit() }
        let lookup = try lookUpTopLevel(key, in: container)
        if let pending = lookup.pending { return pending.load(as: Service.self) }
        guard lookup.found != nil || Service.self is any AsyncDerivedService.Type else { return try unregistered() }
        var read = TopLevelRead.notRead
        if arguments == nil, let found = lookup.found, found.shape == .held, lookup.diagnostics == nil {
            do throws(NotHeld) { return try readHeld(found, as: Service.self, into: &read) } catch {}
        }
        begin(key, in: container, maxDepth: lookup.depthLimit, diagnostics: lookup.diagnostics, topLevelRead: read)
        do {
            let instance: Service = try await resolveAsync(key, found: lookup.found, depth: 0, arguments: arguments)
            try await completeAsync(key)
            return instance
        } catch {
            throw await failedAsync(error)
        }
    }

    /// What a top-level resolve needs to know before it begins: where the key is registered, and the settings of
    /// the container it starts in. From the thread's look-up cache, or found under the registries' locks and then
    /// cached. Throws if the container was closed. Or, with nothing found, the box of the instance the container
    /// keeps pending under the key (``PendingInstance``), which is the resolve's answer.
    @inline(__always)
    func lookUpTopLevel(
        _ key: ServiceKey,
        in container: Container
    ) throws -> (found: Found?, depthLimit: Int, diagnostics: Diagnostics?, pending: StoredValue?) {
        if let hit = withCache({ $0.hit(key, in: container) }) {
            if hit.isClosed { throw closedError(key, in: container, diagnostics: hit.diagnostics) }
            return (hit.found, hit.depthLimit, hit.diagnostics, nil)
        }
        // A request's value, kept as it was registered in its child, while nothing watches: read as it is, not filed.
        // No thread has it in its cache: a look-up of it files it.
        if container.mayKeepPending(key), let box = container.pendingBox(key) {
            return (nil, Registry.defaultDepthLimit, nil, box)
        }
        // A container with nothing of its own for the key and a new container's settings — a request's child, for
        // the services its root registers — finds what its parent finds: when the thread has that in its cache, take
        // it, without the container's lock and without a cache slot of its own. (Measured: the lock and the slot
        // were 700 instructions of a request's two top-level resolves from its child.)
        if container.defersToParent(key), let parent = container.unretainedParent,
            let hit = withCache({ $0.hit(key, in: parent) })
        {
            return (hit.found, Registry.defaultDepthLimit, nil, nil)
        }
        let (found, depthLimit, diagnostics, isClosed) = withCache { cache in
            let lookup = container.lookupForResolution(key, cache: cache)
            if !lookup.isClosed, let found = lookup.found {
                cache.store(key, in: container, version: lookup.version, found: found, lookup: lookup)
            }
            return (lookup.found, lookup.depthLimit, lookup.diagnostics, lookup.isClosed)
        }
        if isClosed { throw closedError(key, in: container, diagnostics: diagnostics) }
        return (found, depthLimit, diagnostics, nil)
    }

    /// `.containerClosed` for a top-level resolve of `key` in `container`; observers of the container, if any, see
    /// the resolve begin and fail, as they see every other failure. Out of line, like the error itself.
    @inline(never)
    func closedError(_ key: ServiceKey, in container: Container, diagnostics: Diagnostics?) -> any Error {
        let error = ResolutionError.closed(key, resolvingIn: container)
        guard let diagnostics, !diagnostics.observers.isEmpty else { return error }
        begin(key, in: container, maxDepth: Registry.defaultDepthLimit, diagnostics: diagnostics)
        return failed(error)
    }
}
