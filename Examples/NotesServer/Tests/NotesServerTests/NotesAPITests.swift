import Foundation
import NotesCore
import Testing

/// The API answers the same on both frameworks, wired with Arbor or by hand.
@Suite struct NotesAPITests {
    @Test(arguments: Setup.all)
    func createListGetAndDelete(setup: Setup) async throws {
        let server = try TestServer(setup)
        try await server.test { client in
            let first = try await client.createNote(title: "Groceries", body: "eggs, milk")
            let second = try await client.createNote(title: "Ideas")
            #expect(first.title == "Groceries" && first.body == "eggs, milk")
            #expect(second.body == "")
            #expect(first.id != second.id)

            let list = try await client.send("GET", "/notes")
            #expect(list.status == 200)
            #expect(try list.decode(NoteList.self).notes == [first, second])

            let shown = try await client.send("GET", "/notes/\(first.id)")
            #expect(shown.status == 200)
            #expect(shown.headers["content-type"] == "application/json")
            #expect(try shown.decode(Note.self) == first)

            #expect(try await client.send("DELETE", "/notes/\(first.id)").status == 204)
            #expect(try await client.send("GET", "/notes/\(first.id)").status == 404)
            #expect(try await client.send("DELETE", "/notes/\(first.id)").status == 404)

            let remaining = try await client.send("GET", "/notes")
            #expect(try remaining.decode(NoteList.self).notes == [second])
        }
        #expect(server.store.count == 1)
    }

    /// A bad request gets a 4xx whose body says what was wrong, and its request's services end with it.
    @Test(arguments: Setup.all)
    func badRequestsGetA4xxWithAReason(setup: Setup) async throws {
        let server = try TestServer(setup)
        try await server.test { client in
            let anonymous = try await client.send("GET", "/notes", user: nil)
            #expect(anonymous.status == 401)
            #expect(anonymous.body.contains("X-User header"))

            let malformed = try await client.send("POST", "/notes", json: #"{"title": "unfinished"#)
            #expect(malformed.status == 400)
            #expect(!malformed.body.isEmpty)

            let untitled = try await client.send("POST", "/notes", json: #"{"title": "  ", "body": "no title"}"#)
            #expect(untitled.status == 400)
            #expect(untitled.body.contains("A note needs a title."))

            let noTitle = try await client.send("POST", "/notes", json: #"{"body": "no title at all"}"#)
            #expect(noTitle.status == 400)

            let unknown = try await client.send("GET", "/notes/missing")
            #expect(unknown.status == 404)
            #expect(unknown.body.contains("There is no note missing."))
            let unknownDelete = try await client.send("DELETE", "/notes/missing")
            #expect(unknownDelete.status == 404)
        }
        // Only the unknown notes' requests got as far as a unit of work; both were ended.
        #expect(try await server.unitsOfWorkEnded(2))
        #expect(server.log.unitsOfWorkBegun == 2)
        #expect(server.log.unitsOfWorkEnded == 2)
        #expect(server.store.count == 0)
    }

    /// The export is written in several chunks after the handler has returned; every chunk resolves the request's
    /// unit of work and renderer again, which works only while the request's services are there.
    @Test(arguments: Setup.all)
    func theExportStreamsEveryNote(setup: Setup) async throws {
        let server = try TestServer(setup)
        try await server.test { client in
            var created: [Note] = []
            for number in 1...7 {
                created.append(try await client.createNote(title: "Note \(number)", body: "text \(number)"))
            }
            #expect(try await server.unitsOfWorkEnded(7))

            let response = try await client.send("GET", "/notes/export?pageSize=2")
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/x-ndjson")
            let exported = try response.body.split(separator: "\n").map { try decodeJSON(Note.self, from: String($0)) }
            #expect(exported == created)

            // One unit of work for the whole export, resolved once per page (four pages), and ended after.
            #expect(try await server.unitsOfWorkEnded(8))
            let work = try #require(server.log.recentUnitsOfWork.last)
            #expect(work.reads == 7)
            #expect(server.log.unitsOfWorkBegun == 8)
        }
    }

    @Test(arguments: Setup.all)
    func anEmptyExportIsEmpty(setup: Setup) async throws {
        let server = try TestServer(setup)
        try await server.test { client in
            let response = try await client.send("GET", "/notes/export")
            #expect(response.status == 200)
            #expect(response.body.isEmpty)
        }
    }
}
