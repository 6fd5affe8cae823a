import Arbor
import Hummingbird
import HummingbirdTesting
import NotesApp
import Testing

/// Each request gets one unit of work, shared by everything that handles it, and ended once its response has been
/// written: with Arbor, a `.perContainer` service of the request's child container; by hand, the same.
@Suite struct UnitOfWorkTests {
    @Test(arguments: Wiring.allCases)
    func oneUnitOfWorkPerRequestEndedWithIt(wiring: Wiring) async throws {
        let server = try TestServer(wiring)
        let log = server.log
        try await server.test { client in
            let note = try await client.createNote(title: "First")
            #expect(log.unitsOfWorkBegun == 1)
            #expect(log.recentUnitsOfWork == [.init(serial: 1, reads: 0, inserted: 1, deleted: 0, discarded: 0)])
            // The auditor reached the unit of work through its controller: the circular pair is wired.
            #expect(log.recentAudit == ["created \(note.id) in unit of work #1"])

            _ = try await client.execute(uri: "/notes/\(note.id)", method: .get)
            _ = try await client.execute(uri: "/notes", method: .get)
            _ = try await client.execute(uri: "/notes/\(note.id)", method: .delete)
            #expect(log.unitsOfWorkBegun == 4)
            #expect(log.unitsOfWorkEnded == 4)
            #expect(
                log.recentUnitsOfWork.dropFirst() == [
                    .init(serial: 2, reads: 1, inserted: 0, deleted: 0, discarded: 0),
                    .init(serial: 3, reads: 1, inserted: 0, deleted: 0, discarded: 0),
                    .init(serial: 4, reads: 0, inserted: 0, deleted: 1, discarded: 0),
                ])
            #expect(log.recentAudit.last == "deleted \(note.id) in unit of work #4")
        }
    }

    /// A handler that throws ends its request's unit of work at once; nothing it changed is kept.
    @Test(arguments: Wiring.allCases)
    func aFailedRequestEndsItsUnitOfWork(wiring: Wiring) async throws {
        let server = try TestServer(wiring)
        try await server.test { client in
            let response = try await client.execute(uri: "/notes/missing", method: .delete)
            #expect(response.status == .notFound)
        }
        #expect(server.log.unitsOfWorkBegun == 1)
        #expect(server.log.unitsOfWorkEnded == 1)
    }

    /// With a live server too, every unit of work ends: the streamed export's after its last chunk.
    @Test(arguments: Wiring.allCases)
    func aLiveServerEndsEveryUnitOfWork(wiring: Wiring) async throws {
        let server = try TestServer(wiring)
        let log = server.log
        try await server.app.test(.live) { client in
            for number in 1...5 { try await client.createNote(title: "Note \(number)") }
            let export = try await client.execute(uri: "/notes/export?pageSize=1", method: .get)
            #expect(String(buffer: export.body).split(separator: "\n").count == 5)
            for _ in 0..<100 where log.unitsOfWorkEnded < 6 {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(log.unitsOfWorkBegun == 6)
            #expect(log.unitsOfWorkEnded == 6)
            #expect(log.recentUnitsOfWork.last?.reads == 5)
        }
    }

    /// The wiring itself, without a server: what the routes get from a request's child container.
    @Test func theRequestContainerSharesItsUnitOfWork() throws {
        let root = ArborWiring.makeContainer()
        let request = root.makeChild()
        let controller = try request.resolve(NotesController.self)
        let work = try request.resolve(NotesUnitOfWork.self)
        #expect(controller.work === work)
        #expect(controller.auditor.controller === controller)
        #expect(try request.resolve(NotesController.self) !== controller)  // graph scope: one per resolve
        #expect(try request.resolve(NotesController.self).work === work)

        let other = root.makeChild()
        #expect(try other.resolve(NotesUnitOfWork.self) !== work)

        request.close()
        #expect(work.isEnded)
        #expect(throws: ResolutionError.self) { try request.resolve(NotesUnitOfWork.self) }
    }

    /// Every registration resolves from a request's container, and nothing shared keeps a request's unit of work.
    @Test func aRequestContainerValidates() {
        let request = ArborWiring.makeContainer().makeChild()
        let report = request.validate()
        #expect(report.isValid, "\(report)")
        #expect(report.notChecked.isEmpty)
    }

    /// The renderer is shared while someone holds it; the container itself does not keep it.
    @Test func theRendererIsSharedWhileInUse() throws {
        let root = ArborWiring.makeContainer()
        weak var released: NoteRenderer?
        do {
            let renderer = try root.makeChild().resolve(NoteRenderer.self)
            #expect(try root.makeChild().resolve(NoteRenderer.self) === renderer)
            released = renderer
        }
        #expect(released == nil)
    }
}
