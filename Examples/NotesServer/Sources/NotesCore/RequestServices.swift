import Foundation
import NIOConcurrencyHelpers
public import NIOCore

// The services a request uses. The Arbor wiring and the hand wiring build these same types; only how differs.

/// One request's changes to the notes: it reads through them, and applies them to the ``NoteStore`` all at once on
/// ``commit()``. One per request, shared by everything that handles the request.
///
/// When the request ends, ``end()`` drops what was never committed and records a ``UnitOfWorkSummary`` in the
/// ``ActivityLog``. After that, using it throws ``UnitOfWorkEnded``.
public final class NotesUnitOfWork: Sendable {
    /// Its number in the ``ActivityLog``.
    public let serial: Int
    private let store: NoteStore
    private let log: ActivityLog

    private struct State {
        var inserted: [Note] = []
        var deleted: Set<String> = []
        var reads = 0
        var committedInserts = 0
        var committedDeletes = 0
        var isEnded = false

        func check() throws {
            if isEnded { throw UnitOfWorkEnded() }
        }
    }

    private let state = NIOLockedValueBox(State())

    /// Begins a unit of work over `store`, counted in `log`.
    public init(store: NoteStore, log: ActivityLog) {
        self.store = store
        self.log = log
        self.serial = log.unitOfWorkBegan()
    }

    /// The note with this identifier, as this unit of work sees it, or `nil`.
    public func note(id: String) throws -> Note? {
        try state.withLockedValue { state in
            try state.check()
            if state.deleted.contains(id) { return nil }
            let note = state.inserted.first { $0.id == id } ?? store.note(id: id)
            if note != nil { state.reads += 1 }
            return note
        }
    }

    /// Every note, as this unit of work sees it, oldest first.
    public func all() throws -> [Note] {
        try state.withLockedValue { state in
            try state.check()
            let notes = store.all().filter { !state.deleted.contains($0.id) } + state.inserted
            state.reads += notes.count
            return notes
        }
    }

    /// A page of the committed notes, for exporting them a few at a time; see ``NoteStore/page(after:limit:)``.
    public func page(after cursor: Int?, limit: Int) throws -> (notes: [Note], next: Int?) {
        try state.withLockedValue { state in
            try state.check()
            let page = store.page(after: cursor, limit: limit)
            state.reads += page.notes.count
            return page
        }
    }

    /// Adds a note, once committed.
    public func insert(_ note: Note) throws {
        try state.withLockedValue { state in
            try state.check()
            state.inserted.append(note)
        }
    }

    /// Removes the note with this identifier, once committed. Returns whether there was one.
    public func delete(id: String) throws -> Bool {
        try state.withLockedValue { state in
            try state.check()
            if let index = state.inserted.firstIndex(where: { $0.id == id }) {
                state.inserted.remove(at: index)
                return true
            }
            guard !state.deleted.contains(id), store.note(id: id) != nil else { return false }
            state.deleted.insert(id)
            return true
        }
    }

    /// Applies the changes made so far to the store, all at once.
    public func commit() throws {
        try state.withLockedValue { state in
            try state.check()
            store.apply(inserting: state.inserted, deleting: state.deleted)
            state.committedInserts += state.inserted.count
            state.committedDeletes += state.deleted.count
            state.inserted = []
            state.deleted = []
        }
    }

    /// Whether ``end()`` has run.
    public var isEnded: Bool { state.withLockedValue { $0.isEnded } }

    /// Ends the unit of work: drops the changes that were not committed and records what it did. Ending twice does
    /// nothing more.
    public func end() {
        let summary = state.withLockedValue { state -> UnitOfWorkSummary? in
            guard !state.isEnded else { return nil }
            state.isEnded = true
            let discarded = state.inserted.count + state.deleted.count
            state.inserted = []
            state.deleted = []
            return UnitOfWorkSummary(
                serial: serial, reads: state.reads, inserted: state.committedInserts,
                deleted: state.committedDeletes, discarded: discarded)
        }
        if let summary { log.unitOfWorkEnded(summary) }
    }
}

