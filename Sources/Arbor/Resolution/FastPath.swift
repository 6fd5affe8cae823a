internal import ArborPrimitives

/// The fast path: an optimisation of the rules (Rules.swift) for the registrations that need nothing but their
/// factory and hooks — transient and graph-scoped ones, not forwards — while nothing watches the resolution (no leak
/// tracker, no validation). `takesFastPath` is the one eligibility check; everything else takes the rules. A nested
/// resolve also takes, while nothing watches, an instance a permanent or weak registration already holds
/// (`takeHeldQuickly`); when there is none, the rules build it. The property-based tests run every seeded graph both
/// ways — a leak tracker attached makes every resolve take the rules — and compare each with the reference model.
///
/// It is written as steps, `beginPlain` and `finishPlain` (or `failPlain`), around the factory call: the synchronous
/// resolve calls the factory between them, and the `async` plain path (AsyncPlainPath.swift) awaits it there, in the
/// frame of the factory that asked. What it saves is measured in the Performance article's table of speed tricks.
extension Resolution {
    /// Whether a resolve of `found` may take the fast path: a transient or graph-scoped registration that is not a
    /// forward, while nothing watches the resolution.
    @inline(__always)
    func takesFastPath(_ found: Found) -> Bool {
        found.isPlain && diagnostics == nil
    }

    /// The instance a permanent or weak registration holds, for a nested resolve while nothing watches: what the rules
    /// would return for it (``decide(_:found:depth:)`` then ``takeHeld(_:found:depth:)``), without their frame.
    /// Throws when there is none to take, or the depth is past the limit: the rules then decide, and throw.
    ///
    /// Out of line: inlined into the resolver's `resolve`, it cost every transient and graph-scoped nested resolve
    /// about 10 instructions (measured: `graph_10` 8,522 → 8,612); out of line it costs them nothing, and a held
    /// instance's nested resolve about 25 instructions more than inlined (`request_scope`: 17,616 through the rules,
    /// 16,965 inlined, 17,149 out of line).
    @inline(never)
    func takeHeldQuickly<Service>(_ found: Found, depth: Int) throws(NotHeld) -> Service {
        guard diagnostics == nil, depth <= maxDepth else { throw NotHeld() }
        return try found.loadHeld(as: Service.self, protectedBy: threadHazard)
    }

    /// The outermost build of a transient registration without hooks or arguments: `resolvePlain` without the
    /// checks that cannot fail at depth 0 with nothing else being built (no cycle, no depth limit: it is at least
    /// 0).
    @inline(__always)
    func buildOutermost<Service>(_ found: Found, key: ServiceKey) throws -> Service {
        let slot = GraphSlot(registration: found.identity, context: context)
        enterOutermost(Frame(entry: found.entry, slot: slot, storage: .none))
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
        begin(key, in: container, maxDepth: hit.depthLimit, diagnostics: nil)
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
        guard thread == .current, isActive, let found = find(key, in: context), takesFastPath(found) else {
            return false
        }
        result.initialize(to: try resolvePlain(found, key: key, depth: depth + 1, arguments: arguments))
        return true
    }

    /// Resolves a transient or graph-scoped registration, while nothing watches the resolution: what the rules and
    /// a build do, without the steps that cannot apply (measured: a tenth of a nested resolve).
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
        switch try beginPlain(found, key: key, depth: depth) {
        case .inGraph(let position):
            return graphInstance(at: position, as: Service.self)
        case .build(let build):
            // Nothing to keep or queue: the factory writes its instance straight into the caller's memory (measured:
            // through a local, a copy by the type's value witness cost a plain resolve 34 instructions, 5% of
            // `child_depth_5`).
            guard build.isGraph || build.hasHooks else { return try callPlainFactory(build, arguments: arguments) }
            let instance: Service = try callPlainFactory(build, arguments: arguments)
            keepPlain(instance, build)
            return instance
        }
    }

    /// Runs a plain registration's factory in the frame `beginPlain` entered, and leaves the frame.
    @inline(__always)
    func callPlainFactory<Service>(_ build: PlainBuild, arguments: ArgumentsTuple?) throws -> Service {
        defer { leave(toDepth: build.outerDepth) }
        do {
            return try build.frame.entry.withObject { entry in
                // The key names the service type and argument types exactly: the entry is a `NullaryEntry<Service>`
                // or an `ArgumentsEntry<Service>`, and the downcasts are reinterpretations.
                guard let arguments else { return try NullaryEntry<Service>.build(entry, self) }
                return try ArgumentsEntry<Service>.build(entry, self, arguments: arguments)
            }
        } catch {
            throw factoryError(error, key: build.entry.key)  // The frame is still entered: it ends the path.
        }
    }

    // MARK: The steps

    /// The plain path up to its factory: the graph's instance if it has one, else enters the build's frame.
    @inline(__always)
    func beginPlain(_ found: Found, key: ServiceKey, depth: Int) throws -> PlainStep {
        try checkDepth(depth, key)
        let slot = GraphSlot(registration: found.identity, context: context)
        let isGraph = found.shape == .graph
        if isGraph, let position = graphPosition(of: slot) { return .inGraph(position) }
        let frame = Frame(entry: found.entry, slot: slot, storage: isGraph ? .graph : .none)
        let outerDepth = try enter(frame, key: key, depth: depth)
        return .build(PlainBuild(frame: frame, depth: depth, outerDepth: outerDepth, hasHooks: found.hasHooks))
    }

    /// The plain path after its factory returned and its frame was left: keeps a graph instance, queues the hooks.
    @inline(__always)
    func keepPlain<Service>(_ instance: Service, _ build: PlainBuild) {
        var position: Int?
        // The outermost instance, with no hooks waiting to run: the resolution is over, nothing can ask for it again,
        // and the graph need not keep it (a retain and a release saved).
        if build.isGraph, build.depth > 0 || build.hasHooks || hasPendingHooks {
            position = keepInGraph(instance, for: build.frame.slot)
        }
        if build.hasHooks {
            queueHooks(
                of: build.frame.entry, instance: instance, depth: build.depth, graphPosition: position,
                builtLast: true)
        }
    }

    /// The plain path after its factory threw, for a caller that called it itself (the `async` plain path): returns
    /// the error to throw, with the path to the failed service (made before the frame is left), and leaves the frame.
    @inline(never)
    func failPlain(_ error: any Error, _ build: PlainBuild) -> any Error {
        let failure = factoryError(error, key: build.entry.key)
        leave(toDepth: build.outerDepth)
        return failure
    }
}

/// What the plain path does first: take the instance the graph already has, or build one.
enum PlainStep {
    case inGraph(Int)
    case build(PlainBuild)
}

/// A build the plain path began: the frame the resolution entered, which `finishPlain` or `failPlain` leaves. Its key
/// is its entry's: a plain registration is found under its own key. (Measured: with the key kept here too, each copy
/// of a build cost a plain resolve 43 more instructions, 5% of `graph_10`.)
@usableFromInline
struct PlainBuild {
    let frame: Resolution.Frame
    let depth: Int
    let outerDepth: Int
    let hasHooks: Bool

    var isGraph: Bool { frame.storage == .graph }

    /// The entry whose factory to call. The registry keeps it while the resolution reads it.
    @usableFromInline var entry: ServiceEntry { frame.entry.object }
}
