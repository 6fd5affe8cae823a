import Foundation
public import NotesCore
public import Vapor

/// The notes API on Vapor: the routes of ``NotesCore/NotesRoutes``, with the request's services from `services`.
public enum VaporNotesAPI {
    /// Adds the routes to `routes`.
    ///
    /// - Parameters:
    ///   - routes: The app, or a group of it; add the middleware that gives requests their services first.
    ///   - services: The request's services: resolved from `request.container`, or the request's hand-made scope.
    public static func addRoutes(
        to routes: some RoutesBuilder,
        services: @escaping @Sendable (Request) throws -> any NotesServices
    ) {
        let notes = routes.grouped("notes")
        notes.post { request -> Response in
            let new = try request.content.decode(NewNote.self)
            let note = try NotesRoutes.create(new, services: services(request))
            let response = try json(note, status: .created)
            response.headers.replaceOrAdd(name: .location, value: "/notes/\(note.id)")
            return response
        }
        notes.get { request in try json(NotesRoutes.list(services: services(request))) }
        notes.get("export") { request -> Response in
            let pageSize = (try? request.query.get(Int.self, at: "pageSize")) ?? NotesRoutes.exportPageSize
            let services = try services(request)
            let response = Response(
                status: .ok,
                body: .init(asyncStream: { writer in
                    var cursor: Int? = nil
                    repeat {
                        let (chunk, next) = try NotesRoutes.exportChunk(
                            after: cursor, pageSize: pageSize, services: services)
                        if chunk.readableBytes > 0 { try await writer.write(.buffer(chunk)) }
                        cursor = next
                    } while cursor != nil
                    try await writer.write(.end)
                }))
            response.headers.contentType = HTTPMediaType(type: "application", subType: "x-ndjson")
            return response
        }
        notes.get(":id") { request -> Response in
            let json = try NotesRoutes.show(id: request.parameters.require("id"), services: services(request))
            return Response(status: .ok, headers: ["content-type": "application/json"], body: .init(buffer: json))
        }
        notes.delete(":id") { request -> HTTPStatus in
            try NotesRoutes.delete(id: request.parameters.require("id"), services: services(request))
            return .noContent
        }
    }

    /// `value` as JSON, encoded like the Hummingbird server's responses (ISO 8601 dates).
    static func json(_ value: some Encodable, status: HTTPResponseStatus = .ok) throws -> Response {
        Response(
            status: status, headers: ["content-type": "application/json"],
            body: .init(data: try makeNoteEncoder().encode(value)))
    }
}

extension NotesError: AbortError {
    /// The error's status.
    public var status: HTTPResponseStatus { HTTPResponseStatus(statusCode: statusCode) }
    /// The error's message, which Vapor's error middleware puts in the response's body.
    public var reason: String { message }
}
