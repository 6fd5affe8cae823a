internal import ArborPrimitives

/// The `initCompleted` hooks of a resolution, waiting for its outermost factory to return, with what they need:
/// their instances (those the graph does not keep) and the paths that created them, for errors.
///
/// The order is the queue's rule: hooks run in the order their instances' factories returned — a factory that
/// resolves B then C queues B's and C's hooks before its own — and hooks queued while hooks run (by instances a hook
/// resolved) join the end. A record retains nothing but what it must: the instance, kept with its own type (see
/// ``ValueStack``), and a context container that is not the resolution's origin (a `Lazy` may have been its only
/// owner). The buffers belong to one resolution, used from one thread at a time; `removeAll()` keeps their capacity
/// for the next resolution on the thread. Free them with `deallocate()`.
struct HookQueue {
    /// The hooks of one instance. Trivial: it retains nothing.
    struct Pending {
        /// The instance's registration, which holds the hooks.
        let entry: Unretained<ServiceEntry>
        /// Where the instance is: in the resolution's graph, or in the queue's own instances. A negative position
        /// in the queue's own: the hooks were dropped with the instance (``dropOrphans(since:)``).
        let inGraph: Bool
        var position: Int
        /// The path that created the instance, kept in the queue.
        let path: PathRange
        let depth: Int
        /// Unretained: the origin, which the resolution's caller keeps, or one of `retainedContexts`.
        let context: Unretained<Container>
        let storage: ObjectScope.Storage

        /// Whether the hooks were dropped with their instance (``dropOrphans(since:)``): they do not run.
        var isDropped: Bool { position < 0 }
    }

    /// A path of registrations kept in the queue: the services being built when an instance was created.
    struct PathRange {
        var start = 0
        var count = 0
    }

    private var pending = UnsafeStack<Pending>()
    /// The instances of queued hooks that the graph does not keep.
    private var instances = ValueStack()
    /// The paths that created the instances of queued hooks: `PathRange`s point into it.
    private var paths = UnsafeStack<Unretained<ServiceEntry>>()
    /// The context containers of queued hooks that are not the resolution's origin: the queue keeps them alive until
    /// their hooks ran.
    private var retainedContexts: [Container] = []

    var isEmpty: Bool { pending.isEmpty }
    var count: Int { pending.count }
    subscript(index: Int) -> Pending { pending[index] }

    /// Queues the hooks of a new instance of `entry`, built at `depth` in `context`. `graphPosition` is where the
    /// resolution's graph keeps the instance, if it does; otherwise the queue keeps it. The path that created it is
    /// `hookPath` (the path of the hook running now, if any), then `building`, then `last` if given.
    mutating func enqueue<Service>(
        _ entry: Unretained<ServiceEntry>,
        instance: Service,
        graphPosition: Int?,
        depth: Int,
        context: Unretained<Container>,
        retainingContext: Bool,
        path hookPath: PathRange,
        building: UnsafeStack<Resolution.Frame>,
        appending last: Unretained<ServiceEntry>?
    ) {
        let position = graphPosition ?? instances.push(instance)
        if retainingContext { retainedContexts.append(context.object) }
        let start = paths.count
        for index in hookPath.start..<(hookPath.start + hookPath.count) { paths.push(paths[index]) }
        for frame in building.elements { paths.push(frame.entry) }
        if let last { paths.push(last) }
        pending.push(
            Pending(
                entry: entry, inGraph: graphPosition != nil, position: position,
                path: PathRange(start: start, count: paths.count - start), depth: depth, context: context,
                storage: entry.withObject { $0.storageKind }))
    }

    /// Drops the hooks queued since the queue held `mark` of them for transient instances that nothing but the queue
    /// refers to any longer, and releases those instances. Called when synchronous code that an `async` resolution
    /// hosts gave a wait up (AwaitingInstead.swift): it runs again from the start, and what its first run built and
    /// kept nowhere would otherwise get its hooks — a subscription, say — as if someone used it. Newest first, so an
    /// instance that only a dropped one held is dropped too. Hooks of instances the graph keeps or a container holds
    /// stay (the second run gets those again), as do those of a transient instance anything else holds.
    mutating func dropOrphans(since mark: Int) {
        for index in stride(from: pending.count - 1, through: mark, by: -1) {
            let hook = pending[index]
            guard !hook.inGraph, hook.storage == .none, instances.releaseIfOnlyHeldHere(at: hook.position) else {
                continue
            }
            pending[index].position = -1
        }
    }

    /// The keys of a path kept in the queue.
    func keys(of path: PathRange) -> [ServiceKey] {
        (path.start..<(path.start + path.count)).map { paths[$0].withObject { $0.key } }
    }

    /// Where the instance of `hook` is, given the resolution's graph. Valid until anything is added to either.
    func location(of hook: Pending, in graph: GraphInstances) -> ValueStack.Location {
        hook.inGraph ? graph.instances.location(of: hook.position) : instances.location(of: hook.position)
    }

    /// Forgets every queued hook, and releases what they kept. Keeps the buffers' capacity.
    mutating func removeAll() {
        if !retainedContexts.isEmpty { retainedContexts.removeAll(keepingCapacity: true) }
        pending.removeAll()
        instances.removeAll()
        paths.removeAll()
    }

    func deallocate() {
        pending.deallocate()
        instances.deallocate()
        paths.deallocate()
    }
}

extension Resolution {
    /// Calls hook `index` of the pending instance of `run` on the instance, where it is now (found again for each
    /// hook: a hook may add instances, which can move the others). What both engines do for every hook; the `async`
    /// one then awaits the work an `async` hook hands back.
    @inline(__always)
    func invokeHook(_ run: HookRun, _ index: Int) throws {
        let instance = location(of: run.pending)
        try run.pending.entry.withObject { entry in
            if index == 0 {
                try entry.firstHook?.run(self, instance)
            } else {
                try entry.hooks[index].run(self, instance)
            }
        }
    }

    /// The error to throw for a hook that threw `error`: it names the hooked service, on the path that created it.
    @inline(never)
    func hookFailure(_ error: any Error, of pending: HookQueue.Pending) -> any Error {
        let path = keys(of: pending.path)
        return failure(error, key: path.last!, path: path, detail: "an initCompleted hook threw")
    }
}
