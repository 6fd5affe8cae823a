import Foundation
public import Hummingbird

/// What the notes routes ask of a request: its services. ``ArborRequestContext`` resolves them from the request's
/// child container; ``ManualRequestContext`` builds them by hand. The routes are the same for both.
public protocol NotesRequestContext: RequestContext {
    /// A controller working on the request's unit of work.
    func notesController() throws -> NotesController
    /// The request's unit of work: the same one for the whole request.
    func unitOfWork() throws -> NotesUnitOfWork
    /// The renderer, shared with the other requests using it at the moment.
    func noteRenderer() throws -> NoteRenderer
}

/// The notes API:
///
/// | route | does |
/// | --- | --- |
/// | `POST /notes` `{"title", "body"}` | creates a note: `201 Created` with the note |
/// | `GET /notes` | `{"notes": [...]}`, oldest first |
/// | `GET /notes/:id` | the note, or `404` |
/// | `DELETE /notes/:id` | `204 No Content`, or `404` |
/// | `GET /notes/export?pageSize=N` | every note as NDJSON, one line each, streamed `N` notes per body chunk |
public enum NotesAPI {
    /// Adds the routes to `router`.
    ///
    /// - Parameters:
    ///   - router: The router; add the middleware that gives requests their services before calling this.
    ///   - exportPageSize: How many notes `GET /notes/export` writes per body chunk, unless the request says.
    public static func addRoutes<Context: NotesRequestContext>(to router: Router<Context>, exportPageSize: Int = 16) {
        let notes = router.group("notes")
        notes.post(use: create)
        notes.get(use: list)
        notes.get("export") { request, context in
            let pageSize = request.uri.queryParameters.get("pageSize", as: Int.self) ?? exportPageSize
            return export(pageSize: max(pageSize, 1), context: context)
        }
        notes.get(":id", use: show)
        notes.delete(":id", use: delete)
    }

    @Sendable static func create<Context: NotesRequestContext>(
        _ request: Request, context: Context
    ) async throws -> EditedResponse<Note> {
        let new = try await request.decode(as: NewNote.self, context: context)
        guard !new.title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw HTTPError(.badRequest, message: "A note needs a title.")
        }
        let notes = try context.notesController()
        let note = try notes.create(new)
        try notes.save()
        return EditedResponse(status: .created, headers: [.location: "/notes/\(note.id)"], response: note)
    }

    @Sendable static func list<Context: NotesRequestContext>(_ request: Request, context: Context) throws -> NoteList {
        NoteList(notes: try context.notesController().all())
    }

    @Sendable static func show<Context: NotesRequestContext>(_ request: Request, context: Context) throws -> Response {
        let id = try context.parameters.require("id")
        guard let note = try context.notesController().note(id: id) else { throw HTTPError(.notFound) }
        let json = try context.noteRenderer().render(note)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: json))
    }

    @Sendable static func delete<Context: NotesRequestContext>(
        _ request: Request, context: Context
    ) throws -> HTTPResponse.Status {
        let id = try context.parameters.require("id")
        let notes = try context.notesController()
        guard try notes.delete(id: id) else { throw HTTPError(.notFound) }
        try notes.save()
        try context.noteRenderer().forget(id: id)
        return .noContent
    }

    /// Streams every note, `pageSize` at a time. The body runs after the handler has returned, while Hummingbird
    /// writes the response, and it asks the request for its unit of work again for every page: the request's
    /// services are there until the last byte is written.
    static func export<Context: NotesRequestContext>(pageSize: Int, context: Context) -> Response {
        let body = ResponseBody { writer in
            let renderer = try context.noteRenderer()
            var cursor: Int? = nil
            repeat {
                let work = try context.unitOfWork()
                let page = try work.page(after: cursor, limit: pageSize)
                var chunk = ByteBuffer()
                for note in page.notes {
                    var json = try renderer.render(note)
                    chunk.writeBuffer(&json)
                    chunk.writeString("\n")
                }
                if chunk.readableBytes > 0 { try await writer.write(chunk) }
                cursor = page.next
            } while cursor != nil
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "application/x-ndjson"], body: body)
    }
}
