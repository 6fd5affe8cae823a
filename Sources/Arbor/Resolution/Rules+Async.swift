internal import ArborPrimitives

/// The rules of the lifetimes (Rules.swift), for an `async` resolution: the same table — where each kind of
/// instance lives, who builds it and from which container (`keeper(of:kind:)`) — with the factory awaited when it
/// is `async` or runs on the main actor, and a wait for an instance another resolution builds suspended instead of
/// blocking (``CreationCoordinator/acquireAsync(_:for:)``). Hooks are queued and errors built by the same code.
extension Resolution {
    /// `resolveByRules`, awaiting what must be awaited. Throws ``LookAgain`` when the registration left its container
    /// after the look-up found it. Inlined: every `async` function a resolve passes through allocates a frame from its
    /// task (measured: the frames of a nested resolve were a third of an `async` graph's cost).
    @inline(__always)
    func resolveByRulesAsync<Service>(
        _ key: ServiceKey,
        found: Found,
        depth: Int,
        arguments: AsyncArgumentsBox?
    ) async throws -> Service {
        guard depth <= state.value.maxDepth else {
            throw depthLimitError(key)
        }
        let entry = found.entry
        if let observer = state.value.diagnostics?.observer {
            observe(key, entry: entry.object, by: observer)
        }
        let kind = entry.withObject { $0.storageKind }
        let storage: InstanceStorage
        let owner: Unretained<Container>
        switch kind {
        case .none:
            let slot = GraphSlot(registration: found.identity, context: state.value.context)
            let instance: Service = try await buildAsync(
                entry, key: key, slot: slot, kind: kind, depth: depth, arguments: arguments)
            afterBuild(entry, key: key, instance: instance, depth: depth, graphPosition: nil)
            return instance
        case .graph:
            let slot = GraphSlot(registration: found.identity, context: state.value.context)
            if let position = state.value.graph.position(of: slot) {
                return state.value.graph.instance(at: position, as: Service.self)
            }
            let instance: Service = try await buildAsync(
                entry, key: key, slot: slot, kind: kind, depth: depth, arguments: arguments)
            let position = state.value.graph.add(instance, for: slot)
            afterBuild(entry, key: key, instance: instance, depth: depth, graphPosition: position)
            return instance
        case .strong, .weak:
            do throws(NotHeld) { return try found.loadHeld(as: Service.self) } catch {}
            (storage, owner) = keeper(of: found, kind: kind)
        case .perContainer:
            (storage, owner) = keeper(of: found, kind: kind)
            do throws(NotHeld) { return try storage.loadHeld(as: Service.self) } catch {}
        }
        let coordinator = CreationCoordinator.shared
        let acquisition = await coordinator.acquireAsync(storage, for: self)
        rebind()
        switch acquisition {
        case .held(let instance), .shared(let instance):
            return try cast(instance, key: key)
        case .retired:
            throw LookAgain()
        case .closed:
            throw closedError(key)
        case .wouldBlockMainActor:
            throw error(.asyncRequired, key: key, detail: CreationCoordinator.mainActorDetail)
        case .circular(let detail):
            throw error(.circularDependency, key: key, detail: detail)
        case .failed(let failure):
            throw groupFailure(failure, key: key)
        case .cancelled:
            throw CancellationError()
        case .claimed:
            let slot = GraphSlot(registration: found.identity, context: owner)
            let saved = state.value.context
            state.value.context = owner
            defer { state.value.context = saved }
            let instance: Service
            do {
                instance = try await buildAsync(
                    entry, key: key, slot: slot, kind: kind, depth: depth, arguments: arguments)
            } catch {
                coordinator.abandon(storage, by: member, solo: &state.value.solo)
                throw error
            }
            if kind == .weak, object(in: instance) == nil {
                coordinator.abandon(storage, by: member, solo: &state.value.solo)
            } else {
                coordinator.built(instance, in: storage, by: member, solo: &state.value.solo)
            }
            afterBuild(entry, key: key, instance: instance, depth: depth, graphPosition: nil, keptBy: storage)
            return instance
        }
    }

