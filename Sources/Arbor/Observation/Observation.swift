internal import ArborPrimitives

/// One observed top-level resolve: the observers it reports to, and what it remembers to report — when it began, and
/// when each factory it is running was called. Made when a resolve begins in a container that observers watch, so a
/// resolve nobody watches pays one `nil` check per step (``Resolution/observation``).
///
/// Used from the resolution's thread or task only, like the resolution's own state. Every method is kept out of line:
/// inlined into the engine's steps, they cost a resolve nobody watches 30 instructions (measured: transient_leaf
/// 709 → 742) in code that never runs.
final class Observation {
    let observers: [any ResolutionObserver]
    let key: ServiceKey
    let container: Container
    let resolve: ResolveID
    let isAsync: Bool
    let started: ContinuousClock.Instant
    /// When the factories being built, and the hooks running, began: innermost last. Only the resolution's thread or
    /// task touches it, so the runtime's exclusivity checks would buy nothing (measured: 1,200 instructions of an
    /// observed graph_10).
    @exclusivity(unchecked) private var starts: [ContinuousClock.Instant] = []

    @inline(never)
    init(
        observers: [any ResolutionObserver], key: ServiceKey, container: Container, resolve: ResolveID,
        isAsync: Bool
    ) {
        self.observers = observers
        self.key = key
        self.container = container
        self.resolve = resolve
        self.isAsync = isAsync
        started = .now
        let event = ResolveStarted(key: key, container: container, resolve: resolve, isAsync: isAsync, time: started)
        Self.report { for observer in observers { observer.resolveStarted(event) } }
    }

    @inline(never)
    func finished(_ error: (any Error)?) {
        let event = ResolveFinished(
            key: key, container: container, resolve: resolve, isAsync: isAsync, started: started,
            duration: started.duration(to: .now), error: error)
        Self.report { for observer in observers { observer.resolveFinished(event) } }
    }

    /// A factory is called, or an instance's hooks begin.
    @inline(never)
    func startTiming() {
        starts.append(.now)
    }

    /// The factory threw: nothing to report (the error reaches the top-level resolve, which reports it).
    @inline(never)
    func factoryFailed() {
        starts.removeLast()
    }

    @inline(never)
    func built(
        _ instance: Any, key: ServiceKey, scope: ObjectScope, keeper: Container?, storage: InstanceStorage?,
        depth: Int, path: [ServiceKey]
    ) {
        let started = starts.removeLast()
        let event = InstanceBuilt(
            key: key, scope: scope, keeper: keeper, depth: depth, path: path, resolve: resolve, isAsync: isAsync,
            started: started, factoryDuration: started.duration(to: .now),
            boxedInstance: UncheckedSendable(instance), storage: storage)
        Self.report { for observer in observers { observer.instanceBuilt(event) } }
    }

    /// The hooks of an instance of `entry` ran (or one threw).
    @inline(never)
    func hooksRan(_ entry: ServiceEntry, depth: Int) {
        let started = starts.removeLast()
        let event = HooksRan(
            key: entry.key, scope: entry.scope, depth: depth, resolve: resolve, isAsync: isAsync, started: started,
            duration: started.duration(to: .now))
        Self.report { for observer in observers { observer.hooksRan(event) } }
    }

    @inline(never)
    func reused(_ entry: ServiceEntry, depth: Int, source: InstanceReused.Source) {
        let event = InstanceReused(
            key: entry.key, scope: entry.scope, depth: depth, resolve: resolve, isAsync: isAsync, source: source,
            time: .now)
        Self.report { for observer in observers { observer.instanceReused(event) } }
    }

    /// Runs `body`, which hands an event to the observers, with the thread marked as reporting: a resolve an observer
    /// makes meanwhile is a resolution of its own that no observer sees. Otherwise an observer that resolves in
    /// `resolveStarted` would be told of its own resolve, and resolve again, until the stack ran out.
    ///
    /// Reads the thread's context without retaining it (the thread keeps it): retained, it cost an observed
    /// graph_10 2.8% (measured; 0.9% this way).
    static func report(_ body: () -> Void) {
        let context =
            ThreadLocalSlot.context.object(as: ThreadContext.self)
            ?? Unretained(ThreadContext.current, retainedInChecks: false)
        let outer = context.withObject { $0.isReporting }
        context.withObject { $0.isReporting = true }
        defer { context.withObject { $0.isReporting = outer } }
        body()
    }

    /// Whether observers are handling an event on this thread (``report(_:)``).
    static var isReporting: Bool {
        ThreadLocalSlot.context.object(as: ThreadContext.self)?.withObject { $0.isReporting } ?? false
    }

    /// Tells the observers of the container that released an instance, if any, after its synchronous hooks ran.
    @inline(never)
    static func released(_ released: ReleasedInstance) {
        guard let watchers = released.watchers else { return }
        let event = InstanceReleased(
            key: watchers.key, boxedInstance: UncheckedSendable(released.value.asAny), time: .now)
        report { for observer in watchers.observers { observer.instanceReleased(event) } }
    }
}
