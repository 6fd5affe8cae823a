import Arbor
import ArborTesting
import Foundation
import NotesCore
import Testing

/// The app's container, shared by the tests that make children of it.
enum AppContainer {
    static let shared = NotesAssembly.makeContainer()
}

/// A test swaps a service in a child of the app's container, and serves with the child as the root.
@Suite struct OverrideTests {
    static let noon = Date(timeIntervalSince1970: 1_767_268_800)  // 2026-01-01 12:00:00 UTC

    @Test(arguments: Framework.allCases)
    func aChildOverridesTheClockAndTheIdentifiers(framework: Framework) async throws {
        let app = NotesAssembly.makeContainer()
        let test = ArborTesting.overriding(app) { child in
            child.register((any WallClock).self) { _ in FixedWallClock(Self.noon) }
            child.register((any IDGenerator).self) { _ in SequentialIDGenerator(prefix: "test-") }
                .inObjectScope(.permanent)
        }
        try await TestServer(Setup(framework, .arbor), app: test).test { client in
            let first = try await client.createNote(title: "First")
            let second = try await client.createNote(title: "Second")
            #expect([first.id, second.id] == ["test-1", "test-2"])
            #expect(first.createdAt == Self.noon && second.createdAt == Self.noon)

            let shown = try await client.send("GET", "/notes/test-2")
            #expect(try shown.decode(Note.self) == second)
        }
        // The app's own container is untouched.
        #expect(try await app.resolve((any IDGenerator).self) is RandomIDGenerator)
        #expect(try await app.resolve((any WallClock).self) is SystemWallClock)
    }

    /// The same with the Swift Testing trait: the test gets its own child, and fails if a request's services
    /// outlive it.
    @Test(
        .childContainer(of: AppContainer.shared, checkingLeaks: true) { test in
            test.register((any WallClock).self) { _ in FixedWallClock(OverrideTests.noon) }
            test.register(NoteStore.self) { _ in NoteStore() }.inObjectScope(.permanent)  // a store of its own
        })
    func theTraitGivesTheTestAChildToServeFrom() async throws {
        let test = ArborTesting.container
        for framework in Framework.allCases {
            let server = try TestServer(Setup(framework, .arbor), app: test)
            try await server.test { client in
                let note = try await client.createNote(title: "At noon on \(framework)")
                #expect(note.createdAt == Self.noon)
                let list = try await client.send("GET", "/notes")
                #expect(try list.decode(NoteList.self).notes.last == note)
            }
            #expect(try await server.unitsOfWorkEnded(2))
        }
        #expect(try await test.resolve(NoteStore.self).count == 2)
        #expect(try await AppContainer.shared.resolve(NoteStore.self).count == 0)
    }
}