    /// Runs the factory of `entry` one level deeper: a synchronous one hosted on this thread, an `async` or
    /// main-actor one awaited — or, for a forward, resolves its target.
    @inline(__always)
    private func buildAsync<Service>(
        _ entry: Unretained<ServiceEntry>,
        key: ServiceKey,
        slot: GraphSlot,
        kind: ObjectScope.Storage,
        depth: Int,
        arguments: AsyncArgumentsBox?
    ) async throws -> Service {
        let outerDepth = try enter(Frame(entry: entry, slot: slot, storage: kind), key: key, depth: depth)
        defer { leave(toDepth: outerDepth) }
        // The resolution's reader keeps the entry alive while it is used, across suspensions (``Reclamation``).
        let object = entry.object
        do {
            if object.isForward {
                return try await knownDowncast(object, to: ForwardingEntry.self)
                    .forwardAsync(as: Service.self, in: self, arguments: arguments)
            }
            switch object.factoryKind {
            case .synchronous:
                return try hostingSynchronousCode {
                    guard let arguments else { return try NullaryEntry<Service>.build(object, self) }
                    return try arguments.withArgumentsTuple { tuple in
                        try ArgumentsEntry<Service>.build(object, self, arguments: tuple)
                    }
                }
            case .async, .mainActor:
                defer { rebind() }
                guard let arguments else { return try await AsyncNullaryEntry<Service>.buildAsync(object, self) }
                return try await AsyncArgumentsEntry<Service>.buildAsync(object, self, arguments: arguments)
            }
        } catch {
            throw factoryError(error, key: key)
        }
    }

    /// `resolveTarget`, for an `async` resolution: the registration a forward points to, awaited.
    func resolveTargetAsync<Target>(
        _: Target.Type,
        key: ServiceKey,
        in owner: Container,
        arguments: AsyncArgumentsBox?
    ) async throws -> Target {
        let depth = state.value.depth
        var found = find(key, in: owner)
        while true {
            guard let registered = found else {
                guard depth <= state.value.maxDepth else { throw depthLimitError(key) }
                throw notRegisteredError(key)
            }
            do {
                return try await resolveByRulesAsync(key, found: registered, depth: depth, arguments: arguments)
            } catch is LookAgain {
                found = findUncached(key, in: owner)
            }
        }
    }

    // MARK: Hooks

    /// `runPendingHooks`, awaiting `async` hooks: each hands back its work as an ``AsyncHookRequest``.
    func runPendingHooksAsync() async throws {
        var next = 0
        while next < state.value.hooks.count {
            let pending = state.value.hooks[next]
            next += 1
            let saved = (state.value.context, state.value.depth, state.value.hookPath, state.value.hookStorage)
            state.value.context = pending.context
            state.value.depth = pending.depth
            state.value.hookPath = pending.path
            state.value.hookStorage = pending.storage
            defer {
                (state.value.context, state.value.depth, state.value.hookPath, state.value.hookStorage) = saved
            }
            let count = pending.entry.withObject { $0.hooks.count }
            for index in 0..<max(1, count) {
                try await runHookAsync(of: pending) { entry, instance in
                    if index == 0 {
                        try entry.firstHook?.run(self, instance)
                    } else {
                        try entry.hooks[index].run(self, instance)
                    }
                }
            }
        }
    }

    /// `runHook`, hosted on this thread, then awaiting the work an `async` hook hands back.
    private func runHookAsync(
        of pending: HookQueue.Pending,
        _ run: (ServiceEntry, ValueStack.Location) throws -> Void
    ) async throws {
        do {
            try hostingSynchronousCode {
                let instance = state.value.hooks.location(of: pending, in: state.value.graph)
                try pending.entry.withObject { try run($0, instance) }
            }
        } catch let request as AsyncHookRequest {
            do {
                try await request.work()
                rebind()
            } catch {
                rebind()
                throw hookFailure(error, of: pending)
            }
        } catch {
            throw hookFailure(error, of: pending)
        }
    }

    private func hookFailure(_ error: any Error, of pending: HookQueue.Pending) -> any Error {
        let path = keys(of: pending.path)
        return failure(error, key: path.last!, path: path, detail: "an initCompleted hook threw")
    }
}
