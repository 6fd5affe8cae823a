import Arbor
import NotesCore
import Testing

/// Each request gets one unit of work, shared by everything that handles it, and ended once its response has been
/// written: with Arbor, a `.perContainer` service of the request's child container; by hand, the same.
@Suite struct UnitOfWorkTests {
    @Test(arguments: Setup.all)
    func oneUnitOfWorkPerRequestEndedWithIt(setup: Setup) async throws {
        let server = try TestServer(setup)
        let log = server.log
        try await server.test { client in
            let note = try await client.createNote(title: "First")
            #expect(try await server.unitsOfWorkEnded(1))
            #expect(log.recentUnitsOfWork == [.init(serial: 1, reads: 0, inserted: 1, deleted: 0, discarded: 0)])
            // The auditor reached the unit of work and the user through its controller: the circular pair is wired.
            #expect(log.recentAudit == ["ann created \(note.id) in unit of work #1"])

            _ = try await client.send("GET", "/notes/\(note.id)")
            _ = try await client.send("GET", "/notes")
            _ = try await client.send("DELETE", "/notes/\(note.id)", user: "bob")
            #expect(try await server.unitsOfWorkEnded(4))
            #expect(log.unitsOfWorkBegun == 4)
            #expect(
                log.recentUnitsOfWork.dropFirst() == [
                    .init(serial: 2, reads: 1, inserted: 0, deleted: 0, discarded: 0),
                    .init(serial: 3, reads: 1, inserted: 0, deleted: 0, discarded: 0),
                    .init(serial: 4, reads: 0, inserted: 0, deleted: 1, discarded: 0),
                ])
            #expect(log.recentAudit.last == "bob deleted \(note.id) in unit of work #4")
        }
    }

    /// With a live server too, every unit of work ends: the streamed export's after its last chunk.
    @Test(arguments: Setup.all)
    func aLiveServerEndsEveryUnitOfWork(setup: Setup) async throws {
        let server = try TestServer(setup)
        let log = server.log
        try await server.test(live: true) { client in
            for number in 1...5 { try await client.createNote(title: "Note \(number)") }
            let export = try await client.send("GET", "/notes/export?pageSize=1")
            #expect(export.body.split(separator: "\n").count == 5)
            #expect(try await server.unitsOfWorkEnded(6))
            #expect(log.unitsOfWorkBegun == 6)
            #expect(log.recentUnitsOfWork.last?.reads == 5)
        }
    }

    /// The wiring itself, without a server: what the routes get from a request's child container.
    @Test func theRequestContainerSharesItsUnitOfWork() throws {
        let root = NotesAssembly.makeContainer()
        let request = root.makeChild()
        try NotesAssembly.registerRequestValues(userHeader: "ann", in: request)
        let controller = try request.resolve(NotesController.self)
        let work = try request.resolve(NotesUnitOfWork.self)
        #expect(controller.work === work)
        #expect(controller.user == (try RequestUser(header: "ann")))
        #expect(controller.auditor.controller === controller)
        #expect(try request.resolve(NotesController.self) !== controller)  // graph scope: one per resolve
        #expect(try request.resolve(NotesController.self).work === work)

        let other = root.makeChild()
        #expect(try other.resolve(NotesUnitOfWork.self) !== work)

        request.close()
        #expect(work.isEnded)
        #expect(throws: ResolutionError.self) { try request.resolve(NotesUnitOfWork.self) }
    }

    /// Every registration resolves from a request's container once the request's values are in it, and nothing
    /// shared keeps a request's unit of work.
    @Test func aRequestContainerValidates() throws {
        let request = NotesAssembly.makeContainer().makeChild()
        try NotesAssembly.registerRequestValues(userHeader: "ann", in: request)
        let report = request.validate()
        #expect(report.isValid, "\(report)")
        #expect(report.notChecked.isEmpty)
    }

    @Test func aRequestWithoutAUserIsRefused() {
        #expect(throws: NotesError.missingUser) {
            try NotesAssembly.registerRequestValues(userHeader: nil, in: NotesAssembly.makeContainer().makeChild())
        }
        #expect(throws: NotesError.missingUser) { try RequestUser(header: "  ") }
    }

    /// The renderer is shared while someone holds it; the container itself does not keep it.
    @Test func theRendererIsSharedWhileInUse() throws {
        let root = NotesAssembly.makeContainer()
        weak var released: NoteRenderer?
        do {
            let renderer = try root.makeChild().resolve(NoteRenderer.self)
            #expect(try root.makeChild().resolve(NoteRenderer.self) === renderer)
            released = renderer
        }
        #expect(released == nil)
    }
}
