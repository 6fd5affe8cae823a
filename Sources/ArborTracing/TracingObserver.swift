#if Tracing
public import Arbor
internal import Foundation
public import Tracing

/// Reports what a container resolves as trace spans, through swift-distributed-tracing: a span for each top-level
/// resolve, with a child span for each factory that ran for at least ``threshold``, nested as the resolution nested.
///
/// Enable the package trait `Tracing` on Arbor's `.package` line, and depend on the `ArborTracing` product:
///
/// ```swift
/// // swift-tools-version: 6.1
/// dependencies: [
///     .package(url: "https://github.com/arbor-swift/arbor.git", branch: "main", traits: ["Tracing"]),
///     .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
/// ],
/// targets: [
///     .executableTarget(
///         name: "App",
///         dependencies: [
///             .product(name: "Arbor", package: "arbor"),
///             .product(name: "ArborTracing", package: "arbor"),
///             .product(name: "Tracing", package: "swift-distributed-tracing"),
///         ]
///     )
/// ]
/// ```
///
/// Then add an observer to the app's root container, once the tracing backend has been bootstrapped:
///
/// ```swift
/// import Arbor
/// import ArborTracing
/// import Tracing
///
/// InstrumentationSystem.bootstrap(tracer)   // an OpenTelemetry tracer, for example
/// let container = Container()
/// container.addObserver(TracingObserver(threshold: .milliseconds(5)))   // factories of 5 ms and more
/// …
/// let model = try container.resolve(AppModel.self)
/// ```
///
/// A resolve of `AppModel` that built a slow `Repository`, which built a slow `Database`, shows as
///
/// ```
/// resolve AppModel                   arbor.key = AppModel, arbor.container = root
/// └─ AppModel                        arbor.scope = graph, arbor.depth = 0
///    └─ Repository                   arbor.scope = graph, arbor.depth = 1
///       └─ Database                  arbor.scope = permanent, arbor.depth = 2, arbor.keeper = root
/// ```
///
/// The factories that took less than the threshold have no span: a factory's time includes the services it
/// resolved, so every factory above a slow one has a span too, and the spans lead from the resolve down to each
/// slow factory. `initCompleted` hooks that took as long are spans too, named `initCompleted Key`, and so are
/// the slow factories their resolves ran. A threshold of `.zero` traces every factory.
///
/// **Where the spans go.** A resolve's span is a child of the span that was current (`ServiceContext.current`) when
/// the resolve began: in a server, the request's span. With Hummingbird, add its `TracingMiddleware` before
/// `RequestContainerMiddleware` (of `ArborHummingbird`), and the resolves a handler makes from `context.container`
/// nest under the request's span:
///
/// ```swift
/// import Arbor
/// import ArborHummingbird
/// import ArborTracing
/// import Hummingbird
///
/// let container = Container()
/// container.register(NotesRepository.self) { _ in try NotesRepository.connect() }.inObjectScope(.permanent)
/// container.addObserver(TracingObserver())   // after InstrumentationSystem.bootstrap(…)
///
/// let router = Router(context: AppRequestContext.self)   // a ContainerRequestContext
/// router.add(middleware: TracingMiddleware())             // the request's span
/// router.add(middleware: RequestContainerMiddleware(root: container))
/// router.get("/notes/:id") { request, context in
///     let notes = try await context.container.resolve(NotesRepository.self)   // "resolve NotesRepository"
///     …
/// }
/// ```
///
/// With Vapor, add its `TracingMiddleware` first, and resolve inside the request's context, which Vapor keeps in
/// `request.serviceContext` (Vapor does not make it current in a handler by itself):
///
/// ```swift
/// import Arbor
/// import ArborTracing
/// import ArborVapor
/// import Tracing
/// import Vapor
///
/// container.addObserver(TracingObserver())
/// app.middleware.use(TracingMiddleware(), at: .beginning)   // the request's span
/// app.useRequestContainers(root: container)
/// app.get("notes", ":id") { request in
///     let notes = try ServiceContext.withValue(request.serviceContext) {
///         try request.container.resolve(NotesRepository.self)
///     }
///     …
/// }
/// ```
///
/// For synchronous handlers, `app.traceAutoPropagation = true` has Vapor make the request's context current around
/// each one instead.
///
/// **What the spans say.** Each span is of kind `internal`, and has the attributes:
///
/// | attribute | on | value |
/// | --- | --- | --- |
/// | `arbor.key` | all | the service, as `ServiceKey.description` reads: `Greeter(name: "formal")` |
/// | `arbor.async` | all | whether the resolve was an `async` one (`try await`) |
/// | `arbor.container` | resolve | the container it started in: `root`, or `child (depth 1)` for a root's child |
/// | `arbor.scope` | factory, hooks | the registration's scope: `graph`, `permanent`, `perContainer`, … |
/// | `arbor.depth` | factory, hooks | how deep in the resolution: 0 for the service the resolve asked for |
/// | `arbor.keeper` | factory | the container that keeps the instance, if one does (not for `graph` or `transient`) |
/// | `arbor.path` | factory | the services being built when this one was, outermost first, ending with its own |
///
/// A resolve that throws records its error on its span, whose status is then `error`.
///
/// **When the spans come.** A factory reports when it returns, after the factories it called, so the observer keeps
/// a resolve's slow factories until the resolve ends, then starts and ends all of its spans, with the instants at
/// which each began and ended: a span appears in the tracer when its resolve has finished. A resolve that a factory
/// makes through a container (rather than through its resolver) is a top-level resolve of its own, with a span of its
/// own beside the outer one, under the same parent.
///
/// Observing takes every resolve off the container's fast path, and this observer takes a lock at each resolve's
/// start and end and at each slow factory; factories under the threshold cost a comparison. Resolves on many threads
/// and tasks at once are traced each in its own spans.
public final class TracingObserver: ResolutionObserver, @unchecked Sendable {
    /// A factory (or an instance's `initCompleted` hooks) that ran at least this long gets a span.
    public let threshold: Duration

