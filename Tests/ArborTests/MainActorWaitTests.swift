import ArborTestSupport
import Foundation
import Testing

@testable import Arbor

// The main actor never blocks on a build that needs it. A task that prefetches a main-actor permanent claims its build
// and then waits for the main actor to run the factory; if the main actor meanwhile resolves the same service
// synchronously (the `showFeed()` of the Threads and Swift concurrency article), waiting would never end: the
// synchronous resolve throws `.asyncRequired`, saying to `await`, and the prefetch finishes once the main actor is free.

@MainActor
private final class MFeedModel {
    init() { MainActor.assertIsolated("a main-actor factory ran off the main actor") }
}

private final class MClient: @unchecked Sendable {}

/// A permanent service whose `async` factory needs the main actor part-way through.
private final class MSession: @unchecked Sendable {}

@Suite struct MainActorWaitTests {
    /// Starts a task that prefetches the only registration of `container`, a permanent `Service`, and keeps the main
    /// actor busy until the task has claimed the build: from then on the build may need the main actor. (Blocked, not
    /// suspended: were the main actor free a moment, the prefetch could build there before the test resolves. The task
    /// runs on a thread of its own, so that the main actor waits for no thread Swift runs other tasks on: a long test
    /// alongside may hold one of them for minutes.)
    @MainActor
    private func prefetchClaimed<Service: Sendable>(
        _: Service.Type, in container: Container
    ) throws -> Task<Service, any Error> {
        let storage = try #require(container.entries.first?.storage)
        let prefetch = taskOnAThreadOfItsOwn { try await container.resolve(Service.self) }
        let deadline = Date() + Watchdog.patience
        var claimed = false
        while !claimed, Date() < deadline {
            switch storage.snapshot() {
            case .building, .soloBuilding: claimed = true
            case .empty, .holding, .retired, .closed: usleep(500)
            }
        }
        #expect(claimed, "the prefetch claimed the build")
        return prefetch
    }

    /// A synchronous resolve on the main actor, which must throw `.asyncRequired` instead of waiting.
    @MainActor
    private func resolveOnTheMainActor<Service>(_: Service.Type, in container: Container) -> ResolutionError? {
        let watchdog = Watchdog("a synchronous resolve on the main actor", seconds: Watchdog.patience)
        defer { watchdog.disarm() }
        let error = resolutionError { try container.resolve(Service.self) }
        #expect(error?.kind == .asyncRequired)
        return error
    }

    @MainActor
    @Test func aSynchronousResolveOnTheMainActorThrowsInsteadOfWaitingForAPrefetchThatNeedsIt() async throws {
        let container = Container()
        container.register(MFeedModel.self) { @MainActor _ in MFeedModel() }.inObjectScope(.permanent)
        let prefetch = try prefetchClaimed(MFeedModel.self, in: container)
        let text = resolveOnTheMainActor(MFeedModel.self, in: container)?.description ?? ""
        #expect(text.contains("main actor") && text.contains("try await"), "the error says what to do: \(text)")
        // Called as top-level code calls it (synchronously, on the main actor, in a task), where `try await` picks
        // the synchronous resolve: the text says so too.
        #expect(text.contains("In top-level code (main.swift) Swift picks the synchronous resolve"), "\(text)")

        let prefetched = try await prefetch.value  // The main actor is free: the prefetch builds it there.
        #expect(try resolveSynchronously(MFeedModel.self, from: container) === prefetched, "then it is shared")
    }

    @MainActor
    @Test func aSynchronousResolveOnTheMainActorThrowsInsteadOfWaitingForAnAsyncBuildThatMayNeedIt() async throws {
        // The build's own factory is not main-actor isolated, but awaits the main actor: waiting for any `async`
        // build could block what it needs.
        let container = Container()
        container.register(MSession.self) { _ async in
            await MainActor.run {}
            return MSession()
        }
        .inObjectScope(.permanent)
        let prefetch = try prefetchClaimed(MSession.self, in: container)
        _ = resolveOnTheMainActor(MSession.self, in: container)
        let session = try await prefetch.value
        #expect(try resolveSynchronously(MSession.self, from: container) === session)
    }

    @MainActor
    @Test func theAsyncResolveOnTheMainActorWaitsSuspendedAndGetsThePrefetchedInstance() async throws {
        let container = Container()
        container.register(MFeedModel.self) { @MainActor _ in MFeedModel() }.inObjectScope(.permanent)
        let prefetch = try prefetchClaimed(MFeedModel.self, in: container)
        let watchdog = Watchdog("an async resolve on the main actor", seconds: Watchdog.patience)
        defer { watchdog.disarm() }
        let model = try await container.resolve(MFeedModel.self)  // The safe pair: await on the main actor.
        #expect(try await prefetch.value === model)
    }

    @Test func aSynchronousResolveOffTheMainActorStillWaitsForAnotherThreadsBuild() throws {
        let container = Container()
        let started = DispatchSemaphore(value: 0)
        let finish = DispatchSemaphore(value: 0)
        container.register(MClient.self) { _ in
            started.signal()
            finish.wait()
            return MClient()
        }
        .inObjectScope(.permanent)
        Thread { _ = try? container.resolve(MClient.self) }.start()
        started.wait()
        let waiter = Box<MClient>()
        let waited = DispatchSemaphore(value: 0)
        Thread {
            waiter.value = try? container.resolve(MClient.self)
            waited.signal()
        }.start()
        let storage = try #require(container.entries.first?.storage)
        _ = waitUntilAThreadWaits(on: storage, timeout: Watchdog.patience)
        finish.signal()
        #expect(waited.wait(timeout: .now() + 20) == .success)
        #expect(waiter.value != nil, "a thread that is not the main one waits, as before")
    }

