internal import ArborPrimitives

/// The rules of the lifetimes, in one place: what a resolve does with a registration it found, for each kind of
/// scope.
///
/// | kind | where the instance lives | who builds it, from where | when it is released |
/// | --- | --- | --- | --- |
/// | transient | nowhere: every resolve builds one | this resolution, in the current context | with the caller's references |
/// | graph | the resolution's graph, per registration and context | this resolution, in the current context | when the resolution finishes, unless the caller keeps it |
/// | strong (permanent, custom) | the registration's storage, in its container | the first resolution that needs it, in the owning container (``CreationCoordinator``) | on `close()`, `resetObjectScope`, or when the registration leaves its container |
/// | weak | the registration's storage, weakly | as for strong | when nothing else holds it |
/// | perContainer | a storage in the container the top-level resolve started in (the origin), per registration | the first resolution that needs it there, in the origin | when the origin is closed or deinitialised, or `resetObjectScope(.perContainer)` on it |
///
/// The switch in ``resolveByRules(_:found:depth:arguments:)`` is exhaustive over ``ObjectScope/Storage``: a new
/// kind does not compile until each of these decisions is made for it. ``takesFastPath(_:)`` (FastPath.swift) is an
/// optimisation of the first two rows only.
extension Resolution {
    /// Resolves `key`, which the look-up found registered as `found`, at `depth`, by the rules of the registration's
    /// scope. `arguments` points at the runtime arguments, as a tuple of the key's argument types, or is `nil` for
    /// none. Throws ``LookAgain`` when the registration left its container after the look-up found it.
    func resolveByRules<Service>(
        _ key: ServiceKey,
        found: Found,
        depth: Int,
        arguments: ArgumentsTuple?
    ) throws -> Service {
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
            // Transient: built anew, from the current context.
            let slot = GraphSlot(registration: found.identity, context: state.value.context)
            let instance: Service = try build(
                entry, key: key, slot: slot, kind: kind, depth: depth, arguments: arguments)
            afterBuild(entry, key: key, instance: instance, depth: depth, graphPosition: nil)
            return instance
        case .graph:
            // One per resolution, registration and context.
            let slot = GraphSlot(registration: found.identity, context: state.value.context)
            if let position = state.value.graph.position(of: slot) {
                return state.value.graph.instance(at: position, as: Service.self)
            }
            let instance: Service = try build(
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
        // One call site: `acquire` is inlined, and a second copy made every level of a resolve take more stack.
        return try acquire(found, storage: storage, in: owner, key: key, kind: kind, depth: depth, arguments: arguments)
    }

    /// Where the instance of `found`, whose scope keeps its instances (`kind`: strong, weak or per-container), lives,
    /// and the container that builds it and keeps it: the table above, for those rows. Both engines ask here
    /// (Rules+Async.swift is the `async` one).
    @inline(__always)
    func keeper(
        of found: Found, kind: ObjectScope.Storage
    ) -> (storage: InstanceStorage, owner: Unretained<Container>) {
        switch kind {
        case .perContainer:
            // One per registration and origin, kept by the origin, and built from it.
            let origin = state.value.origin
            return (origin.withObject { $0.perContainerStorage(for: found.entry.object) }, origin)
        case .strong, .weak, .none, .graph:
            // One per registration, kept by the container that holds it, and built from that container.
            guard let held = found.entry.withObject({ $0.storage }) else {
                preconditionFailure("A registration that keeps its instances has a storage.")
            }
            return (held, found.ownerReference)
        }
    }

    /// A permanent, weak or per-container instance `storage` does not hold: waits for the resolution that builds
    /// it, or builds it here, from `owner`, the container that keeps it (see ``CreationCoordinator``).
    @inline(__always)
    private func acquire<Service>(
        _ found: Found,
        storage: InstanceStorage,
        in owner: Unretained<Container>,
        key: ServiceKey,
        kind: ObjectScope.Storage,
        depth: Int,
        arguments: ArgumentsTuple?
    ) throws -> Service {
        let entry = found.entry
        let member = self.member
        switch CreationCoordinator.shared.acquire(
            storage, for: member, group: &state.value.group, solo: &state.value.solo)
        {
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
            throw CancellationError()  // Only an `async` resolve's wait is cancelled.
        case .claimed:
            let slot = GraphSlot(registration: found.identity, context: owner)
            let saved = state.value.context
            state.value.context = owner
            defer { state.value.context = saved }
            let instance: Service
            do {
                instance = try build(entry, key: key, slot: slot, kind: kind, depth: depth, arguments: arguments)
            } catch {
                // Give the claim up now, so that resolutions waiting for this instance can build it themselves.
                CreationCoordinator.shared.abandon(storage, by: member, solo: &state.value.solo)
                throw error
            }
            if kind == .weak, object(in: instance) == nil {
                // A value type has no identity to share: weak scope behaves as transient for it.
                CreationCoordinator.shared.abandon(storage, by: member, solo: &state.value.solo)
            } else {
                CreationCoordinator.shared.built(instance, in: storage, by: member, solo: &state.value.solo)
            }
            afterBuild(entry, key: key, instance: instance, depth: depth, graphPosition: nil, keptBy: storage)
            return instance
        }
    }

    /// Runs the factory of `entry` one level deeper — or, for a forward, resolves its target.
    @inline(__always)
    private func build<Service>(
        _ entry: Unretained<ServiceEntry>,
        key: ServiceKey,
        slot: GraphSlot,
        kind: ObjectScope.Storage,
        depth: Int,
        arguments: ArgumentsTuple?
    ) throws -> Service {
        let outerDepth = try enter(Frame(entry: entry, slot: slot, storage: kind), key: key, depth: depth)
        defer { leave(toDepth: outerDepth) }
        do {
            return try entry.withObject { entry in
                if entry.isForward {
                    return try knownDowncast(entry, to: ForwardingEntry.self)
                        .forward(as: Service.self, in: self, arguments: arguments)
                }
                // The key names the service and argument types exactly: the entry is a `NullaryEntry<Service>` or
                // an `ArgumentsEntry<Service>`, and the downcast is a reinterpretation.
                guard let arguments else { return try NullaryEntry<Service>.build(entry, self) }
                return try ArgumentsEntry<Service>.build(entry, self, arguments: arguments)
            }
        } catch {
            throw factoryError(error, key: key)
        }
    }

    /// Records a new instance for the leak trackers, and queues its hooks. `graphPosition` is where the graph keeps
    /// the instance, if it does, and `storage` the storage that keeps it, if one does. The instance's own frame has
    /// left `building`: its key ends the path.
    func afterBuild<Service>(
        _ entry: Unretained<ServiceEntry>,
        key: ServiceKey,
        instance: Service,
        depth: Int,
        graphPosition: Int?,
        keptBy storage: InstanceStorage? = nil
    ) {
        if let trackers = state.value.diagnostics?.trackers, !trackers.isEmpty {
            LeakTracker.record(
                instance, entry: entry.object, keptBy: storage, owner: currentContext, path: path() + [key],
                in: trackers)
        }
        guard entry.withObject({ $0.hasHooks }) else { return }
        queueHooks(of: entry, instance: instance, depth: depth, graphPosition: graphPosition, builtLast: true)
    }

    // MARK: Validation

    /// Tells `observer` that `key` is being resolved here: the edge from the service being built (or whose hook
    /// runs), and a captive — a weak-scoped or short-lived service resolved while a strongly kept instance is built
    /// or wired, or a per-container one while a permanent or weak one is.
    func observe(_ key: ServiceKey, entry: ServiceEntry, by observer: ValidationObserver) {
        let scope = entry.scope
        let building = state.value.building.elements
        let hookPath = keys(of: state.value.hookPath)
        let inHook = building.isEmpty && !hookPath.isEmpty
        let from = building.last?.key ?? hookPath.last
        observer.recordEdge(from: from, to: key, scope: scope, viaHook: inHook)
        let isPerContainer = scope.storage == .perContainer
        guard scope.storage == .weak || entry.isShortLived || isPerContainer else { return }
        // A per-container instance is captive in anything every container shares; the others only in what is kept
        // for good.
        let holds: (ObjectScope.Storage) -> Bool = { $0 == .strong || (isPerContainer && $0 == .weak) }
        let holder =
            building.last(where: { holds($0.storage) })?.key
            ?? (holds(state.value.hookStorage) ? hookPath.last : nil)
        if let holder {
            observer.recordCaptive(key, heldBy: holder, path: path() + [key], isPerContainer: isPerContainer)
        }
    }
}

/// Says that the registration a resolve found left its container meanwhile: the resolve looks the key up again.
struct LookAgain: Error {}

/// Says that a service without a registration cannot be derived either: the resolve throws `.notRegistered`.
struct NotDerivable: Error {}
