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
    /// building: the factory cannot wait on the main actor, and the error says to make it `async` (the resolve was
    /// awaited already). The `async` factory waits suspended, and gets the instance. (The client's factory blocks its
    /// thread until the test opens its gate: its task runs on a thread of its own.)
    @Test func aSynchronousMainActorFactoryThatMeetsAnotherTasksBuildIsToldToBecomeAsync() async throws {
        final class Gate: @unchecked Sendable {
            let semaphore = DispatchSemaphore(value: 0)
        }
        let gate = Gate()
        let container = Container()
        container.register(MClient.self) { _ in
            gate.semaphore.wait()
            return MClient()
        }
        .inObjectScope(.permanent)
        container.register(MFeedModel.self) { @MainActor r in
            _ = try r.resolve(MClient.self)
            return MFeedModel()
        }
        container.register(MFeedModel.self, name: "async") { @MainActor r async throws in
            _ = try await r.resolve(MClient.self)
            return MFeedModel()
        }
        let storage = try #require(container.entries.first { $0.key == ServiceKey(MClient.self) }?.storage)
        let builder = taskOnAThreadOfItsOwn { try await container.resolve(MClient.self) }
        let error = try await feedModelError(in: container, onceClaimed: storage)
        #expect(error.kind == .asyncRequired)
        #expect(error.path == [ServiceKey(MFeedModel.self), ServiceKey(MClient.self)])
        #expect(error.description.contains("the factory of MFeedModel runs on the main actor synchronously"))
        #expect(error.description.contains("`{ @MainActor r async throws in … try await r.resolve(…) }`"))
        #expect(!error.description.contains("In top-level code"))

        let waiting = Task.detached { try await container.resolve(MFeedModel.self, name: "async") }
        gate.semaphore.signal()
        let client = try await builder.value
        _ = try await waiting.value
        let kept = try await container.resolve(MClient.self)
        #expect(kept === client)
    }

    /// The same for a synchronous main-actor `initCompleted` hook: the error names the hook and says to make it
    /// `async`, and the `async` hook waits suspended. The client is built at once, by an `async` resolution that then
    /// waits (suspended, holding no thread) before it publishes it: the client is not complete before the resolution
    /// ends, for the hook of an object it built first has not run.
    @Test func aSynchronousMainActorHookThatMeetsAnotherTasksBuildIsToldToBecomeAsync() async throws {
        final class Prefetch: Sendable {}
        final class Warmed: Sendable {}
        let gate = Gate()
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
            .initCompleted { @MainActor r, _ in _ = try r.resolve(MClient.self) }
        container.register(MFeedModel.self, name: "async") { @MainActor _ in MFeedModel() }
            .initCompleted { @MainActor r, _ async throws in _ = try await r.resolve(MClient.self) }
        let storage = try #require(container.entries.first { $0.key == ServiceKey(MClient.self) }?.storage)
        let builder = Task.detached { try await container.resolve(Prefetch.self) }
        let error = try await feedModelError(in: container, onceClaimed: storage)
        #expect(error.kind == .asyncRequired)
        #expect(error.path.last == ServiceKey(MClient.self))
        #expect(error.description.contains("an initCompleted hook of MFeedModel runs on the main actor synchronously"))
        #expect(error.description.contains("`.initCompleted { @MainActor r, instance async throws in"))

        let waiting = Task.detached { try await container.resolve(MFeedModel.self, name: "async") }
        gate.open()
        _ = try await builder.value
        _ = try await waiting.value
    }

    /// Waits until another task has claimed the client's `storage`, then resolves the feed model with `try await` from
    /// a task of its own, and returns the error it throws.
    private func feedModelError(
        in container: Container, onceClaimed storage: InstanceStorage
    ) async throws
        -> ResolutionError
    {
        let watchdog = Watchdog("the builder claiming the client", seconds: Watchdog.patience)
        while true {
            if case .building = storage.snapshot() { break }
            if case .soloBuilding = storage.snapshot() { break }
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        watchdog.disarm()
        return try #require(
            await asyncResolutionError {
                try await Task.detached { try await container.resolve(MFeedModel.self) }.value
            })
    }
}
