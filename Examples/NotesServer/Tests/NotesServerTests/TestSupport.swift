import Arbor
import Foundation
import Hummingbird
import HummingbirdTesting
import NotesApp
import Synchronization
import Testing

/// A notes server for one test, wired one way or the other, with the services a test looks at.
struct TestServer {
    let app: any ApplicationProtocol
    let log: ActivityLog
    let store: NoteStore

    init(_ wiring: Wiring) throws {
        switch wiring {
        case .arbor:
            let root = ArborWiring.makeContainer()
            app = NotesApplication.arbor(root: root)
            log = try root.resolve(ActivityLog.self)
            store = try root.resolve(NoteStore.self)
        case .manual:
            let services = ManualServices()
            app = NotesApplication.manual(services: services)
            log = services.log
            store = services.store
        }
    }

    func test<Value>(_ body: @Sendable (any TestClientProtocol) async throws -> Value) async throws -> Value {
        try await app.test(.router, body)
    }
}

extension TestClientProtocol {
    /// Posts a note and returns it as the server created it.
    @discardableResult
    func createNote(title: String, body: String = "") async throws -> Note {
        let response = try await execute(
            uri: "/notes", method: .post, headers: [.contentType: "application/json"],
            body: ByteBuffer(data: try JSONEncoder().encode(NewNote(title: title, body: body))))
        #expect(response.status == .created)
        let note = try decodeJSON(Note.self, from: response.body)
        #expect(response.headers[.location] == "/notes/\(note.id)")
        return note
    }
}

/// Decodes a JSON body the way the server encodes it (ISO 8601 dates).
func decodeJSON<Value: Decodable>(_ type: Value.Type, from body: ByteBuffer) throws -> Value {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return try decoder.decode(type, from: Data(String(buffer: body).utf8))
}

extension ByteBuffer {
    init(data: Data) {
        self.init(bytes: data)
    }
}

/// What happened, in order, from any task.
final class Events: Sendable {
    private let events = Mutex<[String]>([])

    func record(_ event: String) {
        events.withLock { $0.append(event) }
    }

    var all: [String] { events.withLock { $0 } }

    /// Waits up to a second for `event`: with a live server, the client can see the response's end a moment
    /// before the server has finished writing it.
    func waitFor(_ event: String) async throws -> Bool {
        for _ in 0..<100 {
            if all.contains(event) { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return all.contains(event)
    }
}
