internal import ArborPrimitives

/// One top-level `resolve` call: the state of the graph being built, and the ``Resolver`` its factories receive.
///
/// A resolution owns everything a graph needs while it is built, and nothing outlives it: the depth, the path of
/// services being built (for cycle detection and error messages), the graph-scoped instances, the queue of
/// deferred `initCompleted` hooks, and the permanent and weak storages it has claimed. It lives on one thread, or —
/// an `async` resolution — in one task; a resolver used from elsewhere, or after the resolution finished, starts a new
/// resolution instead.
///
/// The flow of one resolve, written once for both engines (the synchronous and the `async` driver, Drivers.swift,
/// differ only in how they call a factory and how they wait):
/// 1. look the key up, starting in the current context container (the one that began the resolution, or the
///    owner of the permanent or weak instance being built) and walking up its ancestors;
/// 2. the rules (Rules.swift) decide: transient builds, graph shares per resolution, permanent, weak and
///    per-container share through an ``InstanceStorage``;
/// 3. a build runs the factory one level deeper and queues the instance's hooks (Building.swift);
/// 4. when the outermost factory has returned, run the queued hooks in order, then publish the claimed
///    instances. On any error, abandon them instead.
///
/// Each thread keeps one finished resolution and reuses it for its next top-level resolve (``ResolutionPool``),
/// unless user code kept a reference to it — strong, `weak` or `unowned` — so a resolve allocates no resolution of
/// its own. A kept resolution is *detached* instead: it frees its buffers and from then on only starts new
/// resolutions in the container it began in (see ``detach(keptWeakly:)``).
final class Resolution: Resolver, @unchecked Sendable {
    /// The thread the resolution runs on; only it touches the state below. An `async` resolution has an identity
    /// no thread has (``ThreadID/unbound(_:)``).
    let thread: ThreadID
    /// A number no other resolution object had: with the state's serial, names one top-level resolve
    /// (``ResolutionIdentity``).
    let uniqueID: Int
    /// An `async` resolution's own announcement of the tree it reads (``Reclamation``), held from its beginning to its
    /// end, across suspensions: no thread announces for it. `nil` for a synchronous one, which uses its thread's.
    let reader: Reclamation.Reader?
    /// Where a resolve made from another thread, or after the resolution finished, starts: the origin, kept as the
    /// user code kept this resolution (see ``detach(keptWeakly:)``). Behind a lock: another thread may read it while
    /// the resolution's own thread detaches it.
    private let outside = Protected.make(Outside())

    private struct Outside {
        var isDetached = false
        var strongOrigin: Container?
        weak var weakOrigin: Container?
    }

    /// Everything else (ResolutionState.swift), reached only through the operations that file defines.
    let state: UncheckedCell<ResolutionState>

    enum Phase {
        case active
        /// Releasing what it kept. A `deinit` that resolves now starts a new resolution instead of reusing this one.
        case finishing
        case finished
        /// Kept by user code after it finished: its buffers are freed, and it never runs again.
        case detached
    }

    /// A service whose factory is running. Trivial, so pushing and popping one retains nothing.
    struct Frame {
        /// Unretained: the container keeps it (see ``LookupCache``).
        let entry: Unretained<ServiceEntry>
        let slot: GraphSlot
        let storage: ObjectScope.Storage

        var key: ServiceKey { entry.withObject { $0.key } }
    }

    init(origin: Container) {
        thread = .current
        state = UncheckedCell(
            ResolutionState(origin: origin, context: ThreadContext.current, thread: thread, isAsync: false))
        uniqueID = UniqueNumber.next()
        reader = nil
    }

    /// An `async` resolution: owned by the task that runs it, not by a thread. Its thread is an identity no thread
    /// has, and it announces its reads of the registries itself, for as long as it runs.
    init(asyncOrigin origin: Container) {
        let number = UniqueNumber.next()
        thread = .unbound(number)
        state = UncheckedCell(
            ResolutionState(origin: origin, context: ThreadContext.current, thread: thread, isAsync: true))
        uniqueID = number
        reader = Reclamation.Reader()
    }

    deinit {
        if !isRetired { deallocateBuffers() }
        state.deallocate()
    }

    /// Takes a finished resolution that user code kept out of service for good: it frees its buffers, and from now
    /// on every resolve through it starts a new resolution in its origin — never in another container.
    ///
    /// Kept strongly, it keeps the origin alive. Kept only `weak` or `unowned`, the origin keeps *it* alive
    /// instead (``Container/keep(_:)``), and it holds the origin weakly: it stays usable as long as its container
    /// lives, and a resolve through it after the container is gone throws.
    func detach(keptWeakly: Bool) {
        let origin = self.origin
        retire()
        outside.withLock { outside in
            outside.isDetached = true
            if keptWeakly {
                outside.weakOrigin = origin
            } else {
                outside.strongOrigin = origin
            }
        }
        if keptWeakly { origin.keep(self) }
    }

    /// The container a resolve that does not join this resolution starts in: the origin, unless it is gone. Out of
    /// line: inlined into the resolver's `resolve`, its lock and error took 240 bytes of the stack of every level of
    /// a nested resolve (measured in a release build: a level of a graph chain took 880 bytes with it, 640 without).
    @inline(never)
    func originForNewResolution(_ key: @autoclosure () -> ServiceKey) throws -> Container {
        let origin = outside.withLock { outside -> Container? in
            guard outside.isDetached else { return self.origin }  // Alive while the resolution runs.
            return outside.strongOrigin ?? outside.weakOrigin
        }
        guard let origin else {
            let key = key()
            throw ResolutionError(
                .containerClosed, key: key, path: [key],
                detail: """
                    The container this resolver's resolution began in no longer exists. A resolver kept weak or \
                    unowned resolves only as long as its container lives; keep the container, or resolve a \
                    Provider instead of keeping the resolver.
                    """)
        }
        return origin
    }
}
