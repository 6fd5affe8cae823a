import Arbor
import ArborTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import NotesApp
import Testing

/// The app's container, shared by the tests that make children of it.
enum AppContainer {
    static let shared = ArborWiring.makeContainer()
}

/// A test swaps a service in a child of the app's container, and serves with the child as the root.
@Suite struct OverrideTests {
    static let noon = Date(timeIntervalSince1970: 1_767_268_800)  // 2026-01-01 12:00:00 UTC

    @Test func aChildOverridesTheClockAndTheIdentifiers() async throws {
        let app = ArborWiring.makeContainer()
        let test = ArborTesting.overriding(app) { child in
            child.register((any WallClock).self) { _ in FixedWallClock(Self.noon) }
            child.register((any IDGenerator).self) { _ in SequentialIDGenerator(prefix: "test-") }
                .inObjectScope(.permanent)
        }
        try await NotesApplication.arbor(root: test).test(.router) { client in
            let first = try await client.createNote(title: "First")
            let second = try await client.createNote(title: "Second")
            #expect([first.id, second.id] == ["test-1", "test-2"])
            #expect(first.createdAt == Self.noon && second.createdAt == Self.noon)

            let shown = try await client.execute(uri: "/notes/test-2", method: .get)
            #expect(try decodeJSON(Note.self, from: shown.body) == second)
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
        try await NotesApplication.arbor(root: test).test(.router) { client in
            let note = try await client.createNote(title: "At noon")
            #expect(note.createdAt == Self.noon)
            let list = try await client.execute(uri: "/notes", method: .get)
            #expect(try decodeJSON(NoteList.self, from: list.body).notes == [note])
        }
        #expect(try await test.resolve(NoteStore.self).count == 1)
        #expect(try await AppContainer.shared.resolve(NoteStore.self).count == 0)
    }
}
