public import Arbor
public import ArborHummingbird
import HTTPTypes
public import Hummingbird
public import NotesCore

/// The notes server on Hummingbird wired with Arbor: services resolved from a child container per request.
public enum ArborWiring {
    /// A router with the notes routes, that gives every request a child of `root` with the request's user in it.
    ///
    /// - Parameter root: The container with the notes services: `NotesAssembly.makeContainer()`, or in a test a
    ///   child of it that overrides some of them.
    public static func makeRouter(root: Container) -> Router<ArborRequestContext> {
        let router = Router(context: ArborRequestContext.self)
        router.add(
            middleware: RequestContainerMiddleware(root: root) { request, _, child in
                try NotesAssembly.registerRequestValues(userHeader: request.headers[userHeader], in: child)
            })
        NotesAPI.addRoutes(to: router)
        return router
    }

    static let userHeader = HTTPField.Name(RequestUser.header)!
}

/// The Arbor-wired server's request context: it carries the request's child container, and resolves the notes
/// services from it.
public struct ArborRequestContext: ContainerRequestContext, NotesRequestContext {
    /// What Hummingbird keeps for the request.
    public var coreContext: CoreRequestContextStorage
    /// The request's child container, set by `RequestContainerMiddleware`.
    public var requestContainer: Container?

    /// Makes the context; the middleware sets the container.
    public init(source: Source) {
        self.coreContext = .init(source: source)
    }

    /// The services, resolved from the request's container.
    public func services() throws -> any NotesServices {
        ArborNotesServices(try container)
    }
}
