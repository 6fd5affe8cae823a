internal import ArborPrimitives

/// The fast paths: shortcuts past the rules (Rules.swift) while nothing watches the resolution (no leak tracker, no
/// validation), where the rules' frame costs most. `takesFastPath` is the one eligibility check.
///
/// - the outermost build of a transient registration without hooks or arguments (`buildOutermost`);
/// - a nested resolve of an instance a permanent or weak registration already holds (`takeHeldQuickly`); when there is
///   none, the rules build it;
/// - a plain registration with runtime arguments that the thread's cache knows (`resolveQuickly`): into the rules
///   without the code that is generic over the arguments;
/// - an `async` factory's transient or graph-scoped build (AsyncPlainPath.swift), in the steps `beginPlain` and
///   `keepPlain` (or `failPlain`), around the factory it awaits in the frame of the factory that asked.
///
/// Every other synchronous resolve takes the rules, a nested transient or graph-scoped one included: one path, so that
/// a request that builds a per-container instance by the rules runs no second copy of their steps for its
/// graph-scoped services. (Measured: with a plain path of their own beside the rules, `graph_10` took 8,608
/// instructions and `request_scope_per_container` 19,590 over 304 lines of code; through the rules 9,392 and 19,837
/// over 272 lines. A request on the Vapor notes server ran 9 lines fewer of Arbor's, 408 against 417; on Vapor a line
/// a request costs 12–16 ns, as the Performance article's "Code a request runs" shows.) The property-based tests run
/// every seeded graph with and without a leak tracker, which makes every resolve take the rules, and compare each with
/// the reference model.
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

    /// The outermost build of a transient registration without hooks or arguments: the rules' build without the
    /// checks that cannot fail at depth 0 with nothing else being built (no cycle, no depth limit: it is at least
    /// 0), but with the stack's.
    @inline(__always)
    func buildOutermost<Service>(_ found: Found, key: ServiceKey) throws -> Service {
        let slot = GraphSlot(registration: found.identity, context: context)
        try enterOutermost(Frame(entry: found.entry, slot: slot, storage: .none), key: key)
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
            result.initialize(to: try resolveByRules(key, found: found, depth: 0, arguments: arguments))
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
        result.initialize(to: try resolveByRules(key, found: found, depth: depth + 1, arguments: arguments))
        return true
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
        if build.isGraph, graphKeepsInstance(builtAt: build.depth, hasHooks: build.hasHooks) {
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

/// A build the plain path began: the frame the resolution entered, which `finishAsyncPlain` or `failPlain` leaves. Its
/// key is its entry's: a plain registration is found under its own key. (Measured: with the key kept here too, each
/// copy of a build cost a plain resolve 43 more instructions, 5% of `graph_10`.)
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
