import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NotesCore
import NotesHummingbird

/// A Hummingbird test client as a ``NotesClient``.
struct HummingbirdNotesClient: NotesClient {
    let client: any TestClientProtocol

    func send(_ method: String, _ path: String, user: String?, json: String?) async throws -> Reply {
        var headers = HTTPFields()
        if let user { headers[HTTPField.Name(RequestUser.header)!] = user }
        if json != nil { headers[.contentType] = "application/json" }
        let response = try await client.execute(
            uri: path, method: HTTPRequest.Method(method)!, headers: headers, body: json.map { ByteBuffer(string: $0) })
        var names: [String: String] = [:]
        for field in response.headers { names[field.name.canonicalName] = field.value }
        return Reply(status: response.status.code, headers: names, body: String(buffer: response.body))
    }
}

extension TestServer {
    func testHummingbird<Value: Sendable>(
        live: Bool, _ body: @Sendable (any NotesClient) async throws -> Value
    ) async throws -> Value {
        let app: any ApplicationProtocol =
            if let root { NotesApplication.arbor(root: root) } else { NotesApplication.manual(services: services!) }
        return try await app.test(live ? .live : .router) { client in
            try await body(HummingbirdNotesClient(client: client))
        }
    }
}
