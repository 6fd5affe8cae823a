internal import ArborPrimitives

/// The fast path: an optimisation of the rules (``Resolution/resolveByRules(_:found:depth:arguments:)``) for the
/// registrations that need nothing but their factory and hooks — transient and graph-scoped ones, not forwards —
/// while nothing watches the resolution (no leak tracker, no validation). `takesFastPath` is the one eligibility
/// check; everything else takes the rules. The property-based tests run every seeded graph both ways — a leak
/// tracker attached makes every resolve take the rules — and compare each with the reference model.
///
/// What it saves is measured in the Performance article's table of speed tricks.
extension Resolution {
    /// Whether a resolve of `found` may take the fast path: a transient or graph-scoped registration that is not a
    /// forward, while nothing watches the resolution.
    @inline(__always)
    func takesFastPath(_ found: Found) -> Bool {
        found.isPlain && state.value.diagnostics == nil
    }

    /// The outermost build of a transient registration without hooks or arguments: `buildPlain` without the
    /// checks that cannot fail at depth 0 with nothing else being built (no cycle, no depth limit: it is at least
    /// 0).
    @inline(__always)
    func buildOutermost<Service>(_ found: Found, key: ServiceKey) throws -> Service {
        let slot = GraphSlot(registration: found.identity, context: state.value.context)
        state.value.building.push(Frame(entry: found.entry, slot: slot, storage: .none))
        state.value.depth = 0
        defer { leave(toDepth: -1) }
        do {
            return try found.entry.withObject { try NullaryEntry<Service>.build($0, self) }
        } catch {
            throw factoryError(error, key: key)
        }
    }

    /// `resolveTopLevel(_:in:arguments:)` for a plain registration the cache knows; `false` for anything else.
    @inline(__always)
    func resolveTopLevelQuickly<Service>(
        _ key: ServiceKey,
        in container: Container,
        arguments: ArgumentsTuple,
        into result: ResultSlot<Service>
    ) throws -> Bool {
        withCache { $0.beginResolving(in: container) }
        defer { withCache { $0.endResolving() } }
        guard let hit = withCache({ $0.hit(key, in: container) }), !hit.isClosed, !hit.isWatched else {
            return false
        }
        let found = hit.found
        guard takesFastPath(found) else { return false }
        begin(in: container, maxDepth: hit.depthLimit, diagnostics: nil)
        do {
            // Straight into `result`: a local would be copied there, a retain and a release.
            result.initialize(to: try resolvePlain(found, key: key, depth: 0, arguments: arguments))
        } catch {
            throw failed(error)
        }
        do {
            try complete(key)
        } catch {
            result.discard()
            throw failed(error)
        }
        return true
    }

    /// Resolves a plain registration with runtime arguments within this resolution, as a factory's nested resolve,
    /// and writes the instance to `result`. `false`, having done nothing, when the general path must do it.
    func resolveQuickly<Service>(
        _ key: ServiceKey,
        arguments: ArgumentsTuple,
        into result: ResultSlot<Service>
    ) throws -> Bool {
        guard thread == .current, state.value.phase == .active, let found = find(key, in: state.value.context),
            takesFastPath(found)
        else { return false }
        result.initialize(to: try resolvePlain(found, key: key, depth: state.value.depth + 1, arguments: arguments))
        return true
    }

    /// Resolves a transient or graph-scoped registration, while nothing watches the resolution:
    /// what `resolve(_:found:depth:invoke:)` and `build` do, without the steps that cannot apply (measured: a
    /// tenth of a nested resolve).
    func resolvePlain<Service>(_ found: Found, key: ServiceKey, depth: Int) throws -> Service {
        try resolvePlain(found, key: key, depth: depth, argumentsAt: nil)
    }

    /// `resolvePlain` for a key with runtime arguments, which `arguments` points at as a tuple.
    func resolvePlain<Service>(
        _ found: Found,
        key: ServiceKey,
        depth: Int,
        arguments: ArgumentsTuple
    ) throws -> Service {
        try resolvePlain(found, key: key, depth: depth, argumentsAt: arguments)
    }

    /// The two `resolvePlain`s; each inlines it, with or without arguments.
    @inline(__always)
    func resolvePlain<Service>(
        _ found: Found,
        key: ServiceKey,
        depth: Int,
        argumentsAt arguments: ArgumentsTuple?
    ) throws -> Service {
        guard depth <= state.value.maxDepth else {
            throw depthLimitError(key)
        }
        let slot = GraphSlot(registration: found.identity, context: state.value.context)
        guard found.shape == .graph else {
            guard found.hasHooks else {
                return try buildPlain(found, key: key, slot: slot, depth: depth, arguments: arguments)
            }
            let instance: Service = try buildPlain(found, key: key, slot: slot, depth: depth, arguments: arguments)
            queueHooks(of: found.entry, instance: instance, depth: depth, graphPosition: nil, builtLast: true)
            return instance
        }
        if let position = state.value.graph.position(of: slot) {
            return state.value.graph.instance(at: position, as: Service.self)
        }
        let instance: Service = try buildPlain(found, key: key, slot: slot, depth: depth, arguments: arguments)
        // The outermost instance, with no hooks waiting to run: the resolution is over, nothing can ask for it
        // again, and the graph need not keep it (a retain and a release saved).
        if depth == 0, !found.hasHooks, state.value.hooks.isEmpty { return instance }
        let position = state.value.graph.add(instance, for: slot)
        if found.hasHooks {
            queueHooks(of: found.entry, instance: instance, depth: depth, graphPosition: position, builtLast: true)
        }
        return instance
    }

    /// Runs a plain registration's factory one level deeper.
    @inline(__always)
    func buildPlain<Service>(
        _ found: Found,
        key: ServiceKey,
        slot: GraphSlot,
        depth: Int,
        arguments: ArgumentsTuple?
    ) throws -> Service {
        let outerDepth = try enter(
            Frame(entry: found.entry, slot: slot, storage: found.shape == .graph ? .graph : .none), key: key,
            depth: depth)
        defer { leave(toDepth: outerDepth) }
        do {
            return try found.entry.withObject { entry in
                // The key names the service type and argument types exactly: the entry is a `NullaryEntry<Service>`
                // or an `ArgumentsEntry<Service>`, and the downcasts are reinterpretations.
                guard let arguments else { return try NullaryEntry<Service>.build(entry, self) }
                return try ArgumentsEntry<Service>.build(entry, self, arguments: arguments)
            }
        } catch {
            throw factoryError(error, key: key)
        }
    }
}