    /// The tracer given to ``init(tracer:threshold:)``, or `nil` for the one `InstrumentationSystem.tracer` gives as
    /// each resolve begins.
    private let tracer: (any Tracer)?

    /// The resolves under way, by their identifier; guarded by `lock`.
    private var resolves: [ResolveID: Resolve] = [:]
    private let lock = NSLock()

    /// Makes an observer; add it to a container with `addObserver(_:)`.
    ///
    /// ```swift
    /// container.addObserver(TracingObserver())                              // the bootstrapped tracer, 1 ms
    /// container.addObserver(TracingObserver(threshold: .milliseconds(20)))  // fewer spans
    /// container.addObserver(TracingObserver(tracer: tracer, threshold: .zero))   // every factory, to `tracer`
    /// ```
    ///
    /// - Parameters:
    ///   - tracer: Where the spans go. `nil`, the default, takes `InstrumentationSystem.tracer` as each resolve
    ///     begins: the tracer bootstrapped for the process, or the one a `withTracer` scope binds. Resolves that
    ///     find no tracer (a `NoOpTracer`) are not recorded at all.
    ///   - threshold: The shortest factory that gets a span. A factory's time includes the services it resolved.
    public init(tracer: (any Tracer)? = nil, threshold: Duration = .milliseconds(1)) {
        self.tracer = tracer
        self.threshold = threshold
    }

    /// Begins the resolve's record, if a tracer other than `NoOpTracer` is there.
    public func resolveStarted(_ event: ResolveStarted) {
        let tracer = tracer ?? InstrumentationSystem.tracer
        if tracer is NoOpTracer { return }
        let resolve = Resolve(
            tracer: tracer, parent: ServiceContext.current ?? .topLevel, container: Self.name(of: event.container))
        lock.withLock { resolves[event.resolve] = resolve }
    }

    /// Records the factory, if it ran at least `threshold`.
    public func instanceBuilt(_ event: InstanceBuilt) {
        guard event.factoryDuration >= threshold else { return }
        let piece = Piece(
            kind: .factory(keeper: event.keeper.map(Self.name(of:)), path: event.path), key: event.key,
            scope: event.scope, depth: event.depth, started: event.started, duration: event.factoryDuration)
        lock.withLock { resolves[event.resolve]?.pieces.append(piece) }
    }

    /// Records the instance's `initCompleted` hooks, if they ran at least `threshold` together.
    public func hooksRan(_ event: HooksRan) {
        guard event.duration >= threshold else { return }
        let piece = Piece(
            kind: .hooks, key: event.key, scope: event.scope, depth: event.depth, started: event.started,
            duration: event.duration)
        lock.withLock { resolves[event.resolve]?.pieces.append(piece) }
    }

    /// Ends the resolve's record: its span, and one for each factory and hooks it recorded.
    public func resolveFinished(_ event: ResolveFinished) {
        guard let resolve = lock.withLock({ resolves.removeValue(forKey: event.resolve) }) else { return }
        resolve.report(event)
    }

    /// How many resolves have begun and not yet finished, as far as this observer knows.
    var resolvesUnderWay: Int { lock.withLock { resolves.count } }

