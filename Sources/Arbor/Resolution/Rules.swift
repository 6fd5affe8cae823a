internal import ArborPrimitives

/// The rules of the lifetimes, in one place: what a resolve does with a registration it found, for each kind of
/// scope. Both engines ask here; they differ only in how they call a factory and how they wait (Drivers.swift).
///
/// | kind | where the instance lives | who builds it, from where | when it is released |
/// | --- | --- | --- | --- |
/// | transient | nowhere: every resolve builds one | this resolution, in the current context | with the caller's references |
/// | graph | the resolution's graph, per registration and context | this resolution, in the current context | when the resolution finishes, unless the caller keeps it |
/// | strong (permanent, custom) | the registration's storage, in its container | the first resolution that needs it, in the owning container (``CreationCoordinator``) | on `close()`, `resetObjectScope`, or when the registration leaves its container |
/// | weak | the registration's storage, weakly | as for strong | when nothing else holds it |
/// | perContainer | a storage in the container the top-level resolve started in (the origin), per registration | the first resolution that needs it there, in the origin | when the origin is closed or deinitialised, or `resetObjectScope(.perContainer)` on it |
///
/// The switch in ``decide(_:found:depth:)`` is exhaustive over ``ObjectScope/Storage``: a new kind does not compile
/// until each of these decisions is made for it. ``takesFastPath(_:)`` (FastPath.swift) is an optimisation of the
/// first two rows only.
enum RuleDecision {
    /// Build a new instance in the current context: a transient one, or a graph-scoped one the graph keeps.
    case build(GraphSlot, keepsInGraph: Bool)
    /// The graph holds the instance already, at this position.
    case inGraph(Int)
    /// A storage keeps the instance: take what it holds, or acquire it — build it from `owner`, the container that
    /// keeps it, or wait for the resolution that builds it. The owner keeps the storage alive. `mayHold` is `false`
    /// for a storage the decision made, and at depth 0 for one the top-level resolve has just read and found empty:
    /// the resolve goes straight to acquiring, which takes a held instance too (a lock, an unlock and a thrown
    /// `NotHeld` fewer for a request child's per-container instance, and for a weak instance built again).
    case stored(Unretained<InstanceStorage>, owner: Unretained<Container>, mayHold: Bool)
    /// A storage claimed solo for this resolution, as acquiring it would have: build it from `owner`. A per-container
    /// storage the decision made and claimed (a lock of the origin fewer than making it, then claiming it), or at depth
    /// 0 the storage the top-level resolve claimed as it read it (``TopLevelRead/claimed(_:)``).
    case claimed(Unretained<InstanceStorage>, owner: Unretained<Container>)
}

/// What a top-level resolve's read of a permanent or weak registration's instance, before the resolve began, came
/// to, when it found none: the rules take it at depth 0 instead of reading again.
enum TopLevelRead {
    /// It read nothing: the registration keeps no instance, or something watches.
    case notRead
    /// It found no instance, and left the storage as it was: acquire it.
    case foundNone
    /// It found no instance, and claimed the storage for this resolution's solo build in the same critical section
    /// (`InstanceStorage.loadHeld(as:protectedBy:claimingFor:claimed:)`): build it.
    case claimed(Unretained<InstanceStorage>)
}

