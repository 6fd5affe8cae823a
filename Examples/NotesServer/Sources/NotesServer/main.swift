// The notes server: `NotesServer [--wiring arbor|manual] [--hostname 127.0.0.1] [--port 8080]`.

import Foundation
import Hummingbird
import NotesApp

let usage = "usage: NotesServer [--wiring arbor|manual] [--hostname 127.0.0.1] [--port 8080]"

var wiring = Wiring.arbor
var hostname = "127.0.0.1"
var port = 8080

var arguments = CommandLine.arguments.dropFirst()
while let option = arguments.popFirst() {
    switch (option, arguments.popFirst()) {
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

print("NotesServer: \(wiring.rawValue) wiring, http://\(hostname):\(port)")
let configuration = ApplicationConfiguration(address: .hostname(hostname, port: port))
try await NotesApplication.make(wiring: wiring, configuration: configuration).runService()
