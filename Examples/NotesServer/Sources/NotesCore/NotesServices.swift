public import Arbor
import Foundation
public import NIOCore

/// What the notes routes ask of a request: its services. ``ArborNotesServices`` resolves them from the request's
/// child container; ``ManualRequestScope`` builds them by hand. The routes are the same for both, on both servers.
public protocol NotesServices: Sendable {
    /// A controller working on the request's unit of work.
    func notesController() throws -> NotesController
    /// The request's unit of work: the same one for the whole request.
    func unitOfWork() throws -> NotesUnitOfWork
    /// The renderer, shared with the other requests using it at the moment.
    func noteRenderer() throws -> NoteRenderer
}

/// A request's services, resolved from its child container.
public struct ArborNotesServices: NotesServices {
    /// The request's child container.
    public let container: Container

    /// The services of the request whose container this is.
    public init(_ container: Container) {
        self.container = container
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

/// What the notes routes do, apart from reading the request and writing the response: the same on both servers.
///
/// | route | does |
/// | --- | --- |
/// | `POST /notes` `{"title", "body"}` | creates a note: `201 Created` with the note |
/// | `GET /notes` | `{"notes": [...]}`, oldest first |
/// | `GET /notes/:id` | the note, or `404` |
/// | `DELETE /notes/:id` | `204 No Content`, or `404` |
/// | `GET /notes/export?pageSize=N` | every note as NDJSON, one line each, streamed `N` notes per body chunk |
///
/// Every request names its user in an `X-User` header (``RequestUser``); without it, `401`.
public enum NotesRoutes {
    /// How many notes `GET /notes/export` writes per body chunk, unless the request says.
    public static let exportPageSize = 16

    /// Creates a note and saves it.
    public static func create(_ new: NewNote, services: some NotesServices) throws -> Note {
        guard !new.title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw NotesError.titleMissing
        }
        let notes = try services.notesController()
        let note = try notes.create(new)
        try notes.save()
        return note
    }

    /// Every note, oldest first.
    public static func list(services: some NotesServices) throws -> NoteList {
        NoteList(notes: try services.notesController().all())
    }

    /// The note with this identifier, as JSON.
    public static func show(id: String, services: some NotesServices) throws -> ByteBuffer {
        guard let note = try services.notesController().note(id: id) else { throw NotesError.noteNotFound(id) }
        return try services.noteRenderer().render(note)
    }

    /// Deletes the note with this identifier.
    public static func delete(id: String, services: some NotesServices) throws {
        let notes = try services.notesController()
        guard try notes.delete(id: id) else { throw NotesError.noteNotFound(id) }
        try notes.save()
        try services.noteRenderer().forget(id: id)
    }

    /// One chunk of the export: up to `pageSize` notes after `cursor`, as NDJSON, and the cursor of the next chunk,
    /// or `nil` after the last. It asks the request for its unit of work again for every chunk: the body runs while
    /// the server writes the response, and the request's services are there until the last byte is written.
    public static func exportChunk(
        after cursor: Int?, pageSize: Int, services: some NotesServices
    ) throws -> (chunk: ByteBuffer, next: Int?) {
        let renderer = try services.noteRenderer()
        let page = try services.unitOfWork().page(after: cursor, limit: max(pageSize, 1))
        var chunk = ByteBuffer()
        for note in page.notes {
            var json = try renderer.render(note)
            chunk.writeBuffer(&json)
            chunk.writeString("\n")
        }
        return (chunk, page.next)
    }
}
