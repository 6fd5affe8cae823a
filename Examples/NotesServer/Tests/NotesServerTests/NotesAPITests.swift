import Foundation
import Hummingbird
import HummingbirdTesting
import NotesApp
import Testing

/// The API answers the same, wired with Arbor or by hand.
@Suite struct NotesAPITests {
    @Test(arguments: Wiring.allCases)
    func createListGetAndDelete(wiring: Wiring) async throws {
        let server = try TestServer(wiring)
        try await server.test { client in
            let first = try await client.createNote(title: "Groceries", body: "eggs, milk")
            let second = try await client.createNote(title: "Ideas")
            #expect(first.title == "Groceries" && first.body == "eggs, milk")
            #expect(second.body == "")
            #expect(first.id != second.id)

            let list = try await client.execute(uri: "/notes", method: .get)
            #expect(list.status == .ok)
            #expect(try decodeJSON(NoteList.self, from: list.body).notes == [first, second])

            let shown = try await client.execute(uri: "/notes/\(first.id)", method: .get)
            #expect(shown.status == .ok)
            #expect(shown.headers[.contentType] == "application/json")
            #expect(try decodeJSON(Note.self, from: shown.body) == first)

            let deleted = try await client.execute(uri: "/notes/\(first.id)", method: .delete)
            #expect(deleted.status == .noContent)
            #expect(try await client.execute(uri: "/notes/\(first.id)", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/notes/\(first.id)", method: .delete).status == .notFound)

            let remaining = try await client.execute(uri: "/notes", method: .get)
            #expect(try decodeJSON(NoteList.self, from: remaining.body).notes == [second])
        }
        #expect(server.store.count == 1)
    }

    @Test(arguments: Wiring.allCases)
    func aNoteNeedsATitle(wiring: Wiring) async throws {
        let server = try TestServer(wiring)
        try await server.test { client in
            let response = try await client.execute(
                uri: "/notes", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"title": "  ", "body": "no title"}"#))
            #expect(response.status == .badRequest)
            let garbled = try await client.execute(
                uri: "/notes", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"body": "no title at all"}"#))
            #expect(garbled.status == .badRequest)
        }
        #expect(server.store.count == 0)
    }

    /// The export is written in several chunks after the handler has returned; every chunk resolves the request's
    /// unit of work and renderer again, which works only while the request's container is open.
    @Test(arguments: Wiring.allCases)
    func theExportStreamsEveryNote(wiring: Wiring) async throws {
        let server = try TestServer(wiring)
        try await server.test { client in
            var created: [Note] = []
            for number in 1...7 {
                created.append(try await client.createNote(title: "Note \(number)", body: "text \(number)"))
            }
            let endedBefore = server.log.unitsOfWorkEnded

            let response = try await client.execute(uri: "/notes/export?pageSize=2", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/x-ndjson")
            let lines = String(buffer: response.body).split(separator: "\n")
            let exported = try lines.map { try decodeJSON(Note.self, from: ByteBuffer(string: String($0))) }
            #expect(exported == created)

            // One unit of work for the whole export, resolved once per page (four pages), and ended after.
            #expect(server.log.unitsOfWorkEnded == endedBefore + 1)
            let work = try #require(server.log.recentUnitsOfWork.last)
            #expect(work.reads == 7)
            #expect(server.log.unitsOfWorkBegun == server.log.unitsOfWorkEnded)
        }
    }

    @Test(arguments: Wiring.allCases)
    func anEmptyExportIsEmpty(wiring: Wiring) async throws {
        let server = try TestServer(wiring)
        try await server.test { client in
            let response = try await client.execute(uri: "/notes/export", method: .get)
            #expect(response.status == .ok)
            #expect(response.body.readableBytes == 0)
        }
    }
}