/// What a ``NotesUnitOfWork`` throws once it has ended: its request is over.
public struct UnitOfWorkEnded: Error, CustomStringConvertible {
    /// Says what happened.
    public var description: String { "The unit of work was used after its request ended." }
}

/// The notes operations a request performs, on the request's ``NotesUnitOfWork``.
///
/// It owns a ``NotesAuditor``, which points back at it weakly: a circular pair. With Arbor, the auditor's
/// `initCompleted` hook sets the back reference; by hand, the code that makes both sets it.
public final class NotesController {
    /// The request's unit of work.
    public let work: NotesUnitOfWork
    /// The user the request is made for.
    public let user: RequestUser
    /// The auditor that records this controller's changes.
    public let auditor: NotesAuditor
    private let clock: any WallClock
    private let ids: any IDGenerator

    /// Makes a controller.
    public init(
        work: NotesUnitOfWork, user: RequestUser, clock: any WallClock, ids: any IDGenerator, auditor: NotesAuditor
    ) {
        self.work = work
        self.user = user
        self.clock = clock
        self.ids = ids
        self.auditor = auditor
    }

    /// Creates a note, with a new identifier and the current time; ``save()`` stores it.
    public func create(_ new: NewNote) throws -> Note {
        let note = Note(id: ids.next(), title: new.title, body: new.body, createdAt: clock.now())
        try work.insert(note)
        auditor.created(note)
        return note
    }

    /// The note with this identifier, or `nil`.
    public func note(id: String) throws -> Note? {
        try work.note(id: id)
    }

    /// Every note, oldest first.
    public func all() throws -> [Note] {
        try work.all()
    }

    /// Deletes a note; ``save()`` removes it from the store. Returns whether there was one.
    public func delete(id: String) throws -> Bool {
        guard try work.delete(id: id) else { return false }
        auditor.deleted(id: id)
        return true
    }

    /// Commits the request's changes.
    public func save() throws {
        try work.commit()
    }
}

/// Records a controller's changes in the ``ActivityLog``, with the unit of work they belong to.
public final class NotesAuditor {
    /// The controller whose changes this auditor records. Weak: the controller owns its auditor.
    public weak var controller: NotesController?
    private let log: ActivityLog

    /// Makes an auditor; set ``controller`` once the controller exists.
    public init(log: ActivityLog) {
        self.log = log
    }

    func created(_ note: Note) {
        log.audit("\(user) created \(note.id) in unit of work \(serial)")
    }

    func deleted(id: String) {
        log.audit("\(user) deleted \(id) in unit of work \(serial)")
    }

    private var user: String {
        controller.map(\.user.name) ?? "(nobody)"
    }

    private var serial: String {
        controller.map { "#\($0.work.serial)" } ?? "(none)"
    }
}

/// Renders notes to JSON and keeps what it rendered: shared by the requests that use it at the same time, and let
/// go when none does.
public final class NoteRenderer: Sendable {
    private let cache = NIOLockedValueBox<[String: ByteBuffer]>([:])
    private static let capacity = 1024

    /// Makes an empty renderer.
    public init() {}

    /// The note as JSON, rendered once per identifier.
    public func render(_ note: Note) throws -> ByteBuffer {
        if let cached = cache.withLockedValue({ $0[note.id] }) { return cached }
        let buffer = ByteBuffer(bytes: try makeNoteEncoder().encode(note))
        cache.withLockedValue { cache in
            if cache.count >= Self.capacity { cache.removeAll() }
            cache[note.id] = buffer
        }
        return buffer
    }

    /// Forgets the note with this identifier.
    public func forget(id: String) {
        _ = cache.withLockedValue { $0.removeValue(forKey: id) }
    }
}