    /// An `async` resolve of a service whose synchronous main-actor factory resolves something another task is
    /// building: the factory cannot wait on the main actor, so the resolve awaits that build off it, suspended, and
    /// then runs the factory again, which gets the instance the other task built. (Before, the resolve threw
    /// `.asyncRequired`, saying to make the factory `async`. The client's factory blocks its thread until the test
    /// lets it go on: its task runs on a thread of its own.)
    @Test(arguments: [ResolvedFrom.aTask, .theMainActor])
    func aSynchronousMainActorFactoryThatMeetsAnotherTasksBuildAwaitsItAndRunsAgain(from: ResolvedFrom) async throws {
        let proceed = DispatchSemaphore(value: 0)
        let runs = Counter()
        let got = Box<MClient>()
        let container = Container()
        container.register(MClient.self) { _ in
            proceed.wait()
            return MClient()
        }
        .inObjectScope(.permanent)
        container.register(MFeedModel.self) { @MainActor r in
            runs.increment()
            got.value = try r.resolve(MClient.self)
            return MFeedModel()
        }
        let storage = try #require(container.entries.first { $0.key == ServiceKey(MClient.self) }?.storage)
        let builder = taskOnAThreadOfItsOwn { try await container.resolve(MClient.self) }
        try await waitUntilClaimed(storage)

        try await resolveFeedModel(from: from, in: container, whileHeld: storage, runs: runs) { proceed.signal() }
        let client = try await builder.value
        #expect(got.value === client)
    }

    /// The same for a synchronous main-actor `initCompleted` hook. The client is built at once, by an `async`
    /// resolution that then waits (suspended, holding no thread) before it publishes it: the client is not complete
    /// before the resolution ends, for the hook of an object it built first has not run. The feed model's resolve
    /// awaits it, then runs the hook again.
    @Test(arguments: [ResolvedFrom.aTask, .theMainActor])
    func aSynchronousMainActorHookThatMeetsAnotherTasksBuildAwaitsItAndRunsAgain(from: ResolvedFrom) async throws {
        final class Prefetch: Sendable {}
        final class Warmed: Sendable {}
        let gate = Gate()
        let runs = Counter()
        let got = Box<MClient>()
        let container = Container()
        container.register(MClient.self) { _ in MClient() }.inObjectScope(.permanent)
        container.register(Warmed.self) { _ in Warmed() }.initCompleted { _, _ in }
        container.register(Prefetch.self) { r async throws in
            _ = try await r.resolve(Warmed.self)
            _ = try await r.resolve(MClient.self)
            await gate.passAsync()
            return Prefetch()
        }
        container.register(MFeedModel.self) { @MainActor _ in MFeedModel() }
            .initCompleted { @MainActor r, _ in
                runs.increment()
                got.value = try r.resolve(MClient.self)
            }
        let storage = try #require(container.entries.first { $0.key == ServiceKey(MClient.self) }?.storage)
        let builder = Task.detached { try await container.resolve(Prefetch.self) }
        #expect(await poll { gate.hasArrivals })

        try await resolveFeedModel(from: from, in: container, whileHeld: storage, runs: runs) { gate.open() }
        _ = try await builder.value
        let kept = try await container.resolve(MClient.self)
        #expect(got.value === kept)
    }

    /// Where an `async` resolve runs: its main-actor code runs on the main actor from either, after a hop from a task.
    enum ResolvedFrom: String, CustomTestStringConvertible {
        case aTask
        case theMainActor

        var testDescription: String { rawValue }
    }

    /// Resolves the feed model with `try await`, `from` a task or the main actor, while another task holds the
    /// client's build (`storage`): checks that the resolve awaits the client suspended, after one run of the feed
    /// model's main-actor code (`runs`), and leaves the main actor free; then lets the build go on (`release`), and
    /// checks that the code ran again.
    private func resolveFeedModel(
        from: ResolvedFrom, in container: Container, whileHeld storage: InstanceStorage, runs: Counter,
        release: () -> Void
    ) async throws {
        let feed =
            switch from {
            case .aTask: Task.detached { try await container.resolve(MFeedModel.self) }
            case .theMainActor: Task { @MainActor in try await container.resolve(MFeedModel.self) }
            }
        #expect(
            await poll { CreationCoordinator.shared.waitingCounts(for: storage).suspended == 1 },
            "the feed model's resolve awaits the client, suspended")
        #expect(runs.value == 1)
        await MainActor.run {}  // The main actor is free meanwhile.
        release()
        _ = try await feed.value
        #expect(runs.value == 2, "the code ran again once the client was handed out")
    }

    /// Waits until another task has claimed `storage`'s build.
    private func waitUntilClaimed(_ storage: InstanceStorage) async throws {
        let watchdog = Watchdog("the builder claiming the client", seconds: Watchdog.patience)
        defer { watchdog.disarm() }
        while true {
            switch storage.snapshot() {
            case .building, .soloBuilding: return
            case .empty, .holding, .retired, .closed: try await Task.sleep(nanoseconds: 1_000_000)
            }
        }
    }
}