    /// "root", or "child (depth 2)" for a grandchild of the root.
    static func name(of container: Container) -> String {
        let depth = container.treeDepth
        return depth == 0 ? "root" : "child (depth \(depth))"
    }
}

/// A slow factory or a slow run of hooks in a resolve.
private struct Piece {
    enum Kind {
        case factory(keeper: String?, path: [ServiceKey])
        case hooks
    }

    let kind: Kind
    let key: ServiceKey
    let scope: ObjectScope
    let depth: Int
    let started: ContinuousClock.Instant
    let duration: Duration

    var name: String {
        switch kind {
        case .factory: key.description
        case .hooks: "initCompleted \(key)"
        }
    }
}

/// A resolve under way: where its spans go, and its slow pieces so far.
private struct Resolve {
    let tracer: any Tracer
    let parent: ServiceContext
    let container: String
    var pieces: [Piece] = []

    /// Starts and ends the spans of the resolve `event` finished, and of its pieces, at the instants they ran.
    func report(_ event: ResolveFinished) {
        let time = TracerTime()
        let end = event.started + event.duration
        let root = tracer.startSpan(
            "resolve \(event.key)", context: parent, ofKind: .internal, at: time(event.started))
        root.updateAttributes { attributes in
            attributes["arbor.key"] = event.key.description
            attributes["arbor.container"] = container
            attributes["arbor.async"] = event.isAsync
        }
        if let error = event.error {
            root.recordError(error, attributes: [:], at: time(end))
            root.setStatus(SpanStatus(code: .error, message: String(describing: error)))
        }
        var spans: [(span: any Span, end: ContinuousClock.Instant)] = [(root, end)]
        // A piece's parent is the innermost recorded one still running when it began, less deep than it: a factory's
        // resolves go one deeper than it, and so do a hook's. Hooks run once the outermost factory returned, so
        // theirs is the resolve, or a hook that was running. Pieces that were not recorded (fast ones) hold no
        // recorded piece, since a piece's time includes what it resolved.
        var open: [(span: any Span, depth: Int, end: ContinuousClock.Instant)] = [(root, -1, end)]
        for piece in pieces.sorted(by: { ($0.started, $0.depth) < ($1.started, $1.depth) }) {
            while open.count > 1, let last = open.last, last.depth >= piece.depth || last.end <= piece.started {
                open.removeLast()
            }
            let pieceEnd = piece.started + piece.duration
            let span = tracer.startSpan(
                piece.name, context: open[open.count - 1].span.context, ofKind: .internal, at: time(piece.started))
            span.updateAttributes { attributes in
                attributes["arbor.key"] = piece.key.description
                attributes["arbor.async"] = event.isAsync
                attributes["arbor.scope"] = piece.scope.name
                attributes["arbor.depth"] = piece.depth
                if case .factory(let keeper, let path) = piece.kind {
                    if let keeper { attributes["arbor.keeper"] = keeper }
                    attributes["arbor.path"] = path.map(\.description)
                }
            }
            open.append((span, piece.depth, pieceEnd))
            spans.append((span, pieceEnd))
        }
        // End them in the order they ended, the inner one first when two ended at once.
        for index in spans.indices.sorted(by: { (spans[$0].end, $1) < (spans[$1].end, $0) }) {
            spans[index].span.end(at: time(spans[index].end))
        }
    }
}

/// Turns the instants of `ContinuousClock`, at which Arbor's events happen, into the tracer's: nanoseconds since the
/// Unix epoch, read off the clocks as it is made (once a resolve has finished, so that each resolve is placed by
/// the wall clock of its own time).
private struct TracerTime {
    let now = ContinuousClock.now
    let wallNow = DefaultTracerClock.now.nanosecondsSinceEpoch

    func callAsFunction(_ instant: ContinuousClock.Instant) -> DefaultTracerClock.Timestamp {
        let (seconds, attoseconds) = now.duration(to: instant).components
        let offset = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        let nanoseconds = Int64(clamping: wallNow) + offset
        return DefaultTracerClock.Timestamp(nanosecondsSinceEpoch: UInt64(clamping: nanoseconds))
    }
}
#else
/// Needs the package trait `Tracing`: depend on Arbor with `.package(url: "…", from: "…", traits: ["Tracing"])`.
@available(*, unavailable, message: "Enable Arbor's package trait \"Tracing\": traits: [\"Tracing\"]")
public final class TracingObserver {
    /// Unavailable: enable the trait.
    public init(tracer: Any? = nil, threshold: Duration = .milliseconds(1)) {}
}
#endif
