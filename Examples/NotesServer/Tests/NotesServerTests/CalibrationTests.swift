import NotesCore
import Testing

/// `NotesServer --calibrate OPERATION`, which `scripts/load.sh` starts with `CALIBRATE=1`: the hand wiring, running the
/// benchmark's `request_scope` operation (or a twin without Arbor: `hand_wired`, `dictionary_scope`, `array_scope`) in
/// every request besides its own work.
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
}
