#if ServiceLifecycle
import Arbor
import ArborServiceLifecycle
import ArborTesting
import Foundation
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

final class Pool: Sendable {}
final class Cache: Sendable {}
final class Mailer: Sendable {}

/// A server that records when it starts, and stops on graceful shutdown, recording that too.
struct FakeServer: Service {
    let releases: ReleaseRecorder
    let started: AsyncStream<Void>.Continuation

    func run() async throws {
        started.yield()
        try? await gracefulShutdown()
        releases.record("server stopped")
    }
}

@Suite struct ContainerServiceTests {
    /// A root with three permanent services, resolved in order, whose release hooks record their names: the last
    /// one's hook is `async`, and records only after it has been suspended.
    func makeRoot(_ releases: ReleaseRecorder) throws -> Container {
        let root = Container()
        root.register(Pool.self) { _ in Pool() }.inObjectScope(.permanent).recordingReleases(in: releases)
        root.register(Cache.self) { _ in Cache() }.inObjectScope(.permanent).recordingReleases(in: releases)
        root.register(Mailer.self) { _ in Mailer() }.inObjectScope(.permanent)
            .onRelease { _ in
                await Task.yield()
                releases.record("Mailer (async)")
            }
        _ = try root.resolve(Pool.self)
        _ = try root.resolve(Cache.self)
        _ = try root.resolve(Mailer.self)
        return root
    }

    func makeGroup(_ services: [any Service]) -> ServiceGroup {
        ServiceGroup(services: services, gracefulShutdownSignals: [], logger: Logger(label: "test"))
    }

    @Test func aGracefulShutdownClosesTheContainerNewestFirst() async throws {
        let releases = ReleaseRecorder()
        let root = try makeRoot(releases)
        let (started, starting) = AsyncStream<Void>.makeStream()
        let group = makeGroup([ContainerService(root), FakeServer(releases: releases, started: starting)])
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            for await _ in started { break }
            #expect(releases.released.isEmpty)
            #expect(!root.isClosed)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        // The server stopped first (it comes after the container in the group), then the container closed:
        // every hook ran once, newest instance first, the async one awaited before `run()` returned.
        #expect(releases.released == ["server stopped", "Mailer (async)", "Cache", "Pool"])
        #expect(root.isClosed)
    }

    @Test func cancellingTheGroupClosesTheContainer() async throws {
        let releases = ReleaseRecorder()
        let root = try makeRoot(releases)
        let (started, starting) = AsyncStream<Void>.makeStream()
        let group = makeGroup([ContainerService(root), FakeServer(releases: releases, started: starting)])
        let running = Task { try await group.run() }
        for await _ in started { break }
        running.cancel()
        _ = try? await running.value
        #expect(releases.released.filter { $0 != "server stopped" } == ["Mailer (async)", "Cache", "Pool"])
        #expect(root.isClosed)
    }

    @Test func theTestKitsShutdownCloses() async throws {
        let releases = ReleaseRecorder()
        let root = try makeRoot(releases)
        await testGracefulShutdown { trigger in
            async let run: Void = ContainerService(root).run()
            #expect(!root.isClosed)
            trigger.triggerGracefulShutdown()
            await run
        }
        #expect(releases.released == ["Mailer (async)", "Cache", "Pool"])
    }

    /// The root closed by other code on another thread just before the shutdown — a `close()` still running a
    /// synchronous hook: the service does not return before that hook has finished.
    @Test func aShutdownWaitsForTheHooksOfACloseRunningOnAnotherThread() async throws {
        let releases = ReleaseRecorder()
        let proceed = DispatchSemaphore(value: 0)
        let root = Container()
        root.register(Pool.self) { _ in Pool() }.inObjectScope(.permanent)
            .onRelease { _ in
                releases.record("releasing Pool")
                // Until the service has returned, or for 0.3 s: a service that waits returns after the timeout.
                _ = proceed.wait(timeout: .now() + 0.3)
                releases.record("released Pool")
            }
        _ = try await root.resolve(Pool.self)
        Thread { root.close() }.start()
        while !releases.released.contains("releasing Pool") { await Task.yield() }
        await testGracefulShutdown { trigger in
            async let run: Void = ContainerService(root).run()
            trigger.triggerGracefulShutdown()
            await run
        }
        releases.record("service returned")
        proceed.signal()
        #expect(releases.released == ["releasing Pool", "released Pool", "service returned"])
    }

    /// A child closes with its root: a request's container still open at shutdown is closed first.
    @Test func childrenCloseWithTheRoot() async throws {
        let releases = ReleaseRecorder()
        let root = Container()
        root.register(Pool.self) { _ in Pool() }.inObjectScope(.permanent).recordingReleases(in: releases)
        root.register(Cache.self) { _ in Cache() }.inObjectScope(.perContainer).recordingReleases(in: releases)
        _ = try await root.resolve(Pool.self)
        let request = root.makeChild()
        _ = try await request.resolve(Cache.self)
        await testGracefulShutdown { trigger in
            async let run: Void = ContainerService(root).run()
            trigger.triggerGracefulShutdown()
            await run
        }
        #expect(request.isClosed)
        #expect(releases.count(of: "Cache") == 1)
        #expect(releases.count(of: "Pool") == 1)
    }
}
#endif
