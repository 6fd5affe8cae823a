public import Foundation

/// A note, as the API returns it.
public struct Note: Codable, Equatable, Sendable {
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
public struct NoteList: Codable, Sendable {
    /// The notes, oldest first.
    public var notes: [Note]

    /// Makes the list.
    public init(notes: [Note]) {
        self.notes = notes
    }
}

/// The encoder that renders notes the way both servers' JSON responses do (ISO 8601 dates, sorted keys).
public func makeNoteEncoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    encoder.outputFormatting = .sortedKeys
    return encoder
}

/// The user a request is made for, from its `X-User` header: registered as an instance in the request's child
/// container (Arbor), or kept by the request's scope (by hand).
public struct RequestUser: Equatable, Sendable {
    /// The header that names the user.
    public static let header = "X-User"

    /// The user's name.
    public let name: String

    /// The user named by a request's `X-User` header; throws ``NotesError/missingUser`` when there is none.
    public init(header value: String?) throws(NotesError) {
        guard let value, value.contains(where: { !$0.isWhitespace }) else { throw .missingUser }
        self.name = value
    }
}

/// What the notes API answers with a 4xx: each server turns it into a response with this status and message.
public enum NotesError: Error, Equatable, Sendable {
    /// The request has no `X-User` header: 401.
    case missingUser
    /// `POST /notes` with an empty title: 400.
    case titleMissing
    /// No note has this identifier: 404.
    case noteNotFound(String)

    /// The HTTP status code.
    public var statusCode: Int {
        switch self {
        case .missingUser: 401
        case .titleMissing: 400
        case .noteNotFound: 404
        }
    }

    /// What the response body says.
    public var message: String {
        switch self {
        case .missingUser: "Say who you are: send your user name in an \(RequestUser.header) header."
        case .titleMissing: "A note needs a title."
        case .noteNotFound(let id): "There is no note \(id)."
        }
    }
}
