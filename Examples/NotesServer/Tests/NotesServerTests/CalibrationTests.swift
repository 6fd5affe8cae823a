import NotesCore
import Testing

/// `NotesServer --calibrate request_scope`, which `scripts/load.sh` starts with `CALIBRATE=1`: the hand wiring, running
/// the benchmark's `request_scope` operation in every request besides its own work.
@Suite struct CalibrationTests {
    @Test(arguments: Framework.allCases, [true, false])
    func answersTheSameAndRunsItOnceARequest(framework: Framework, calibrates: Bool) async throws {
        let server = try TestServer(Setup(framework, .manual), calibrates: calibrates)
        try await server.test { client in
            let note = try await client.createNote(title: "Groceries", body: "eggs")
            let shown = try await client.send("GET", "/notes/\(note.id)")
            #expect(shown.status == 200)
            #expect(try shown.decode(Note.self) == note)
        }
        #expect(server.services?.calibrationsRun == (calibrates ? 2 : 0))
    }
}
