import Foundation
public import Hummingbird

/// A note, as the API returns it.
public struct Note: Codable, Equatable, Sendable, ResponseEncodable {
    /// The note's identifier, made by the app's ``IDGenerator``.
    public var id: String
    /// A short title; never empty.
    public var title: String
    /// The note's text.
    public var body: String
    /// When the note was created, by the app's ``WallClock``.
    public var createdAt: Date

    /// Makes a note.
    public init(id: String, title: String, body: String, createdAt: Date) {
        self.id = id
        self.title = title
        self.body = body
        self.createdAt = createdAt
    }
}

/// What `POST /notes` takes.
public struct NewNote: Codable, Sendable {
    /// The title; it must not be empty.
    public var title: String
    /// The text; empty when left out.
    public var body: String

    /// Makes the request body.
    public init(title: String, body: String = "") {
        self.title = title
        self.body = body
    }

    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        title = try values.decode(String.self, forKey: .title)
        body = try values.decodeIfPresent(String.self, forKey: .body) ?? ""
    }
}

/// What `GET /notes` returns: every note, oldest first.
public struct NoteList: Codable, Sendable, ResponseEncodable {
    /// The notes, oldest first.
    public var notes: [Note]

    /// Makes the list.
    public init(notes: [Note]) {
        self.notes = notes
    }
}

/// The encoder that renders notes the way Hummingbird's JSON responses do (ISO 8601 dates).
func makeNoteEncoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    encoder.outputFormatting = .sortedKeys
    return encoder
}