extension Resolution {
    /// What the rules say a resolve of `key`, found registered as `found`, does at `depth`.
    @inline(__always)
    func decide(_ key: ServiceKey, found: Found, depth: Int) throws -> RuleDecision {
        try checkDepth(depth, key)
        if let validation = diagnostics?.validation { observe(key, entry: found.entry.object, by: validation) }
        let kind = found.entry.withObject { $0.storageKind }
        switch kind {
        case .none:
            return .build(GraphSlot(registration: found.identity, context: context), keepsInGraph: false)
        case .graph:
            // One per resolution, registration and context.
            let slot = GraphSlot(registration: found.identity, context: context)
            if let position = graphPosition(of: slot) {
                if let observation { observation.reused(found.entry.object, depth: depth, source: .graph) }
                return .inGraph(position)
            }
            return .build(slot, keepsInGraph: true)
        case .strong, .weak:
            // One per registration, kept by the container that holds it, and built from that container.
            guard let storage = found.entry.withObject({ $0.heldStorage }) else {
                preconditionFailure("A registration that keeps its instances has a storage.")
            }
            // At depth 0, the top-level resolve may have just read it and found none, or claimed it.
            guard depth == 0 else { return .stored(storage, owner: found.ownerReference, mayHold: true) }
            switch takeTopLevelRead() {
            case .notRead:
                return .stored(storage, owner: found.ownerReference, mayHold: true)
            case .foundNone:
                return .stored(storage, owner: found.ownerReference, mayHold: false)
            case .claimed(let claimed):
                internalInvariant(claimed == storage, "the top-level resolve claimed the storage it found")
                return .claimed(storage, owner: found.ownerReference)
            }
        case .perContainer:
            // One per registration and origin, kept by the origin, and built from it. The origin keeps its
            // per-container storages until it is deinitialised, and the caller keeps the origin.
            let origin = originReference
            // A resolution without a creation group builds solo: a storage made now is claimed as it is made.
            let member = withClaims { $0.group == nil } ? self.member : nil
            let made = origin.withObject { $0.perContainerStorageReference(for: found.entry, claimingFor: member) }
            guard made.claimed else { return .stored(made.storage, owner: origin, mayHold: !made.isNew) }
            withClaims { $0.solo.append(made.storage.object) }
            return .claimed(made.storage, owner: origin)
        }
    }

    /// The instance `storage` holds, reported as taken from its container; throws when it holds none.
    @inline(__always)
    func takeHeld<Service>(
        _ storage: Unretained<InstanceStorage>, found: Found, depth: Int
    ) throws(NotHeld) -> Service {
        let instance = try storage.loadHeld(as: Service.self, protectedBy: threadHazard)
        reportReuse(found, depth: depth)
        return instance
    }

    /// Tells the observers, if any, that the resolve takes an instance a container kept.
    @inline(__always)
    func reportReuse(_ found: Found, depth: Int) {
        if let observation { observation.reused(found.entry.object, depth: depth, source: .container) }
    }

    /// What an acquisition of a storage's instance comes to: the instance to take, `nil` when the caller claimed the
    /// build, or the error the rules give. Throws ``LookAgain`` when the registration left its container meanwhile.
    /// Consumes the acquisition: copying it and destroying the copy cost 550 instructions of a request child's
    /// per-container graph (`request_scope_per_container` 26,022 → 25,472).
    @inline(__always)
    func settle(_ acquisition: consuming CreationCoordinator.Acquisition, key: ServiceKey) throws -> Any? {
        switch consume acquisition {
        case .held(let instance), .shared(let instance):
            return instance
        case .claimed:
            return nil
        case .retired:
            throw LookAgain()
        case .closed:
            throw closedError(key)
        case .circular(var detail):
            // Nested on this thread in an observer's callback, not in a factory's: the observer resolved it.
            if detail == CreationCoordinator.nestedDetail, Observation.isReporting {
                detail = CreationCoordinator.observerNestedDetail
            }
            throw error(.circularDependency, key: key, detail: detail)
        case .failed(let failure):
            throw groupFailure(failure, key: key)
        case .cancelled:
            throw CancellationError()  // Only an `async` resolve's wait is cancelled.
        case .wouldBlockMainActor:
            throw mainActorWaitError(key)
        case .wouldBlockTaskThread(let storage):
            throw taskThreadWaitError(key, waitingFor: storage)
        }
    }

    /// What publishing the claimed instances came to, as the error to throw, if any.
    @inline(__always)
    func settle(_ outcome: CreationCoordinator.Outcome, key: ServiceKey) throws {
        switch outcome {
        case .published:
            return
        case .failed(let failure):
            throw groupFailure(failure, key: key)
        case .wouldDeadlock(let detail):
            throw error(.circularDependency, key: key, detail: detail)
        case .wouldBlockMainActor:
            throw mainActorWaitError(key)
        case .cancelled:
            throw CancellationError()  // Only an `async` resolve's wait is cancelled.
        }
    }

