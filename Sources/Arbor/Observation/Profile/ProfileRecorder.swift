internal import ArborPrimitives

/// The observer behind ``Container/profile(_:)``: records every resolve, build and hook run, from any thread or task,
/// and makes a ``ResolutionProfile`` of them.
final class ProfileRecorder: ResolutionObserver, @unchecked Sendable {
    private let recording = Protected.make(Recording())
    let started = ContinuousClock.now

    struct Recording {
        var resolves: [ResolveID: ResolveRecord] = [:]
        var builds: [SpanRecord] = []
        var reuses: [ServiceKey: (count: Int, scope: ObjectScope)] = [:]
        var tracks: [Track: Int] = [:]
    }

    /// Where a resolve ran: the thread of a synchronous one, the task of an `async` one.
    enum Track: Hashable {
        case thread(ThreadID, isMain: Bool)
        case task(UInt)
    }

    struct ResolveRecord {
        let key: ServiceKey
        let container: String
        let isAsync: Bool
        let track: Int
        let started: ContinuousClock.Instant
        var duration: Duration?
        var error: (any Error)?
    }

    struct SpanRecord {
        let resolve: ResolveID
        let kind: ResolutionProfile.Span.Kind
        let key: ServiceKey
        let scope: ObjectScope
        let depth: Int
        let path: [ServiceKey]
        let started: ContinuousClock.Instant
        let duration: Duration
    }

    func resolveStarted(_ event: ResolveStarted) {
        let track: Track
        if event.isAsync, let task = CurrentTask.address {
            track = .task(UInt(bitPattern: task))
        } else {
            track = .thread(.current, isMain: MainThread.isCurrent)
        }
        let container = Self.name(of: event.container)
        recording.withLock { recording in
            let number = recording.tracks[track] ?? recording.tracks.count
            recording.tracks[track] = number
            recording.resolves[event.resolve] = ResolveRecord(
                key: event.key, container: container, isAsync: event.isAsync, track: number,
                started: event.time)
        }
    }

    func resolveFinished(_ event: ResolveFinished) {
        recording.withLock { recording in
            recording.resolves[event.resolve]?.duration = event.duration
            recording.resolves[event.resolve]?.error = event.error
        }
    }

    func instanceBuilt(_ event: InstanceBuilt) {
        let span = SpanRecord(
            resolve: event.resolve, kind: .factory, key: event.key, scope: event.scope, depth: event.depth,
            path: event.path, started: event.started, duration: event.factoryDuration)
        recording.withLock { $0.builds.append(span) }
    }

    func hooksRan(_ event: HooksRan) {
        let span = SpanRecord(
            resolve: event.resolve, kind: .hooks, key: event.key, scope: event.scope, depth: event.depth, path: [],
            started: event.started, duration: event.duration)
        recording.withLock { $0.builds.append(span) }
    }

    func instanceReused(_ event: InstanceReused) {
        recording.withLock { $0.reuses[event.key, default: (0, event.scope)].count += 1 }
    }

    /// "root container", or "child container (depth 2)".
    private static func name(of container: Container) -> String {
        let depth = container.treeDepth
        return depth == 0 ? "root container" : "child container (depth \(depth))"
    }

    /// The profile of what was recorded, over `duration`.
    func profile(duration: Duration) -> ResolutionProfile {
        let recording = recording.withLock { $0 }
        var trackNames = Array(repeating: "", count: recording.tracks.count)
        var threads = 0
        var tasks = 0
        for (track, number) in recording.tracks.sorted(by: { $0.value < $1.value }) {
            switch track {
            case .thread(_, isMain: true):
                trackNames[number] = "main thread"
            case .thread:
                threads += 1
                trackNames[number] = "thread \(threads)"
            case .task:
                tasks += 1
                trackNames[number] = "task \(tasks)"
            }
        }
        return ResolutionProfile(recording, since: started, duration: duration, trackNames: trackNames)
    }
}
