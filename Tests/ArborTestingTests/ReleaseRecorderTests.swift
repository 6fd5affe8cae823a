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

    /// A time limit of zero or less, or not a number, only checks; `.infinity` has none (the cancellation below ends
    /// the wait). None of them stops the program.
    @Test(arguments: [0, -1, -Double.infinity, .nan])
    func waitWithNoTimeOnlyChecks(seconds: Double) async {
        let releases = ReleaseRecorder()
        releases.record("only one")
        #expect(await releases.wait(for: 1, seconds: seconds))
        #expect(await releases.wait(for: 2, seconds: seconds) == false)
    }

    /// A cancelled task stops waiting at once, with `false` — a test past its time limit does not wait out the
    /// recorder's `seconds` — also when it was cancelled before it began to wait.
    @Test func aCancelledWaitReturnsFalseAtOnce() async {
        let releases = ReleaseRecorder()
        let waiting = Task { await releases.wait(for: 1, seconds: .infinity) }
        try? await Task.sleep(nanoseconds: 20_000_000)
        waiting.cancel()
        #expect(await waiting.value == false)

        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await releases.wait(for: 1, seconds: 600)
        }
        #expect(await cancelledFirst.value == false)

        releases.record("one")
        let satisfied = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await releases.wait(for: 1, seconds: 600)
        }
        #expect(await satisfied.value, "the releases are there: true, cancelled or not")
    }
}
