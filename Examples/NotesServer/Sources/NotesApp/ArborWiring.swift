public import Arbor
public import ArborHummingbird
public import Hummingbird

/// The notes services, registered once in the app's root container.
///
/// | service | scope | why |
/// | --- | --- | --- |
/// | ``NoteStore``, ``WallClock``, ``IDGenerator``, ``ActivityLog`` | `.permanent` | one for the whole app |
/// | ``NoteRenderer`` | `.weak` | a cache shared while requests use it, let go when none does |
/// | ``NotesUnitOfWork`` | `.perContainer` | one per request's child container, ended when the request ends |
/// | ``NotesController`` ↔ ``NotesAuditor`` | `.graph` (the default) | a circular pair, per resolve |
public struct NotesAssembly: Assembly {
    /// Makes the assembly.
    public init() {}

    /// Registers the services.
    public func assemble(container: Container) {
        container.register(NoteStore.self) { _ in NoteStore() }.inObjectScope(.permanent)
        container.register((any WallClock).self) { _ in SystemWallClock() }.inObjectScope(.permanent)
        container.register((any IDGenerator).self) { _ in RandomIDGenerator() }.inObjectScope(.permanent)
        container.register(ActivityLog.self) { _ in ActivityLog() }.inObjectScope(.permanent)

        container.register(NoteRenderer.self) { _ in NoteRenderer() }.inObjectScope(.weak)

        // Built by each request's container on first use, and ended when the middleware closes that container.
        container.register(NotesUnitOfWork.self) { r in NotesUnitOfWork(store: try r.resolve(), log: try r.resolve()) }
            .inObjectScope(.perContainer)
            .onRelease { work in work.end() }

        container.register(NotesController.self) { r in
            NotesController(
                work: try r.resolve(), clock: try r.resolve(), ids: try r.resolve(), auditor: try r.resolve())
        }
        // The auditor's back reference would be a cycle of initialisers: set it once both exist.
        container.register(NotesAuditor.self) { r in NotesAuditor(log: try r.resolve()) }
            .initCompleted { r, auditor in auditor.controller = try r.resolve(NotesController.self) }
    }
}

/// The notes server wired with Arbor: services resolved from a child container per request.
public enum ArborWiring {
    /// A root container with the ``NotesAssembly``'s services.
    public static func makeContainer() -> Container {
        Assembler([NotesAssembly()]).container
    }

    /// A router with the notes routes, that gives every request a child of `root`.
    ///
    /// - Parameter root: The container with the notes services: ``makeContainer()``, or in a test a child of it that
    ///   overrides some of them.
    public static func makeRouter(root: Container) -> Router<ArborRequestContext> {
        let router = Router(context: ArborRequestContext.self)
        router.add(middleware: RequestContainerMiddleware(root: root))
        NotesAPI.addRoutes(to: router)
        return router
    }
}

/// The Arbor-wired server's request context: it carries the request's child container, and resolves the notes
/// services from it.
public struct ArborRequestContext: ContainerRequestContext, NotesRequestContext {
    /// What Hummingbird keeps for the request.
    public var coreContext: CoreRequestContextStorage
    /// The request's child container, set by ``RequestContainerMiddleware``.
    public var requestContainer: Container?

    /// Makes the context; the middleware sets the container.
    public init(source: Source) {
        self.coreContext = .init(source: source)
    }

    /// Resolves a controller from the request's container.
    public func notesController() throws -> NotesController {
        try container.resolve(NotesController.self)
    }

    /// Resolves the request's unit of work from its container.
    public func unitOfWork() throws -> NotesUnitOfWork {
        try container.resolve(NotesUnitOfWork.self)
    }

    /// Resolves the shared renderer.
    public func noteRenderer() throws -> NoteRenderer {
        try container.resolve(NoteRenderer.self)
    }
}
