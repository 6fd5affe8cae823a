/// The resolves that went through a resolver from another task or thread than the one its resolution runs on: in a
/// child task of an `async` factory (`async let`, a task group), or on a thread a factory waits for. Each starts a
/// resolution of its own, whose graph and waits the first one's cannot see; the lineage, the chain of such resolves
/// around the current one, lets the engine see the cycles that go through them:
/// - resolving a key that a resolve further up the lineage is resolving is a cycle: each round starts the next in a
///   task of its own, and it would build without end (``checked(_:through:)``);
/// - waiting for an instance that a resolution up the lineage is building would never end: that resolution waits
///   for the child task (``CreationCoordinator/findCycle(from:waitingFor:own:)``).
///
/// A task-local value (on a thread without a task, a thread-local one), set only on that path and read only there
/// and when a resolution is about to wait for another's build: the resolves of one task and every top-level resolve
/// never touch it. (Following every `async` resolution's child tasks with a task-local instead was measured and not
/// kept: `async_graph_10` +13.9%, `async_resolve_of_sync` +23.6%.)
enum Lineage {
    struct Link: Sendable {
        /// The resolution whose resolver was used from elsewhere: a ``CreationCoordinator/Member``'s `id`.
        let resolution: ObjectIdentifier
        /// What was resolved through it.
        let key: ServiceKey
    }

    /// The links around the current task's (or thread's) code, outermost first.
    @TaskLocal static var links: [Link] = []

    /// The links for a resolve of `key` through `resolution` from elsewhere: the current ones and that resolve. Throws
    /// `.circularDependency` when a resolve further up the lineage resolves `key` already.
    static func checked(_ key: ServiceKey, through resolution: Resolution) throws -> [Link] {
        let links = links
        if let first = links.firstIndex(where: { $0.key == key }) {
            throw ResolutionError(
                .circularDependency, key: key, path: links[first...].map(\.key) + [key], detail: cycleDetail)
        }
        return links + [Link(resolution: ObjectIdentifier(resolution), key: key)]
    }

    static let cycleDetail = """
        The cycle goes through resolves made with a factory's resolver in another task or on another thread (an \
        `async let` or a task group in an async factory): each is a resolution of its own, with a graph of its own, \
        so each round would start the next. Resolve through the resolver before starting child tasks.
        """

    /// Detail of a `.circular` wait for an instance that a resolution up the lineage is building.
    static let waitDetail = """
        The instance is being built by the resolution whose resolver began this resolve in another task or on \
        another thread (an `async let` or a task group in an async factory): that resolution waits for this task, \
        and would wait for ever. Resolve through the resolver before starting child tasks.
        """
}

extension Resolution {
    /// A resolve of `key` through this resolver that does not join its resolution (from another task or thread, or
    /// after it finished): a new resolution in the origin, one link further down the ``Lineage``. Out of line, as
    /// `originForNewResolution` is (the stack of every level of a nested resolve).
    @inline(never)
    func resolveAsNewResolution<Result>(_ key: ServiceKey, _ resolve: (Container) throws -> Result) throws -> Result {
        let origin = try originForNewResolution(key)
        return try Lineage.$links.withValue(try Lineage.checked(key, through: self)) { try resolve(origin) }
    }

    /// The `async` form of ``resolveAsNewResolution(_:_:)``.
    @inline(never)
    func resolveAsNewResolution<Result>(
        _ key: ServiceKey, _ resolve: (Container) async throws -> Result
    ) async throws -> Result {
        let origin = try originForNewResolution(key)
        return try await Lineage.$links.withValue(try Lineage.checked(key, through: self)) { try await resolve(origin) }
    }
}
