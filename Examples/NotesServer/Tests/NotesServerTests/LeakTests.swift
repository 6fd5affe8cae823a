import Arbor
import ArborTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import NotesApp
import Testing

/// Nothing a request resolves outlives the request: not its unit of work, not its controller and auditor (a
/// circular pair), not the shared renderer once no request uses it.
@Suite struct LeakTests {
    @Test func fiftyRequestsLeaveNothingBehind() async throws {
        let app = ArborWiring.makeContainer()
        let log = try await app.resolve(ActivityLog.self)
        try await expectNoLeaks(in: app) { test in
            // `test` is a child of `app` that a LeakTracker watches; each request's container is a child of it.
            try await NotesApplication.arbor(root: test).test(.router) { client in
                var ids: [String] = []
                for round in 0..<10 {
                    ids.append(try await client.createNote(title: "Note \(round)").id)
                    _ = try await client.execute(uri: "/notes/\(ids.last!)", method: .get)
                    _ = try await client.execute(uri: "/notes", method: .get)
                    _ = try await client.execute(uri: "/notes/export?pageSize=3", method: .get)
                    if round.isMultiple(of: 2) {
                        _ = try await client.execute(uri: "/notes/missing", method: .get)
                    } else {
                        _ = try await client.execute(uri: "/notes/\(ids.removeFirst())", method: .delete)
                    }
                }
            }
        }
        #expect(log.unitsOfWorkBegun == 50)
        #expect(log.unitsOfWorkEnded == 50)
    }

    /// The check has teeth: a handler that keeps its controller past the request is reported, with the unit of
    /// work and the auditor the controller keeps.
    @Test func aHandlerThatKeepsItsControllerIsReported() async throws {
        let keeper = Keeper()
        var reports: [LeakReport] = []
        try await expectNoLeaks(in: ArborWiring.makeContainer(), report: { report, _ in reports.append(report) }) {
            test in
            let router = ArborWiring.makeRouter(root: test)
            router.get("/keep") { _, context in
                keeper.keep(try context.notesController())
                return HTTPResponse.Status.ok
            }
            try await Application(router: router).test(.router) { client in
                let response = try await client.execute(uri: "/keep", method: .get)
                #expect(response.status == .ok)
            }
        }
        let report = try #require(reports.first)
        #expect(Set(report.leaks.map(\.typeName)) == ["NotesController", "NotesAuditor", "NotesUnitOfWork"])
        keeper.release()
    }
}

/// Keeps objects alive: a handler's mistake, for the leak check to find.
final class Keeper: @unchecked Sendable {
    private let lock = NSLock()
    private var objects: [AnyObject] = []

    func keep(_ object: AnyObject) {
        lock.withLock { objects.append(object) }
    }

    func release() {
        lock.withLock { objects.removeAll() }
    }
}
