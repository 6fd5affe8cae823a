internal import ArborPrimitives

extension Resolution {
    /// Queues the hooks of a new instance of `entry`, built at `depth`. `graphPosition` is where the graph keeps
    /// the instance, if it does. `builtLast` says that the instance's own frame has left `building` already: its
    /// registration ends the path.
    func queueHooks<Service>(
        of entry: Unretained<ServiceEntry>,
        instance: Service,
        depth: Int,
        graphPosition: Int?,
        builtLast: Bool
    ) {
        let position = graphPosition ?? state.pointee.hookInstances.push(instance)
        let context = state.pointee.context
        let retainsContext = context.toOpaque() != Unmanaged.passUnretained(origin).toOpaque()
        if retainsContext {
            _ = context.retain()
            state.pointee.retainedContexts += 1
        }
        state.pointee.pendingHooks.push(
            PendingHook(
                entry: entry, inGraph: graphPosition != nil, position: position,
                path: recordPath(appending: builtLast ? entry : nil), depth: depth, context: context,
                retainsContext: retainsContext, storage: entry.withObject { $0.storageKind }))
    }

    /// Copies the path to the service being built now, and `last` if given, into `paths`.
    func recordPath(appending last: Unretained<ServiceEntry>?) -> PathRange {
        let start = state.pointee.paths.count
        let hookPath = state.pointee.hookPath
        for index in hookPath.start..<(hookPath.start + hookPath.count) {
            state.pointee.paths.push(state.pointee.paths[index])
        }
        for frame in state.pointee.building.elements {
            state.pointee.paths.push(frame.entry)
        }
        if let last { state.pointee.paths.push(last) }
        return PathRange(start: start, count: state.pointee.paths.count - start)
    }

    /// The keys of a path kept in `paths`.
    func keys(of path: PathRange) -> [ServiceKey] {
        (path.start..<(path.start + path.count)).map { state.pointee.paths[$0].withObject { $0.key } }
    }

    /// Forgets the queued hooks of a resolution that ended, and what they kept.
    func dropPendingHooks() {
        if state.pointee.retainedContexts > 0 {
            for pending in state.pointee.pendingHooks.elements where pending.retainsContext {
                pending.context.release()
            }
            state.pointee.retainedContexts = 0
        }
        state.pointee.pendingHooks.removeAll()
        state.pointee.hookInstances.removeAll()
        state.pointee.paths.removeAll()
    }

    // MARK: Running

    /// Runs the queued `initCompleted` hooks in the order their instances' factories returned. Hooks may resolve
    /// more services; their hooks join the end of the queue. A resolve inside a hook goes one level deeper than
    /// the hook's instance, so a chain of hooks that never ends runs into the depth limit.
    func runPendingHooks() throws {
        var next = 0
        while next < state.pointee.pendingHooks.count {
            let pending = state.pointee.pendingHooks[next]
            next += 1
            let saved = (state.pointee.context, state.pointee.depth, state.pointee.hookPath, state.pointee.hookStorage)
            state.pointee.context = pending.context
            state.pointee.depth = pending.depth
            state.pointee.hookPath = pending.path
            state.pointee.hookStorage = pending.storage
            defer {
                (state.pointee.context, state.pointee.depth, state.pointee.hookPath, state.pointee.hookStorage) = saved
            }
            try runHook(of: pending) { entry, instance in try entry.firstHook?.run(self, instance) }
            let count = pending.entry.withObject { $0.hooks.count }
            for index in 1..<max(1, count) {
                try runHook(of: pending) { entry, instance in try entry.hooks[index].run(self, instance) }
            }
        }
    }

    /// Runs one hook of a pending instance, handing it the instance's address.
    @inline(__always)
    func runHook(
        of pending: PendingHook,
        _ run: (ServiceEntry, UnsafeRawPointer) throws -> Void
    ) throws {
        do {
            // Found again for each hook: a hook may add instances, which can move the others. The hook copies its
            // instance before it runs user code.
            let instance =
                pending.inGraph
                ? state.pointee.graph.instances.address(of: pending.position)
                : state.pointee.hookInstances.address(of: pending.position)
            try pending.entry.withObject { try run($0, instance) }
        } catch {
            let path = keys(of: pending.path)
            throw failure(error, key: path.last!, path: path, detail: "an initCompleted hook threw")
        }
    }
}
