import NotesCore
import NotesVapor
import Vapor
import VaporTesting

/// A Vapor test client as a ``NotesClient``.
struct VaporNotesClient: NotesClient {
    let tester: any TestingApplicationTester

    func send(_ method: String, _ path: String, user: String?, json: String?) async throws -> Reply {
        var headers = HTTPHeaders()
        if let user { headers.add(name: RequestUser.header, value: user) }
        if json != nil { headers.contentType = .json }
        let response = try await tester.sendRequest(
            HTTPMethod(rawValue: method), path, headers: headers, body: json.map { ByteBuffer(string: $0) })
        var names: [String: String] = [:]
        for (name, value) in response.headers { names[name.lowercased()] = value }
        return Reply(status: Int(response.status.code), headers: names, body: response.body.string)
    }
}

extension TestServer {
    func testVapor<Value: Sendable>(
        live: Bool, _ body: @Sendable (any NotesClient) async throws -> Value
    ) async throws -> Value {
        try await withApp { app in
            if let root {
                VaporNotesApplication.arbor(app, root: root)
            } else {
                VaporNotesApplication.manual(app, services: services!)
            }
            let tester = try app.testing(method: live ? .running(port: 0) : .inMemory)
            return try await body(VaporNotesClient(tester: tester))
        }
    }
}
