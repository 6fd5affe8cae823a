import Foundation
import NIOConcurrencyHelpers

// The app-wide services: one of each for the whole server, whichever way it is wired.

/// Tells the time. The app uses ``SystemWallClock``; a test can register a ``FixedWallClock`` instead.
public protocol WallClock: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system's clock.
public struct SystemWallClock: WallClock {
    /// Makes the clock.
    public init() {}

    /// `Date()`.
    public func now() -> Date { Date() }
}

/// A clock that always tells the same time.
public struct FixedWallClock: WallClock {
    /// The time it tells.
    public let date: Date

    /// Makes a clock stopped at `date`.
    public init(_ date: Date) {
        self.date = date
    }

    /// ``date``.
    public func now() -> Date { date }
}

/// Makes the identifiers of new notes.
public protocol IDGenerator: Sendable {
    /// A new identifier, different from every one made before.
    func next() -> String
}

/// Random identifiers: lowercase UUIDs.
public struct RandomIDGenerator: IDGenerator {
    /// Makes the generator.
    public init() {}

    /// A new lowercase UUID.
    public func next() -> String { UUID().uuidString.lowercased() }
}

/// Identifiers that count up: `note-1`, `note-2`, … Predictable, for tests.
public final class SequentialIDGenerator: IDGenerator {
    private let prefix: String
    private let counter = NIOLockedValueBox(0)

    /// Makes a generator whose identifiers start with `prefix`.
    public init(prefix: String = "note-") {
        self.prefix = prefix
    }

    /// The next identifier.
    public func next() -> String {
        let number = counter.withLockedValue { counter in
            counter += 1
            return counter
        }
        return "\(prefix)\(number)"
    }
}

/// Where the notes live: in memory, safe to use from any task.
///
/// Notes are kept in the order they were added; a deletion removes one. Changes come in through
/// ``apply(inserting:deleting:)``, which a ``NotesUnitOfWork`` calls when it commits.
public final class NoteStore: Sendable {
    private struct Entry {
        /// The position in the store: it only grows, so entries stay sorted by it.
        var sequence: Int
        var note: Note
    }

    private struct State {
        var entries: [Entry] = []
        var sequenceByID: [String: Int] = [:]
        var nextSequence = 1

        /// The index of the first entry whose sequence is at least `sequence`.
        func index(atOrAfter sequence: Int) -> Int {
            var low = 0
            var high = entries.count
            while low < high {
                let middle = (low + high) / 2
                if entries[middle].sequence < sequence { low = middle + 1 } else { high = middle }
            }
            return low
        }

        func index(of id: String) -> Int? {
            guard let sequence = sequenceByID[id] else { return nil }
            let index = index(atOrAfter: sequence)
            return index < entries.count && entries[index].sequence == sequence ? index : nil
        }
    }

    private let state = NIOLockedValueBox(State())

    /// Makes an empty store.
    public init() {}

    /// How many notes there are.
    public var count: Int { state.withLockedValue { $0.entries.count } }

    /// The note with this identifier, or `nil`.
    public func note(id: String) -> Note? {
        state.withLockedValue { state in state.index(of: id).map { state.entries[$0].note } }
    }

    /// Every note, oldest first.
    public func all() -> [Note] {
        state.withLockedValue { $0.entries.map(\.note) }
    }

    /// Up to `limit` notes that come after `cursor` (from the start when `cursor` is `nil`), and the cursor to
    /// pass for the next page, or `nil` when there is none.
    public func page(after cursor: Int?, limit: Int) -> (notes: [Note], next: Int?) {
        state.withLockedValue { state in
            let start = state.index(atOrAfter: (cursor ?? 0) + 1)
            let end = min(start + max(limit, 1), state.entries.count)
            let page = state.entries[start..<end]
            let next = end < state.entries.count ? page.last?.sequence : nil
            return (page.map(\.note), next)
        }
    }

    /// Adds `inserted` and removes the notes whose identifiers are in `deleted`, all at once.
    public func apply(inserting inserted: [Note], deleting deleted: Set<String>) {
        state.withLockedValue { state in
            for id in deleted {
                guard let index = state.index(of: id) else { continue }
                state.entries.remove(at: index)
                state.sequenceByID[id] = nil
            }
            for note in inserted where state.sequenceByID[note.id] == nil {
                state.entries.append(Entry(sequence: state.nextSequence, note: note))
                state.sequenceByID[note.id] = state.nextSequence
                state.nextSequence += 1
            }
        }
    }
}

/// What happened to one request's unit of work, as ``ActivityLog`` keeps it.
public struct UnitOfWorkSummary: Equatable, Sendable {
    /// The unit of work's number: 1 for the first one the log saw.
    public var serial: Int
    /// How many notes it read.
    public var reads: Int
    /// How many notes it added to the store.
    public var inserted: Int
    /// How many notes it removed from the store.
    public var deleted: Int
    /// How many changes it dropped because they were never committed.
    public var discarded: Int

    /// Makes a summary.
    public init(serial: Int, reads: Int, inserted: Int, deleted: Int, discarded: Int) {
        self.serial = serial
        self.reads = reads
        self.inserted = inserted
        self.deleted = deleted
        self.discarded = discarded
    }
}

/// The app's activity: an audit trail of changes, and the units of work that began and ended.
///
/// It keeps counts for the whole run, and only the most recent entries, so it stays small however long the server
/// runs.
public final class ActivityLog: Sendable {
    private struct State {
        var began = 0
        var ended = 0
        var summaries = RecentItems<UnitOfWorkSummary>(capacity: 256)
        var audit = RecentItems<String>(capacity: 256)
    }

    private let state = NIOLockedValueBox(State())

    /// Makes an empty log.
    public init() {}

    /// Counts a unit of work that began, and returns its serial number.
    public func unitOfWorkBegan() -> Int {
        state.withLockedValue { state in
            state.began += 1
            return state.began
        }
    }

    /// Records a unit of work that ended.
    public func unitOfWorkEnded(_ summary: UnitOfWorkSummary) {
        state.withLockedValue { state in
            state.ended += 1
            state.summaries.append(summary)
        }
    }

    /// Adds a line to the audit trail.
    public func audit(_ line: String) {
        state.withLockedValue { $0.audit.append(line) }
    }

    /// How many units of work began.
    public var unitsOfWorkBegun: Int { state.withLockedValue { $0.began } }
    /// How many units of work ended.
    public var unitsOfWorkEnded: Int { state.withLockedValue { $0.ended } }
    /// The units of work that ended most recently, oldest first.
    public var recentUnitsOfWork: [UnitOfWorkSummary] { state.withLockedValue { $0.summaries.items } }
    /// The most recent lines of the audit trail, oldest first.
    public var recentAudit: [String] { state.withLockedValue { $0.audit.items } }
}

/// The last `capacity` items appended.
struct RecentItems<Item: Sendable>: Sendable {
    private var storage: [Item] = []
    private var oldest = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    mutating func append(_ item: Item) {
        if storage.count < capacity {
            storage.append(item)
        } else {
            storage[oldest] = item
            oldest = (oldest + 1) % capacity
        }
    }

    /// Oldest first.
    var items: [Item] { Array(storage[oldest...] + storage[..<oldest]) }
}