    /// The error to throw when another member of the creation group failed: its own `ResolutionError`, which says
    /// what failed and where; `.circularDependency` or `.asyncRequired` when waiting for the group would never have
    /// ended or would have blocked the main actor; and for any other error of another member's — its task was
    /// cancelled — `.factoryFailed` wrapping it, saying that the instances built together were dropped.
    func groupFailure(_ failure: any Error, key: ServiceKey) -> any Error {
        if failure is ResolutionError { return failure }
        if let deadlock = failure as? CoordinatorDeadlock {
            return error(.circularDependency, key: key, detail: deadlock.description)
        }
        if failure is MainActorWait {
            return mainActorWaitError(key)
        }
        return self.failure(
            failure, key: key, path: path(endingWith: key),
            detail: """
                another resolution that built the same cycle of instances together with this one failed, so none of \
                them is kept (resolve again)
                """)
    }

    // MARK: Validation

    /// Tells `observer` that `key` is being resolved here: the edge from the service being built (or whose hook
    /// runs), and a captive — a weak-scoped or short-lived service resolved while a strongly kept instance is built
    /// or wired, or a per-container one while a permanent or weak one is.
    func observe(_ key: ServiceKey, entry: ServiceEntry, by observer: ValidationObserver) {
        let scope = entry.scope
        let building = frames
        let hookPath = self.hookPath.keys
        let inHook = building.isEmpty && !hookPath.isEmpty
        let from = building.last?.key ?? hookPath.last
        observer.recordEdge(from: from, to: key, scope: scope, viaHook: inHook)
        let isPerContainer = scope.storage == .perContainer
        guard scope.storage == .weak || entry.isShortLived || isPerContainer else { return }
        // A per-container instance is captive in anything every container shares; the others only in what is kept
        // for good.
        if let holder = holder(keepingForGood: !isPerContainer) {
            let kind: CaptiveKind = isPerContainer ? .perContainer : scope.storage == .weak ? .weak : .shortLived
            observer.recordCaptive(key, heldBy: holder, path: path(endingWith: key), kind: kind)
        }
    }

    /// Tells the validation, if one runs, that `wrapper` (a `Lazy` or `Provider`) of `key` is made here. A wrapper of a
    /// per-container service, kept by an instance every container shares, resolves the service where that instance
    /// was built, the same one for every container: as captive as the service itself.
    func observeWrapper(_ wrapper: Any.Type, of key: ServiceKey) {
        guard let validation = diagnostics?.validation, let found = find(key, in: context),
            found.entry.withObject({ $0.scope.storage }) == .perContainer,
            let holder = holder(keepingForGood: false)
        else { return }
        let wrapperKey = ServiceKey(serviceType: wrapper, name: key.name, argumentsType: Void.self)
        validation.recordCaptive(
            wrapperKey, heldBy: holder, path: path(endingWith: wrapperKey), kind: .perContainerWrapper(key))
    }

    /// The innermost instance being built or wired now that a container keeps: strongly, or (unless `keepingForGood`)
    /// weakly too, as every container shares a weak instance.
    private func holder(keepingForGood: Bool) -> ServiceKey? {
        let (hookPath, hookStorage) = self.hookPath
        let holds: (ObjectScope.Storage) -> Bool = { $0 == .strong || (!keepingForGood && $0 == .weak) }
        return frames.last(where: { holds($0.storage) })?.key ?? (holds(hookStorage) ? hookPath.last : nil)
    }
}

/// Says that the registration a resolve found left its container meanwhile: the resolve looks the key up again.
struct LookAgain: Error {}

/// Says that a service without a registration cannot be derived either: the resolve throws `.notRegistered`.
struct NotDerivable: Error {}
