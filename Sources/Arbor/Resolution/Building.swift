internal import ArborPrimitives

/// A build under way, one level deeper: the frame it entered and what to do with the instance its factory returns.
/// Both engines begin, finish and fail a build here; they differ only in how they call the factory in between.
///
/// Its key is its entry's: a registration is found under its own key (and a forward's entry is the forward's).
/// Keeping the key here would copy four more words with every step.
struct Building {
    let entry: Unretained<ServiceEntry>
    let slot: GraphSlot
    let kind: ObjectScope.Storage
    let depth: Int
    /// The depth to go back to when the frame is left.
    let outerDepth: Int
    /// The graph keeps the instance (a graph-scoped one).
    let keepsInGraph: Bool
    /// The storage the resolution claimed, for a permanent, weak or per-container instance, and the context to
    /// restore once the instance is recorded; `nil` for a transient or graph-scoped one. Unretained, so that a
    /// `Building` is trivial to copy (measured: with a strong reference, copying and destroying it were 93 instructions
    /// of a weak build's 5,300): the container that keeps the storage outlives the resolve, and a registration that
    /// leaves it meanwhile is freed only once no resolution can still use it (``Reclamation``).
    let claim: (storage: Unretained<InstanceStorage>, savedContext: Unretained<Container>)?
}

extension Resolution {
    /// Enters the frame of a transient or graph-scoped build of `found` in the current context.
    @inline(__always)
    func beginBuild(
        _ found: Found, key: ServiceKey, slot: GraphSlot, depth: Int, keepsInGraph: Bool
    ) throws -> Building {
        let kind: ObjectScope.Storage = keepsInGraph ? .graph : .none
        let outerDepth = try enter(Frame(entry: found.entry, slot: slot, storage: kind), key: key, depth: depth)
        if let observation { observation.startTiming() }
        return Building(
            entry: found.entry, slot: slot, kind: kind, depth: depth, outerDepth: outerDepth,
            keepsInGraph: keepsInGraph, claim: nil)
    }

    /// Enters the frame of the build of a storage's instance, which the resolution just claimed: the instance is built
    /// from `owner`, the container that keeps it. If the frame cannot be entered, the claim is given up.
    @inline(__always)
    func beginClaimedBuild(
        _ found: Found, key: ServiceKey, storage: InstanceStorage, owner: Unretained<Container>, depth: Int
    ) throws -> Building {
        let kind = found.entry.withObject { $0.storageKind }
        let slot = GraphSlot(registration: found.identity, context: owner)
        let saved = switchContext(to: owner)
        let outerDepth: Int
        do {
            outerDepth = try enter(Frame(entry: found.entry, slot: slot, storage: kind), key: key, depth: depth)
        } catch {
            restoreContext(saved)
            abandon(storage)
            throw error
        }
        if let observation { observation.startTiming() }
        return Building(
            entry: found.entry, slot: slot, kind: kind, depth: depth, outerDepth: outerDepth,
            keepsInGraph: false, claim: (Unretained(storage, retainedInChecks: false), saved))
    }

    /// Whether the graph keeps a graph-scoped instance built at `depth`, of a registration with hooks or without: always,
    /// but for the outermost one when no hook waits to run and nothing watches. The resolution is then over, nothing can
    /// ask for that instance again, and the graph need not keep it (a retain and a release saved).
    @inline(__always)
    func graphKeepsInstance(builtAt depth: Int, hasHooks: Bool) -> Bool {
        depth > 0 || hasHooks || hasPendingHooks || diagnostics != nil
    }

    /// Whether `building` keeps, queues and reports nothing once its factory returns: a transient instance without
    /// hooks, while no observer watches. ``callBareFactory(_:arguments:)`` builds it.
    @inline(__always)
    func isBare(_ building: Building) -> Bool {
        !building.keepsInGraph && building.claim == nil && observation == nil
            && !building.entry.withObject { $0.hasHooks }
    }

    /// Runs the factory of a bare build (``isBare(_:)``) and leaves its frame: the factory writes its instance straight
    /// into the caller's memory (measured: through a local, a copy by the type's value witness cost a transient
    /// resolve 34 instructions, 5% of `child_depth_5`).
    @inline(__always)
    func callBareFactory<Service>(_ building: Building, arguments: ArgumentsTuple?) throws -> Service {
        defer { leave(toDepth: building.outerDepth) }
        do {
            return try callFactory(building, arguments: arguments)
        } catch {
            throw factoryError(error, key: building.entry.withObject { $0.key })  // Made before the frame is left.
        }
    }

