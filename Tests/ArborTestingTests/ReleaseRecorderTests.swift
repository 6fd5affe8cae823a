import Arbor
import ArborTesting
import Testing

final class Session: Sendable {}
final class Connection: Sendable {}

@Suite struct ReleaseRecorderTests {
    @Test func recordsEachReleaseOnceNewestFirst() async throws {
        let releases = ReleaseRecorder()
        let root = Container()
        root.register(Connection.self) { _ in Connection() }.inObjectScope(.perContainer)
            .recordingReleases(in: releases)
        root.register(Session.self) { r in
            _ = try r.resolve(Connection.self)
            return Session()
        }
        .inObjectScope(.perContainer)
        .recordingReleases(in: releases, as: "session")

        let request = root.makeChild()
        _ = try await request.resolve(Session.self)
        #expect(releases.released.isEmpty)
        await request.closeAndWait()
        #expect(releases.released == ["session", "Connection"])
        request.close()  // closing again releases nothing more
        #expect(releases.count(of: "session") == 1)
        #expect(releases.count(of: "Connection") == 1)
    }

    /// `wait(for:)` returns as soon as the releases are recorded, also when they come from another task later.
    @Test func waitReturnsOnceTheReleasesAreRecorded() async throws {
        let releases = ReleaseRecorder()
        let root = Container()
        root.register(Connection.self) { _ in Connection() }.inObjectScope(.perContainer)
            .recordingReleases(in: releases)
        let children = (0..<3).map { _ in root.makeChild() }
        for child in children { _ = try await child.resolve(Connection.self) }
        async let waited = releases.wait(for: 3)
        Task { for child in children { await child.closeAndWait() } }
        #expect(await waited)
        #expect(releases.count(of: "Connection") == 3)
        #expect(await releases.wait(for: 3))  // already there: at once
    }

    @Test func waitGivesUpWhenTheReleasesNeverCome() async {
        let releases = ReleaseRecorder()
        releases.record("only one")
        #expect(await releases.wait(for: 2, seconds: 0.05) == false)
        #expect(releases.released == ["only one"])
    }
}
