// The notes server: `NotesServer [--framework hummingbird|vapor] [--wiring arbor|manual] [--hostname 127.0.0.1]
// [--port 8080]`.

import Foundation
import Hummingbird
import NotesCore
import NotesHummingbird
import NotesVapor
import Vapor

let usage = """
    usage: NotesServer [--framework hummingbird|vapor] [--wiring arbor|manual] [--hostname 127.0.0.1] [--port 8080]
    """

enum Framework: String {
    case hummingbird, vapor
}

var framework = Framework.hummingbird
var wiring = Wiring.arbor
var hostname = "127.0.0.1"
var port = 8080

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
    case ("--help", _), ("-h", _):
        print(usage)
        exit(0)
    default:
        print(usage)
        exit(64)
    }
}

print("NotesServer: \(framework.rawValue), \(wiring.rawValue) wiring, http://\(hostname):\(port)")
switch framework {
case .hummingbird:
    let configuration = ApplicationConfiguration(address: .hostname(hostname, port: port))
    try await NotesApplication.make(wiring: wiring, configuration: configuration).runService()
case .vapor:
    // Vapor reads its own command line: give it `serve` only, and set the address here.
    let app = try await Vapor.Application.make(Environment(name: "production", arguments: ["NotesServer", "serve"]))
    app.logger.logLevel = .warning  // no line per request, as with Hummingbird
    app.http.server.configuration.hostname = hostname
    app.http.server.configuration.port = port
    VaporNotesApplication.configure(app, wiring: wiring)
    do {
        try await app.execute()
    } catch {
        try? await app.asyncShutdown()
        throw error
    }
    try await app.asyncShutdown()
}