    /// The factory returned `instance`: leaves the frame, keeps the instance where its lifetime says — in the graph,
    /// or in the claimed storage (a weak value type, which has no identity to share, in none: weak scope behaves as
    /// transient for it) — tells the observers, if any, and queues its hooks, from the context it was built in.
    @inline(__always)
    func finishBuild<Service>(_ building: Building, _ instance: Service) {
        leave(toDepth: building.outerDepth)
        var graphPosition: Int?
        if building.keepsInGraph,
            graphKeepsInstance(builtAt: building.depth, hasHooks: building.entry.withObject { $0.hasHooks })
        {
            graphPosition = keepInGraph(instance, for: building.slot)
        }
        // Observers hear of the build before it is published: no other resolution's reuse comes first.
        if let observation { report(instance, builtBy: building, to: observation) }
        if let claim = building.claim {
            claim.storage.withObject { storage in
                if building.kind == .weak, object(in: instance) == nil {
                    abandon(storage)
                } else if !publishedAtOnce(instance, building, in: storage) {
                    built(instance, in: storage)
                    kept()
                }
            }
        }
        if building.entry.withObject({ $0.hasHooks }) {
            queueHooks(
                of: building.entry, instance: instance, depth: building.depth, graphPosition: graphPosition,
                builtLast: true)
        }
        if let claim = building.claim { restoreContext(claim.savedContext) }
    }

    /// Tells the observers that `building` built `instance`. Out of line: see ``Observation``.
    @inline(never)
    func report<Service>(_ instance: Service, builtBy building: Building, to observation: Observation) {
        let entry = building.entry.object
        observation.built(
            instance, key: entry.key, scope: entry.scope, keeper: building.claim == nil ? nil : currentContext,
            storage: building.claim?.storage.object, depth: building.depth, path: path(endingWith: entry.key))
    }

    /// The factory threw `error`: returns the error to throw, with the path to the service that failed (made before
    /// the frame is left), leaves the frame, and gives the claim up so that resolutions waiting for the instance can
    /// build it themselves.
    @inline(never)
    func failBuild(_ building: Building, _ error: any Error) -> any Error {
        let failure = factoryError(error, key: building.entry.withObject { $0.key })
        if let observation { observation.factoryFailed() }
        leave(toDepth: building.outerDepth)
        if let claim = building.claim {
            restoreContext(claim.savedContext)
            abandon(claim.storage.object)
        }
        return failure
    }

    // MARK: Claims

    /// Publishes the instance of a claimed build as it is recorded, when it is complete — no hook of its own, or of
    /// anything built before it, is left to run (see ``CreationCoordinator/builtAndPublished``) — and either it ends
    /// its resolution (the outermost build), where `complete` would have published it next, or the resolution is an
    /// `async` one, which may suspend before it ends. Whether it did; otherwise the caller records it with `built`, and
    /// the resolution publishes it when it ends. Watched or not: an observer, a leak check or a profile must not bring
    /// back the wait it removes.
    ///
    /// A synchronous resolution publishes its nested builds when it ends: it never suspends, so none waits for long,
    /// and if it fails it keeps nothing (the reference model of the property tests).
    @inline(__always)
    func publishedAtOnce<Service>(_ instance: Service, _ building: Building, in storage: InstanceStorage) -> Bool {
        guard building.depth == 0 || isAsync, !hasPendingHooks, !building.entry.withObject({ $0.hasHooks }) else {
            return false
        }
        let member = self.member
        return withClaims {
            CreationCoordinator.shared.builtAndPublished(instance, in: storage, by: member, claims: &$0)
        }
    }

    /// Records the instance the factory of a claimed storage returned: its creation group shares it from now on.
    @inline(__always)
    func built<Service>(_ instance: Service, in storage: InstanceStorage) {
        let member = self.member
        withClaims { CreationCoordinator.shared.built(instance, in: storage, by: member, solo: &$0.solo) }
    }

    /// Gives a claim up: the storage is empty again, and a waiting resolution may claim it.
    func abandon(_ storage: InstanceStorage) {
        let member = self.member
        withClaims { CreationCoordinator.shared.abandon(storage, by: member, solo: &$0.solo) }
    }
}
