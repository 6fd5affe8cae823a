import Arbor
import ArborTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NotesCore
import NotesHummingbird
import Testing

/// The leak check has teeth: a handler that keeps its controller past the request is reported, with the unit of
/// work and the auditor the controller keeps.
@Suite struct KeptControllerTests {
    @Test func aHandlerThatKeepsItsControllerIsReported() async throws {
        let keeper = Keeper()
        var reports: [LeakReport] = []
        try await expectNoLeaks(in: NotesAssembly.makeContainer(), report: { report, _ in reports.append(report) }) {
            test in
            let router = ArborWiring.makeRouter(root: test)
            router.get("/keep") { _, context in
                keeper.keep(try context.services().notesController())
                return HTTPResponse.Status.ok
            }
            try await Application(router: router).test(.router) { client in
                let response = try await client.execute(
                    uri: "/keep", method: .get, headers: [HTTPField.Name(RequestUser.header)!: "ann"])
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
