import Arbor
import ArborTesting
import Foundation
import NotesCore
import Testing

/// Nothing a request resolves outlives the request: not its unit of work, not its controller and auditor (a
/// circular pair), not the shared renderer once no request uses it.
@Suite struct LeakTests {
    @Test(arguments: Framework.allCases)
    func fiftyRequestsLeaveNothingBehind(framework: Framework) async throws {
        let app = NotesAssembly.makeContainer()
        let log = try await app.resolve(ActivityLog.self)
        try await expectNoLeaks(in: app) { test in
            // `test` is a child of `app` that a LeakTracker watches; each request's container is a child of it.
            let server = try TestServer(Setup(framework, .arbor), app: test)
            try await server.test { client in
                var ids: [String] = []
                for round in 0..<10 {
                    ids.append(try await client.createNote(title: "Note \(round)").id)
                    _ = try await client.send("GET", "/notes/\(ids.last!)")
                    _ = try await client.send("GET", "/notes")
                    _ = try await client.send("GET", "/notes/export?pageSize=3")
                    if round.isMultiple(of: 2) {
                        _ = try await client.send("GET", "/notes/missing")
                    } else {
                        _ = try await client.send("DELETE", "/notes/\(ids.removeFirst())")
                    }
                }
                // Every request's container is closed before the leak check runs.
                #expect(try await server.unitsOfWorkEnded(50))
            }
        }
        #expect(log.unitsOfWorkBegun == 50)
        #expect(log.unitsOfWorkEnded == 50)
    }
}
