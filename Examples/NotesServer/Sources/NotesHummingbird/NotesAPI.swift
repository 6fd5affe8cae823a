import Foundation
public import Hummingbird
public import NotesCore

/// What the notes routes ask of a Hummingbird request context: the request's services. ``ArborRequestContext``
/// resolves them from the request's child container; ``ManualRequestContext`` builds them by hand.
public protocol NotesRequestContext: RequestContext {
    /// The request's services.
    func services() throws -> any NotesServices
}

/// The notes API on Hummingbird: the routes of ``NotesCore/NotesRoutes``.
public enum NotesAPI {
    /// Adds the routes to `router`.
    ///
    /// - Parameter router: The router; add the middleware that gives requests their services before calling this.
    public static func addRoutes<Context: NotesRequestContext>(to router: Router<Context>) {
        let notes = router.group("notes")
        notes.post { request, context -> EditedResponse<Note> in
            let new = try await request.decode(as: NewNote.self, context: context)
            let note = try NotesRoutes.create(new, services: context.services())
            return EditedResponse(status: .created, headers: [.location: "/notes/\(note.id)"], response: note)
        }
        notes.get { _, context in try NotesRoutes.list(services: context.services()) }
        notes.get("export") { request, context in
            let pageSize = request.uri.queryParameters.get("pageSize", as: Int.self) ?? NotesRoutes.exportPageSize
            return export(pageSize: pageSize, services: try context.services())
        }
        notes.get(":id") { _, context in
            let json = try NotesRoutes.show(id: context.parameters.require("id"), services: context.services())
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: json))
        }
        notes.delete(":id") { _, context -> HTTPResponse.Status in
            try NotesRoutes.delete(id: context.parameters.require("id"), services: context.services())
            return .noContent
        }
    }

    /// Streams every note, `pageSize` at a time. The body runs after the handler has returned, while Hummingbird
    /// writes the response, and asks the request for its unit of work again for every page.
    static func export(pageSize: Int, services: any NotesServices) -> Response {
        let body = ResponseBody { writer in
            var cursor: Int? = nil
            repeat {
                let (chunk, next) = try NotesRoutes.exportChunk(after: cursor, pageSize: pageSize, services: services)
                if chunk.readableBytes > 0 { try await writer.write(chunk) }
                cursor = next
            } while cursor != nil
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "application/x-ndjson"], body: body)
    }
}

extension Note: ResponseEncodable {}
extension NoteList: ResponseEncodable {}

extension NotesError: HTTPResponseError {
    /// The error's status.
    public var status: HTTPResponse.Status { .init(code: statusCode) }

    /// The error's message, as a plain-text body.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
    }
}
