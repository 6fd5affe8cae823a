/// What a container resolved while ``Container/profile(_:)`` ran its body: which registrations were built, how often,
/// and where the time went.
///
/// ```swift
/// let profile = try container.profile {
///     _ = try container.resolve(AppModel.self)
/// }
/// print(profile)                                   // the slowest registrations first
/// let slowest = profile.entries.first              // key, count, selfTime, totalTime
/// try profile.flameGraphSVG().write(toFile: "startup.svg", atomically: true, encoding: .utf8)
/// try profile.chromeTraceJSON().write(toFile: "startup.json", atomically: true, encoding: .utf8)
/// ```
///
/// A registration's *self time* is the time its factories and `initCompleted` hooks ran, less the time spent in the
/// services they resolved; its *total time* includes those. Both add up over every instance built. A wait for an
/// instance another thread was building counts in the self time of the service that waited. A resolve a factory
/// makes through a container (not through its resolver) is a top-level resolve of its own.
public struct ResolutionProfile: Sendable, CustomStringConvertible {
    /// The figures of one registration.
    public struct Entry: Sendable {
        /// The registration's key.
        public let key: ServiceKey
        /// The registration's lifetime.
        public let scope: ObjectScope
        /// How many instances were built.
        public let count: Int
        /// How many times a resolve took an instance that existed already: from the graph or from a container.
        public let reuseCount: Int
        /// The time its factories and hooks ran, less the resolves they made.
        public let selfTime: Duration
        /// The time its factories and hooks ran, the resolves they made included.
        public let totalTime: Duration
        /// The services being built when the first instance was, outermost first, ending with this key.
        public let firstPath: [ServiceKey]
    }

    /// A top-level resolve that threw.
    public struct Failure: Sendable {
        /// What the resolve asked for.
        public let key: ServiceKey
        /// What it threw: a ``ResolutionError``, or `CancellationError` for an `async` resolve cancelled while it
        /// waited for another's build.
        public let error: any Error
    }

    /// One timed piece of work: a top-level resolve, a factory, or the hooks of an instance.
    struct Span: Sendable {
        enum Kind: Sendable {
            case resolve
            case factory
            case hooks
        }

        let kind: Kind
        let key: ServiceKey
        /// Index in `spans` of the span this one ran inside, `nil` for a top-level resolve.
        let parent: Int?
        /// Since the profile began.
        let start: Duration
        let duration: Duration
        var selfTime: Duration
        let track: Int
        let isAsync: Bool
        let container: String?
        let error: (any Error)?
    }

    /// Every registration built or reused, slowest self time first.
    public let entries: [Entry]
    /// The top-level resolves that threw, in the order they began.
    public let failures: [Failure]
    /// How many top-level resolves ran.
    public let resolveCount: Int
    /// How long the profiled body ran.
    public let duration: Duration
    /// Every span, each after its parent; top-level resolves in the order they began.
    let spans: [Span]
    /// The threads and tasks the resolves ran on, by track number.
    let trackNames: [String]

    /// How many instances were built, over all registrations.
    public var instanceCount: Int { entries.reduce(0) { $0 + $1.count } }
}

extension ResolutionProfile {
    init(
        _ recording: ProfileRecorder.Recording, since origin: ContinuousClock.Instant, duration: Duration,
        trackNames: [String]
    ) {
        self.duration = duration
        self.trackNames = trackNames
        let resolves = recording.resolves.sorted { $0.value.started < $1.value.started }
        resolveCount = resolves.count
        failures = resolves.compactMap { _, resolve in resolve.error.map { Failure(key: resolve.key, error: $0) } }
        let builds = Dictionary(grouping: recording.builds, by: \.resolve)
        var spans: [Span] = []
        for (id, resolve) in resolves {
            // A resolve still running when the body returned (another thread's) ends where the profile does.
            let resolveDuration = resolve.duration ?? resolve.started.duration(to: origin + duration)
            let root = spans.count
            spans.append(
                Span(
                    kind: .resolve, key: resolve.key, parent: nil, start: origin.duration(to: resolve.started),
                    duration: resolveDuration, selfTime: resolveDuration, track: resolve.track,
                    isAsync: resolve.isAsync, container: resolve.container, error: resolve.error))
            // A span's parent is the innermost one still running when it began, less deep than it: a factory's
            // resolves go one deeper than it, and so do a hook's. Hooks run once the outermost factory returned, so
            // theirs is the resolve itself, or a hook that was running.
            var open: [(index: Int, depth: Int, end: ContinuousClock.Instant)] = [(root, -1, resolve.started)]
            let ordered = (builds[id] ?? []).sorted { ($0.started, $0.depth) < ($1.started, $1.depth) }
            for build in ordered {
                while open.count > 1, let last = open.last, last.depth >= build.depth || last.end <= build.started {
                    open.removeLast()
                }
                let parent = open.last?.index ?? root
                spans[parent].selfTime -= build.duration
                open.append((spans.count, build.depth, build.started + build.duration))
                spans.append(
                    Span(
                        kind: build.kind, key: build.key, parent: parent, start: origin.duration(to: build.started),
                        duration: build.duration, selfTime: build.duration, track: resolve.track,
                        isAsync: resolve.isAsync, container: nil, error: nil))
            }
        }
        self.spans = spans

        struct Totals {
            var scope: ObjectScope
            var count = 0
            var selfTime = Duration.zero
            var totalTime = Duration.zero
            var firstPath: [ServiceKey] = []
            var firstStart: ContinuousClock.Instant?
        }
        var totals: [ServiceKey: Totals] = [:]
        for build in recording.builds {
            var entry = totals[build.key] ?? Totals(scope: build.scope)
            if build.kind == .factory {
                entry.count += 1
                if entry.firstStart.map({ build.started < $0 }) ?? true {
                    entry.firstStart = build.started
                    entry.firstPath = build.path
                }
            }
            totals[build.key] = entry
        }
        for span in spans where span.kind != .resolve {
            totals[span.key]?.selfTime += span.selfTime
            totals[span.key]?.totalTime += span.duration
        }
        for (key, reuses) in recording.reuses where totals[key] == nil {
            totals[key] = Totals(scope: reuses.scope)
        }
        var entries = totals.map { key, totals in
            Entry(
                key: key, scope: totals.scope, count: totals.count, reuseCount: recording.reuses[key]?.count ?? 0,
                selfTime: totals.selfTime, totalTime: totals.totalTime,
                firstPath: totals.firstPath.isEmpty ? [key] : totals.firstPath)
        }
        .sorted { $0.selfTime > $1.selfTime }
        Self.orderTiesByName(&entries)
        self.entries = entries
    }

    /// Puts runs of entries with the same self time (services only reused take none) in order of their keys'
    /// descriptions, so that a profile reads the same each time. Describes only the keys of such runs:
    /// `String(describing:)` of a type is slow (measured: describing every key was 60% of profiling a cold start of
    /// 200 services).
    private static func orderTiesByName(_ entries: inout [Entry]) {
        var start = 0
        while start < entries.count {
            var end = start + 1
            while end < entries.count, entries[end].selfTime == entries[start].selfTime { end += 1 }
            if end - start > 1 {
                let run = entries[start..<end].map { (name: $0.key.description, entry: $0) }.sorted {
                    $0.name < $1.name
                }
                entries.replaceSubrange(start..<end, with: run.map(\.entry))
            }
            start = end
        }
    }
}
