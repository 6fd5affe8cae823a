import Arbor
import ArborTesting
import Foundation
import NotesCore
import Testing

/// The web frameworks the notes server runs on.
enum Framework: String, CaseIterable, Sendable {
    case hummingbird, vapor
}

/// A server to test: a framework, and a wiring.
struct Setup: Sendable, CustomTestStringConvertible {
    let framework: Framework
    let wiring: Wiring

    /// Every framework with every wiring.
    static let all = Framework.allCases.flatMap { framework in Wiring.allCases.map { Setup(framework, $0) } }
    /// Every framework, wired with Arbor.
    static let arbor = Framework.allCases.map { Setup($0, .arbor) }

    init(_ framework: Framework, _ wiring: Wiring) {
        self.framework = framework
        self.wiring = wiring
    }

    var testDescription: String { "\(framework.rawValue), \(wiring.rawValue)" }
}

/// A response, whatever the framework.
struct Reply: Sendable {
    let status: Int
    let headers: [String: String]
    let body: String

    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        try decodeJSON(type, from: body)
    }
}

/// Sends requests to a server under test, whatever the framework.
protocol NotesClient: Sendable {
    /// Sends a request, as the user `user` (no `X-User` header when `nil`), with `json` as its body.
    func send(_ method: String, _ path: String, user: String?, json: String?) async throws -> Reply
}

extension NotesClient {
    func send(_ method: String, _ path: String, user: String? = "ann", json: String? = nil) async throws -> Reply {
        try await send(method, path, user: user, json: json)
    }

    /// Posts a note and returns it as the server created it.
    @discardableResult
    func createNote(title: String, body: String = "") async throws -> Note {
        let json = String(decoding: try JSONEncoder().encode(NewNote(title: title, body: body)), as: UTF8.self)
        let response = try await send("POST", "/notes", json: json)
        #expect(response.status == 201)
        let note = try response.decode(Note.self)
        #expect(response.headers["location"] == "/notes/\(note.id)")
        return note
    }
}

/// A notes server for one test, with the services a test looks at.
struct TestServer: Sendable {
    let setup: Setup
    /// The Arbor-wired server's root; `nil` when wired by hand.
    let root: Container?
    let services: ManualServices?
    let log: ActivityLog
    let store: NoteStore
    /// The units of work the Arbor-wired server ended, recorded by a release hook.
    let releases = ReleaseRecorder()

    /// A server; an Arbor-wired one serves from a child of `app` that records its units of work's releases. A
    /// hand-wired one with a `calibration` also runs that operation in every request.
    init(
        _ setup: Setup, app: Container = NotesAssembly.makeContainer(), calibration: CalibrationOperation? = nil
    ) throws {
        self.setup = setup
        switch setup.wiring {
        case .arbor:
            let releases = releases
            let root = ArborTesting.overriding(app) { test in
                NotesAssembly.registerUnitOfWork(in: test).recordingReleases(in: releases)
            }
            self.root = root
            services = nil
            log = try root.resolve(ActivityLog.self)
            store = try root.resolve(NoteStore.self)
        case .manual:
            let services = try calibration.map(ManualServices.calibrating) ?? ManualServices()
            self.root = nil
            self.services = services
            log = services.log
            store = services.store
        }
    }

    /// Waits until `count` units of work have ended: a request's ends once its response has been written, which
    /// may be after the client has it.
    func unitsOfWorkEnded(_ count: Int) async throws -> Bool {
        if root != nil { return await releases.wait(for: count) }
        for _ in 0..<500 where log.unitsOfWorkEnded < count {
            try await Task.sleep(for: .milliseconds(2))
        }
        return log.unitsOfWorkEnded >= count
    }

    /// Runs `body` with a client of the server: in memory, or, when `live`, over a real connection.
    func test<Value: Sendable>(
        live: Bool = false, _ body: @Sendable (any NotesClient) async throws -> Value
    ) async throws -> Value {
        switch setup.framework {
        case .hummingbird: try await testHummingbird(live: live, body)
        case .vapor: try await testVapor(live: live, body)
        }
    }
}

/// Decodes a JSON body the way the servers encode it (ISO 8601 dates).
func decodeJSON<Value: Decodable>(_ type: Value.Type, from body: String) throws -> Value {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return try decoder.decode(type, from: Data(body.utf8))
}
