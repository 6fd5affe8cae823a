// The notes server: `NotesServer [--framework hummingbird|vapor] [--wiring arbor|manual] [--hostname 127.0.0.1]
// [--port 8080] [--release-hooks synchronous|awaited]
// [--calibrate request_scope|hand_wired|dictionary_scope|array_scope|notes_request]
// [--executor event-loops]`.

import Dispatch
import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NotesCore
import NotesHummingbird
import NotesVapor
import Vapor

let usage = """
    usage: NotesServer [--framework hummingbird|vapor] [--wiring arbor|manual] [--hostname 127.0.0.1] [--port 8080]
                       [--release-hooks synchronous|awaited]   (how Vapor's Arbor wiring closes a request's child)
                       [--calibrate request_scope|hand_wired|dictionary_scope|array_scope|notes_request]
                            (the manual wiring also runs the benchmark's request_scope operation in every request:
                            with Arbor, by hand without a container, or with a container written by hand of
                            dictionaries or of arrays; or the Arbor wiring's own calls on a GET /notes/:id, in one
                            piece; what load.sh's CALIBRATE=1 measures)
                       [--executor event-loops]   (Swift concurrency's jobs run on NIO's event loops: a
                                                   Hummingbird handler on the one that read its request)
    """

enum Framework: String, Sendable {
    case hummingbird, vapor
}

var framework = Framework.hummingbird
var wiring = Wiring.arbor
var hostname = "127.0.0.1"
var port = 8080
var releaseHooks = "synchronous"
var calibration: CalibrationOperation?
var eventLoopsRunTasks = false

var arguments = CommandLine.arguments.dropFirst()
while let option = arguments.popFirst() {
    switch (option, arguments.popFirst()) {
    case ("--framework", let value?) where Framework(rawValue: value) != nil:
        framework = Framework(rawValue: value)!
    case ("--wiring", let value?) where Wiring(rawValue: value) != nil:
        wiring = Wiring(rawValue: value)!
    case ("--hostname", let value?):
        hostname = value
    case ("--port", let value?) where Int(value) != nil:
        port = Int(value)!
    case ("--release-hooks", let value?) where ["awaited", "synchronous"].contains(value):
        releaseHooks = value
    case ("--calibrate", let value?) where CalibrationOperation(rawValue: value) != nil:
        calibration = CalibrationOperation(rawValue: value)!
    case ("--executor", "event-loops"):
        eventLoopsRunTasks = true
    case ("--help", _), ("-h", _):
        print(usage)
        exit(0)
    default:
        print(usage)
        exit(64)
    }
}

if calibration != nil, wiring != .manual {
    print("NotesServer: --calibrate needs --wiring manual")
    exit(64)
}
// Before any task starts: from here on the runtime hands every job to an event loop of NIO's singleton group, the
// one both frameworks serve on, so a Hummingbird handler runs on the event loop that read its request instead of
// on a thread of the runtime's own pool (no hop between threads, and back, each request).
if eventLoopsRunTasks, !NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() {
    print("NotesServer: --executor event-loops is not supported here")
    exit(1)
}
print(
    "NotesServer: \(framework.rawValue), \(wiring.rawValue) wiring\(calibration.map { " with \($0.rawValue)" } ?? "")"
        + "\(eventLoopsRunTasks ? ", tasks on the event loops" : ""),"
        + " http://\(hostname):\(port)")

/// Runs the server until it stops.
func serve(
    _ framework: Framework, _ wiring: Wiring, hostname: String, port: Int, releaseHooks: String,
    calibration: CalibrationOperation?
) async throws {
    // With `--calibrate`, the hand wiring runs the benchmark's request_scope operation (or its hand-written twin) in
    // every request.
    let services = try calibration.map(ManualServices.calibrating) ?? ManualServices()
    switch framework {
    case .hummingbird:
        let configuration = ApplicationConfiguration(address: .hostname(hostname, port: port))
        try await NotesApplication.make(wiring: wiring, services: services, configuration: configuration).runService()
    case .vapor:
        // Vapor reads its own command line: give it `serve` only, and set the address here.
        let app = try await Vapor.Application.make(
            Environment(name: "production", arguments: ["NotesServer", "serve"]))
        app.logger.logLevel = .warning  // no line per request, as with Hummingbird
        app.http.server.configuration.hostname = hostname
        app.http.server.configuration.port = port
        VaporNotesApplication.configure(
            app, wiring: wiring, releaseHooks: releaseHooks == "awaited" ? .awaited : .synchronous, services: services)
        do {
            try await app.execute()
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
    }
}

// The main thread waits for the server, which runs in a detached task, on a plain semaphore rather than handing
// itself to the concurrency runtime (an `async` top level): the same for the server, and valgrind's callgrind can
// profile it, which it cannot do with the runtime's main-thread loop.
let stopped = DispatchSemaphore(value: 0)
let failure = NIOLockedValueBox<(any Error)?>(nil)
Task.detached { [framework, wiring, hostname, port, releaseHooks, calibration] in
    do {
        try await serve(
            framework, wiring, hostname: hostname, port: port, releaseHooks: releaseHooks, calibration: calibration)
    } catch {
        failure.withLockedValue { $0 = error }
    }
    stopped.signal()
}
stopped.wait()
if let error = failure.withLockedValue({ $0 }) {
    print("NotesServer: \(error)")
    exit(1)
}
