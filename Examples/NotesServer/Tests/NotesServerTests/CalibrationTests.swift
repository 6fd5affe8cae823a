import Foundation
import NotesCore
import Testing

/// `NotesServer --calibrate OPERATION`, which `scripts/load.sh` starts with `CALIBRATE=1`: the hand wiring, running the
/// benchmark's `request_scope` operation (or a twin without Arbor: `hand_wired`, `dictionary_scope`, `array_scope`; or
/// the Arbor wiring's own calls in one piece, `notes_request`) in every request besides its own work.
@Suite struct CalibrationTests {
    @Test(arguments: Framework.allCases, [nil] + CalibrationOperation.allCases)
    func answersTheSameAndRunsItOnceARequest(framework: Framework, calibration: CalibrationOperation?) async throws {
        let server = try TestServer(Setup(framework, .manual), calibration: calibration)
        try await server.test { client in
            let note = try await client.createNote(title: "Groceries", body: "eggs")
            let shown = try await client.send("GET", "/notes/\(note.id)")
            #expect(shown.status == 200)
            #expect(try shown.decode(Note.self) == note)
        }
        #expect(server.services?.calibrationsRun == (calibration == nil ? 0 : 2))
    }

    /// The load scripts check `CALIBRATION` before they build or start anything, against a list of their own in
    /// `scripts/common.sh`: it names exactly the operations the server takes.
    @Test func theScriptsNameTheOperationsTheServerTakes() throws {
        let common = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/common.sh")
        let script = try String(contentsOf: common, encoding: .utf8)
        let line = try #require(
            script.split(separator: "\n").first { $0.hasPrefix("calibration_operations=") },
            "scripts/common.sh sets calibration_operations")
        let named = line.split(separator: "=", maxSplits: 1)[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        #expect(named.split(separator: " ").map(String.init) == CalibrationOperation.allCases.map(\.rawValue))
    }
}
