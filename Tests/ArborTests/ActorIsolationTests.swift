import Arbor
import ArborTestSupport
import Foundation
import Testing

// A factory isolated to the main actor — `{ @MainActor r in … }` — is built on the main actor: synchronously when the
// resolve runs there, by going there when the resolve is `async`; a synchronous resolve anywhere else throws instead
// of crashing or racing. A factory isolated to another global actor is an `async` one.

private final class IClient: Sendable {}

/// A value only the main dispatch queue, where the main actor runs, carries.
private let mainQueueKey: DispatchSpecificKey<UInt8> = {
    let key = DispatchSpecificKey<UInt8>()
    DispatchQueue.main.setSpecific(key: key, value: 1)
    return key
}()

@MainActor
private final class IFeedViewModel {
    let client: IClient
    let builtOnMainActor: Bool
    var refreshes = 0

    init(client: IClient) {
        // The runtime's own check: it stops the test process if the factory ran anywhere else.
        MainActor.assertIsolated("a main-actor factory ran off the main actor")
        self.client = client
        builtOnMainActor = Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) != nil
    }
}

@globalActor
private actor IDatabaseActor {
    static let shared = IDatabaseActor()
}

@IDatabaseActor
private final class IStore {
    let rows: [String]
    init(rows: [String]) {
        IDatabaseActor.shared.assertIsolated("a factory isolated to IDatabaseActor ran elsewhere")
        self.rows = rows
    }
}

private func makeContainer() -> Container {
    let container = Container()
    container.register(IClient.self) { _ in IClient() }.inObjectScope(.permanent)
    container.register(IFeedViewModel.self) { @MainActor r in IFeedViewModel(client: try r.resolve()) }
    return container
}

@Suite struct ActorIsolationTests {
    @MainActor
    @Test func aMainActorFactoryResolvedSynchronouslyOnTheMainActorIsBuiltThere() throws {
        let container = makeContainer()
        let model = try container.resolve(IFeedViewModel.self)
        #expect(model.builtOnMainActor)
        model.refreshes += 1  // A main-actor model, used on the main actor.
        #expect(model.client === (try container.resolve(IClient.self)))
    }

    @Test func anAsyncResolveFromAnywhereGoesToTheMainActorToBuildIt() async throws {
        let container = makeContainer()
        let model = try await Task.detached { try await container.resolve(IFeedViewModel.self) }.value
        let builtThere = await MainActor.run { model.builtOnMainActor }
        #expect(builtThere)
    }

    @Test func aSynchronousResolveOffTheMainActorThrowsNamingIt() async throws {
        let container = makeContainer()
        let error = await withCheckedContinuation { (continuation: CheckedContinuation<ResolutionError?, Never>) in
            Thread {
                do {
                    _ = try container.resolve(IFeedViewModel.self)
                    continuation.resume(returning: nil)
                } catch {
                    continuation.resume(returning: error as? ResolutionError)
                }
            }
            .start()
        }
        let resolutionError = try #require(error)
        #expect(resolutionError.kind == .asyncRequired)
        #expect(resolutionError.description.contains("main actor"))
        #expect(resolutionError.description.contains("@MainActor"))
    }

    @Test func aMainActorFactoryInAnAsyncGraphIsBuiltOnTheMainActor() async throws {
        final class Screen: @unchecked Sendable {
            let model: IFeedViewModel
            init(model: IFeedViewModel) { self.model = model }
        }
        let container = makeContainer()
        container.register(Screen.self) { r async throws in Screen(model: try await r.resolve()) }
        let screen = try await container.resolve(Screen.self)
        let builtThere = await MainActor.run { screen.model.builtOnMainActor }
        #expect(builtThere)
    }

    @Test func aFactoryIsolatedToAnotherGlobalActorIsAnAsyncOne() async throws {
        let container = Container()
        container.register(IStore.self) { @IDatabaseActor _ async in IStore(rows: ["a"]) }
        let store = try await container.resolve(IStore.self)
        #expect(store.rows == ["a"])
        let error = try #require(resolutionError { try synchronously { try container.resolve(IStore.self) } })
        #expect(error.kind == .asyncRequired)
    }

    @Test func mainActorFactoriesTakeRuntimeArguments() async throws {
        let container = Container()
        container.register(IClient.self) { _ in IClient() }
        container.register(IFeedViewModel.self, name: "titled") { @MainActor (r, title: String) in
            let model = IFeedViewModel(client: try r.resolve())
            model.refreshes = title.count
            return model
        }
        let model = try await container.resolve(IFeedViewModel.self, name: "titled", arguments: "four")
        let refreshes = await MainActor.run { model.refreshes }
        #expect(refreshes == 4)
    }

    /// The Threads article's hook for a main-actor object: an `async` hook isolated to the main actor runs there,
    /// whichever task resolves; a synchronous resolve of the service then throws, saying to await.
    @Test func aMainActorHookRunsOnTheMainActorFromAnyTask() async throws {
        @MainActor final class Feed {
            var client: IClient?
            var hookOnMainActor = false
        }
        let container = Container()
        container.register(IClient.self) { _ in IClient() }
        container.register(Feed.self) { @MainActor _ in Feed() }
            .initCompleted { @MainActor r, feed async throws in
                feed.client = try await r.resolve()
                feed.hookOnMainActor = Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) != nil
            }

        let feed = try await Task.detached { try await container.resolve(Feed.self) }.value
        let (client, onMainActor) = await MainActor.run { (feed.client, feed.hookOnMainActor) }
        #expect(client != nil)
        #expect(onMainActor)
        let error = await MainActor.run { resolutionError { _ = try container.resolve(Feed.self) } }
        #expect(error?.kind == .asyncRequired)
    }

    /// A synchronous hook isolated to the main actor runs on the main actor whichever task resolves, in order with
    /// the service's other hooks; a synchronous resolve off the main actor throws, saying where to resolve.
    @Test func aSynchronousMainActorHookRunsOnTheMainActorFromAnyTask() async throws {
        @MainActor final class Feed {
            var client: IClient?
            var hookOnMainActor = false
        }
        let order = Locked<[String]>([])
        let container = Container()
        container.register(IClient.self) { _ in IClient() }
        container.register(Feed.self) { @MainActor _ in Feed() }
            .initCompleted { _, _ in order.withLock { $0.append("first") } }
            .initCompleted { @MainActor r, feed in
                MainActor.assertIsolated("a main-actor hook ran off the main actor")
                feed.client = try r.resolve()
                feed.hookOnMainActor = Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) != nil
                order.withLock { $0.append("main actor") }
            }
            .initCompleted { _, _ in order.withLock { $0.append("last") } }

        let feed = try await Task.detached { try await container.resolve(Feed.self) }.value
        let (client, onMainActor) = await MainActor.run { (feed.client, feed.hookOnMainActor) }
        #expect(client != nil)
        #expect(onMainActor)
        #expect(order.withLock { $0 } == ["first", "main actor", "last"])

        let onTheMainActor = try await MainActor.run { try container.resolve(Feed.self) }
        let (mainClient, mainOnMainActor) = await MainActor.run {
            (onTheMainActor.client, onTheMainActor.hookOnMainActor)
        }
        #expect(mainClient != nil)
        #expect(mainOnMainActor)

    }

    /// A synchronous resolve off the main actor of a service whose hook is isolated to it throws, saying where to
    /// resolve, and runs no hook.
    @Test func aSynchronousResolveOffTheMainActorOfAServiceWithAMainActorHookThrows() throws {
        let ran = Locked(false)
        let container = Container()
        container.register(IClient.self) { _ in IClient() }
            .initCompleted { @MainActor _, _ in ran.withLock { $0 = true } }
        let error = try #require(resolutionError { try synchronously { try container.resolve(IClient.self) } })
        #expect(error.kind == .asyncRequired)
        #expect(error.path == [ServiceKey(IClient.self)])
        #expect(error.description.contains("one of its initCompleted hooks is isolated to the main actor"))
        #expect(error.description.contains("Resolve it on the main actor, or with `try await`"))
        #expect(!ran.withLock { $0 })
    }

    /// A hook without `@MainActor` on a `Sendable` class is the plain synchronous one: it runs where the resolve
    /// runs, so a synchronous resolve off the main actor works.
    @Test func anUnannotatedHookOfASendableServiceRunsWhereTheResolveRuns() throws {
        final class Pair: Sendable {
            let client: IClient
            init(client: IClient) { self.client = client }
        }
        let ran = Locked(false)
        let container = Container()
        container.register(IClient.self) { _ in IClient() }
        container.register(Pair.self) { r in Pair(client: try r.resolve()) }
            .initCompleted { _, _ in ran.withLock { $0 = true } }
        _ = try synchronously { try container.resolve(Pair.self) }
        #expect(ran.withLock { $0 })
    }

    /// Registered from main-actor code (an app's set-up), a hook without `@MainActor` is still the plain one.
    @MainActor
    @Test func anUnannotatedHookRegisteredOnTheMainActorRunsWhereTheResolveRuns() async throws {
        final class Pair: Sendable {}
        let ran = Locked(false)
        let container = Container()
        container.register(Pair.self) { _ in Pair() }
            .initCompleted { _, _ in ran.withLock { $0 = true } }
        try await Task.detached { _ = try synchronously { try container.resolve(Pair.self) } }.value
        #expect(ran.withLock { $0 })
    }

    /// `validate()`, which resolves synchronously, lists a service whose hook needs the main actor as not checked,
    /// not as a problem.
    @Test func validationListsAServiceWithAMainActorHookAsNotChecked() async throws {
        let container = Container()
        container.register(IClient.self) { _ in IClient() }
            .initCompleted { @MainActor _, _ in MainActor.assertIsolated() }
        let report = await Task.detached { container.validate() }.value
        #expect(report.problems.isEmpty)
        #expect(report.notChecked == [ServiceKey(IClient.self)])
        // The reason given is the hook's as much as a factory's: the factory here is synchronous.
        #expect(
            report.description.contains(
                "Not checked, because they need an async resolve (an async or main-actor "
                    + "factory or hook, theirs or a dependency's):\n  IClient"))
    }
}
