import ArborTestSupport
import Foundation
import Testing

@testable import Arbor

// A synchronous resolve in a task blocks one of the few threads Swift runs tasks on while it waits for another
// resolution's build. When an `async` resolution takes part in that build, it may be suspended (its factory awaits the
// network), and it needs one of those threads to go on: with a blocked resolve on each, nothing would go on, for ever.
// So such a resolve throws `.asyncRequired`, saying to `await`, as it does on the main actor, while that resolution may
// be suspended: it awaits an `async` factory or hook holding what it claimed, or waits itself. It still waits while the
// resolution runs synchronous code, or the build's synchronous factory runs, and from a thread of its own as before.

private protocol TWSettings: AnyObject, Sendable {
    var name: String { get }
}

private final class TWFileSettings: TWSettings {
    let name = "file"
}

private final class TWDatabase: Sendable {
    let settings: any TWSettings
    init(settings: any TWSettings) { self.settings = settings }
}

/// A graph-scoped object with an `initCompleted` hook: while its hook waits to run, what is built after it is not
/// complete, and is handed out only when the resolve ends.
private final class TWWiring: @unchecked Sendable {
    var isWired = false
}

/// A client whose synchronous factory (or hook) needs the settings.
private final class TWClient: @unchecked Sendable {
    let settings: any TWSettings
    /// Set by the client's `initCompleted` hook, where it resolves the settings.
    var hooked: (any TWSettings)?
    init(settings: any TWSettings) { self.settings = settings }
}

/// A report whose `async` factory gets the settings from a synchronous helper.
private final class TWReport: Sendable {
    let settings: any TWSettings
    init(settings: any TWSettings) { self.settings = settings }
}

/// A service that needs nothing.
private final class TWLogger: Sendable {}

/// What a subscriber holds; its `initCompleted` hook subscribes it, a side effect of the kind a dropped run's
/// instances should not have.
private protocol TWSubscribing: AnyObject {
    var isSubscribed: Bool { get set }
}

private final class TWSubscription: TWSubscribing, @unchecked Sendable {
    var isSubscribed = false
}

/// A graph-scoped session that holds a subscription.
private final class TWSession: @unchecked Sendable {
    let subscription: TWSubscription
    init(subscription: TWSubscription) { self.subscription = subscription }
}

/// A client whose synchronous factory resolves a subscription before the settings.
private final class TWSubscriber: @unchecked Sendable {
    let subscription: any TWSubscribing
    let settings: any TWSettings
    init(subscription: any TWSubscribing, settings: any TWSettings) {
        self.subscription = subscription
        self.settings = settings
    }
}

/// What a client's factory that catches its resolve's error uses instead of the settings.
private final class TWFallbackSettings: TWSettings {
    let name = "fallback"
}

/// Why the settings are not handed out while the database's factory awaits.
enum TWIncomplete: String, CaseIterable, CustomTestStringConvertible {
    /// The settings have an `initCompleted` hook of their own.
    case ownHook
    /// The settings are built after another service's hook was queued.
    case builtAfterAHook
    /// The settings' factory is `async`, and awaits.
    case asyncFactory

    var testDescription: String { rawValue }
}

// The tests that block a task's thread run those tasks on threads of their own (`taskOnAThreadOfItsOwn`).
@Suite struct TaskThreadWaitTests {
    /// A root with permanent settings (under a protocol type) and a database whose `async` factory resolves them, then
    /// waits at `gate`; `incomplete` says why the settings are not handed out before the database's resolve ends.
    private func makeContainer(_ incomplete: TWIncomplete, gate: Gate, builds: Counter) -> Container {
        let container = Container()
        switch incomplete {
        case .ownHook, .builtAfterAHook:
            let settings = container.register((any TWSettings).self) { _ in
                builds.increment()
                return TWFileSettings()
            }
            .inObjectScope(.permanent)
            if incomplete == .ownHook { settings.initCompleted { _, _ in } }
        case .asyncFactory:
            container.register((any TWSettings).self) { _ async in
                builds.increment()
                await gate.passAsync()
                return TWFileSettings()
            }
            .inObjectScope(.permanent)
        }
        container.register(TWWiring.self) { _ in TWWiring() }.initCompleted { _, wiring in wiring.isWired = true }
        container.register(TWDatabase.self) { r async throws in
            if incomplete == .builtAfterAHook { _ = try await r.resolve(TWWiring.self) }
            let settings = try await r.resolve((any TWSettings).self)
            if incomplete != .asyncFactory { await gate.passAsync() }
            return TWDatabase(settings: settings)
        }
        return container
    }

    @Test(arguments: TWIncomplete.allCases)
    func aSynchronousResolveInATaskThrowsInsteadOfWaitingForAnAwaitingResolve(incomplete: TWIncomplete) async throws {
        let gate = Gate()
        let builds = Counter()
        let container = makeContainer(incomplete, gate: gate, builds: builds)
        let database = Task.detached { try await container.resolve(TWDatabase.self) }
        #expect(await poll { gate.hasArrivals })

        let resolve = taskOnAThreadOfItsOwn { () -> Result<any TWSettings, any Error> in
            Result { try resolveSynchronously((any TWSettings).self, from: container) }
        }
        // Before the fix, it waited until the gate opened: the poll gives up, and the result is the settings.
        #expect(await endsSoon(resolve), "the synchronous resolve waited for the database's factory")
        gate.open()
        let error = try #require(
            (try await resolve.value).failure as? ResolutionError, "the synchronous resolve got the settings")
        #expect(error.kind == .asyncRequired)
        #expect(error.key == ServiceKey((any TWSettings).self))
        let text = error.description
        #expect(text.contains("runs in a task") && text.contains("try await"), "the error says what to do: \(text)")

        let settings = try await database.value.settings
        #expect(try resolveSynchronously((any TWSettings).self, from: container) === settings, "then it is shared")
        #expect(builds.value == 1)
    }

    /// Many tasks resolving synchronously, more than Swift has threads for tasks, while an `async` resolve holds what
    /// they need and awaits: each throws instead of blocking, and the `async` resolve goes on.
    @Test(arguments: [TWIncomplete.ownHook, .builtAfterAHook])
    func moreSynchronousResolvesInTasksThanThreadsDoNotStopAnAwaitingResolve(incomplete: TWIncomplete) async throws {
        // Were they to wait, they would hold every thread a time limit needs to end the test: the watchdog has one of
        // its own.
        let watchdog = Watchdog("synchronous resolves in tasks and an awaiting resolve", seconds: Watchdog.patience)
        defer { watchdog.disarm() }
        let gate = Gate()
        let builds = Counter()
        let container = makeContainer(incomplete, gate: gate, builds: builds)
        let database = Task { try await container.resolve(TWDatabase.self) }
        #expect(await poll { gate.hasArrivals })
        let tasks = 4 * ProcessInfo.processInfo.activeProcessorCount + 2
        let kinds = await withTaskGroup(of: ReasonKind?.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    do {
                        _ = try resolveSynchronously((any TWSettings).self, from: container)
                        return nil
                    } catch {
                        return (error as? ResolutionError)?.kind
                    }
                }
            }
            return await group.reduce(into: [ReasonKind?]()) { $0.append($1) }
        }
        #expect(kinds == Array(repeating: ReasonKind.asyncRequired, count: tasks))
        gate.open()
        #expect(try await database.value.settings.name == "file")
        #expect(builds.value == 1)
    }

    /// While an `async` resolve runs the settings' synchronous factory, its builder is on a thread and cannot suspend
    /// before the factory returns: a synchronous resolve in a task waits for it, and shares what it built. (The
    /// factory starts that resolve in a task, and returns once it waits. Both tasks run on threads of their own.)
    @Test func aSynchronousResolveInATaskWaitsWhileTheSynchronousFactoryRuns() async throws {
        let container = Container()
        let resolving = Box<InstanceStorage>()
        let waiter = Box<Result<any TWSettings, any Error>>()
        let waited = Flag()
        container.register((any TWSettings).self) { _ in
            if let storage = resolving.value {
                resolving.value = nil
                taskOnAThreadOfItsOwn {
                    waiter.value = Result { try resolveSynchronously((any TWSettings).self, from: container) }
                }
                waited.isOn = waitUntilAThreadWaits(on: storage, timeout: Watchdog.patience)
            }
            return TWFileSettings()
        }
        .inObjectScope(.permanent)
        let entry = try #require(container.entries.first { $0.key == ServiceKey((any TWSettings).self) })
        resolving.value = entry.storage

        let settings = try await taskOnAThreadOfItsOwn {
            try await container.resolve((any TWSettings).self)
        }.value
        #expect(waited.isOn, "the task waited for the settings' factory")
        #expect(await poll { waiter.value != nil })
        #expect(try waiter.value?.get() === settings, "the task got the instance the factory built")
    }

    /// An awaited resolve whose factories and hooks are all synchronous never suspends: a synchronous resolve in a
    /// task waits for it, as for any resolve on a thread, and shares what it built. (The settings' hook waits at a gate
    /// until that resolve waits; the awaited resolve runs on a thread of its own.)
    @Test func aSynchronousResolveInATaskWaitsForAnAwaitedResolveThatNeverSuspends() async throws {
        let hook = Gate()
        let builds = Counter()
        let container = Container()
        container.register((any TWSettings).self) { _ in
            builds.increment()
            return TWFileSettings()
        }
        .inObjectScope(.permanent)
        .initCompleted { _, _ in hook.pass() }
        let entry = try #require(container.entries.first { $0.key == ServiceKey((any TWSettings).self) })
        let storage = try #require(entry.storage as InstanceStorage?)
        let awaited = taskOnAThreadOfItsOwn { try await container.resolve((any TWSettings).self) }
        #expect(await poll { hook.hasArrivals })

        let waiter = taskOnAThreadOfItsOwn { try resolveSynchronously((any TWSettings).self, from: container) }
        #expect(await poll { CreationCoordinator.shared.isWaited(on: storage) }, "the task waits for the hook")
        hook.open()
        let settings = try await awaited.value
        #expect(try await waiter.value === settings)
        #expect(builds.value == 1)
    }

    /// A synchronous resolve in a task that waits while a factory runs looks again when that factory starts to wait
    /// for an awaiting resolve's build: it throws then, instead of blocking its thread until that resolve ends.
    @Test func aResolveWaitingForAFactoryThrowsOnceThatFactoryWaitsForAnAwaitingResolve() async throws {
        let gate = Gate()
        let builds = Counter()
        let container = makeContainer(.ownHook, gate: gate, builds: builds)
        let proceed = DispatchSemaphore(value: 0)
        let started = Flag()
        container.register(TWClient.self) { r in
            started.isOn = true
            proceed.wait()
            return TWClient(settings: try r.resolve())
        }
        .inObjectScope(.permanent)
        let client = try #require(container.entries.first { $0.key == ServiceKey(TWClient.self) })
        let clientStorage = try #require(client.storage as InstanceStorage?)
        let database = Task.detached { try await container.resolve(TWDatabase.self) }
        #expect(await poll { gate.hasArrivals })
        // The client's builder, on a thread that is no task's: it may wait for the settings.
        let built = Box<TWClient>()
        Thread { built.value = try? container.resolve(TWClient.self) }.start()
        #expect(await poll { started.isOn })

        let waiter = taskOnAThreadOfItsOwn { try resolveSynchronously(TWClient.self, from: container) }
        #expect(
            await poll { CreationCoordinator.shared.isWaited(on: clientStorage) },
            "the task waits while the client's factory runs")
        proceed.signal()
        #expect(
            await endsSoon(waiter), "the task kept waiting once the client's factory waited for the database's resolve")
        gate.open()
        let error = await asyncResolutionError { try await waiter.value }
        #expect(error?.kind == .asyncRequired)
        let settings = try await database.value.settings
        #expect(await poll { built.value != nil })
        #expect(built.value?.settings === settings)
        #expect(builds.value == 1)
    }

    /// An `async` factory whose synchronous helper resolves, through the container, what its own resolve holds (the
    /// settings, whose hook has not run) would wait for itself: it throws `.circularDependency`, saying to resolve
    /// through the factory's resolver.
    @Test func aSynchronousResolveInAnAsyncFactoryOfWhatItsOwnResolveHoldsIsACycle() async throws {
        let container = Container()
        container.register((any TWSettings).self) { _ in TWFileSettings() }.inObjectScope(.permanent)
            .initCompleted { _, _ in }
        container.register(TWDatabase.self) { r async throws in
            _ = try await r.resolve((any TWSettings).self)
            await Task.yield()
            return TWDatabase(settings: try resolveSynchronously((any TWSettings).self, from: container))
        }
        let error = await asyncResolutionError { try await container.resolve(TWDatabase.self) }
        #expect(error?.kind == .circularDependency)
        let text = error?.description ?? ""
        #expect(text.contains("own async resolve") && text.contains("try await r.resolve"), "\(text)")
    }

    // MARK: Synchronous code an `async` resolve runs

    /// Where the synchronous code that needs the settings runs in an `async` resolve of the client.
    enum HostedCode: String, CaseIterable, CustomTestStringConvertible {
        /// The client's synchronous factory resolves the settings.
        case factory
        /// The same, for a permanent client: its build is claimed before the factory runs.
        case factoryOfAPermanent
        /// The client's synchronous factory catches what the resolve throws, and builds the client without them.
        case factoryThatCatches
        /// The client's synchronous `initCompleted` hook resolves the settings.
        case hook
        /// The client's synchronous factory, isolated to the main actor, resolves the settings: it runs there, where
        /// waiting would block the main actor.
        case mainActorFactory
        /// The client's synchronous `initCompleted` hook, isolated to the main actor, resolves the settings.
        case mainActorHook

        var testDescription: String { rawValue }

        /// Whether the code is a hook, which keeps the settings in the client's `hooked`.
        var isHook: Bool { self == .hook || self == .mainActorHook }

        /// The settings the client got from the code.
        fileprivate func settings(of client: TWClient) -> (any TWSettings)? { isHook ? client.hooked : client.settings }
    }

    /// Registers the client, whose synchronous code (`code`) resolves the settings; `runs` counts that code's runs.
    private func registerClient(_ code: HostedCode, in container: Container, runs: Counter) {
        switch code {
        case .factory, .factoryOfAPermanent:
            container.register(TWClient.self) { r in
                runs.increment()
                return TWClient(settings: try r.resolve())
            }
            .inObjectScope(code == .factory ? .transient : .permanent)
        case .factoryThatCatches:
            container.register(TWClient.self) { r in
                runs.increment()
                return TWClient(settings: (try? r.resolve((any TWSettings).self)) ?? TWFallbackSettings())
            }
        case .hook:
            container.register(TWClient.self) { _ in TWClient(settings: TWFallbackSettings()) }
                .initCompleted { r, client in
                    runs.increment()
                    client.hooked = try r.resolve((any TWSettings).self)
                }
        case .mainActorFactory:
            container.register(TWClient.self) { @MainActor r in
                runs.increment()
                return TWClient(settings: try r.resolve())
            }
        case .mainActorHook:
            container.register(TWClient.self) { _ in TWClient(settings: TWFallbackSettings()) }
                .initCompleted { @MainActor r, client in
                    runs.increment()
                    client.hooked = try r.resolve((any TWSettings).self)
                }
        }
    }

    /// The database's `async` resolve, holding the settings (under a protocol type) and waiting at its gate, with the
    /// client registered (`code`, whose runs `runs` counts) and not resolved yet.
    private struct HeldSettings {
        let container: Container
        let gate: Gate
        let builds: Counter
        let runs: Counter
        /// The settings' storage.
        let storage: InstanceStorage
        let database: Task<TWDatabase, any Error>
    }

    private func heldByAnAwaitingResolve(
        _ incomplete: TWIncomplete, client code: HostedCode
    ) async throws -> HeldSettings {
        let gate = Gate()
        let builds = Counter()
        let runs = Counter()
        let container = makeContainer(incomplete, gate: gate, builds: builds)
        registerClient(code, in: container, runs: runs)
        let entry = try #require(container.entries.first { $0.key == ServiceKey((any TWSettings).self) })
        let storage = try #require(entry.storage as InstanceStorage?)
        let database = Task { try await container.resolve(TWDatabase.self) }
        #expect(await poll { gate.hasArrivals })
        return HeldSettings(
            container: container, gate: gate, builds: builds, runs: runs, storage: storage, database: database)
    }

    /// Synchronous code that an `async` resolve runs would block one of the threads tasks run on, waiting for settings
    /// that the database's suspended resolve holds: the `async` resolve awaits them instead, suspended, and runs the
    /// code again, which gets the settings the database got. (Before, it blocked its thread until the gate opened.)
    @Test(arguments: HostedCode.allCases, TWIncomplete.allCases)
    func synchronousCodeInAnAsyncResolveAwaitsInsteadAndRunsAgain(
        code: HostedCode, incomplete: TWIncomplete
    ) async throws {
        let held = try await heldByAnAwaitingResolve(incomplete, client: code)
        let (container, gate, storage, runs) = (held.container, held.gate, held.storage, held.runs)

        let client = Task { try await container.resolve(TWClient.self) }
        #expect(await poll { CreationCoordinator.shared.isWaited(on: storage) }, "the client waits for the settings")
        let waiting = CreationCoordinator.shared.waitingCounts(for: storage)
        #expect(waiting.blocked == 0 && waiting.suspended == 1, "it waits suspended, blocking no thread: \(waiting)")
        #expect(runs.value == 1)
        if code == .mainActorFactory || code == .mainActorHook {
            let mainActorJob = Task { @MainActor () throws in }
            #expect(await endsSoon(mainActorJob), "the main actor is free while the client waits")
        }
        gate.open()
        let settings = try await held.database.value.settings
        let resolved = try await client.value
        #expect(code.settings(of: resolved) === settings)
        #expect(runs.value == 2, "the code ran again once the settings were handed out")
        #expect(held.builds.value == 1)
    }

    /// More `async` resolves than Swift has threads for tasks, each running a synchronous factory that needs what an
    /// awaiting resolve holds: none blocks a thread, and each gets the settings once the awaiting resolve goes on.
    @Test func moreAsyncResolvesOfSynchronousFactoriesThanThreadsDoNotStopAnAwaitingResolve() async throws {
        // Were they to block, they would hold every thread a time limit needs to end the test: the watchdog has one of
        // its own.
        let watchdog = Watchdog(
            "async resolves of synchronous factories, and an awaiting one", seconds: Watchdog.patience)
        defer { watchdog.disarm() }
        let held = try await heldByAnAwaitingResolve(.ownHook, client: .factory)
        let (container, gate, storage) = (held.container, held.gate, held.storage)
        let tasks = 4 * ProcessInfo.processInfo.activeProcessorCount + 2
        let clients = (0..<tasks).map { _ in Task { try await container.resolve(TWClient.self) } }
        #expect(await poll { CreationCoordinator.shared.waitingCounts(for: storage).suspended == tasks })
        gate.open()
        let settings = try await held.database.value.settings
        for client in clients { #expect(try await client.value.settings === settings) }
        #expect(held.builds.value == 1)
    }

    /// A task cancelled while its `async` resolve awaits a build for its synchronous factory or hook stops waiting,
    /// and its resolve throws `CancellationError`, as for its own waits; the awaiting resolve is not affected.
    @Test(arguments: [HostedCode.factory, .factoryOfAPermanent, .hook, .mainActorFactory, .mainActorHook])
    func cancellingAResolveThatAwaitsForItsSynchronousCodeStopsIt(code: HostedCode) async throws {
        let held = try await heldByAnAwaitingResolve(.ownHook, client: code)
        let (container, gate, storage, runs) = (held.container, held.gate, held.storage, held.runs)
        let client = Task { try await container.resolve(TWClient.self) }
        #expect(await poll { CreationCoordinator.shared.waitingCounts(for: storage).suspended == 1 })
        client.cancel()
        let outcome = await client.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(runs.value == 1, "the code did not run again")
        gate.open()
        let settings = try await held.database.value.settings
        let later = try await container.resolve(TWClient.self)
        #expect(code.settings(of: later) === settings)
        #expect(held.builds.value == 1)
    }

    /// How the subscriber's factory gets the subscription it resolves before the settings.
    enum TWSubscribed: String, CaseIterable, CustomTestStringConvertible {
        /// A transient subscription, registered as its class.
        case asItsClass
        /// A transient subscription, registered under a protocol type.
        case asAProtocol
        /// A transient subscription that the factory also keeps in a list of its own before it resolves the settings.
        case keptByTheFactory
        /// The subscription a graph-scoped session holds.
        case heldByAGraphInstance
        /// The subscription a transient session with a hook of its own holds: the first run's session and its
        /// subscription, which only that session held, are both dropped.
        case heldByATransientWithAHook

        var testDescription: String { rawValue }
    }

    /// A synchronous factory that an `async` resolve runs again leaves what its first run built: a transient instance
    /// that nothing holds any longer gets no `initCompleted` hook (it would subscribe an object no one uses), and is
    /// released then. One something else holds — the factory's own list, or a graph-scoped instance the second run
    /// gets again — keeps its hook, which runs once.
    @Test(arguments: TWSubscribed.allCases)
    func aRunGivenUpLeavesNoHooksForTransientInstancesNothingHolds(subscribed: TWSubscribed) async throws {
        let gate = Gate()
        let builds = Counter()
        let runs = Counter()
        let subscriptions = Counter()
        let kept = Box<[TWSubscription]>()
        kept.value = []
        let container = makeContainer(.ownHook, gate: gate, builds: builds)
        container.register(TWSubscription.self) { _ in TWSubscription() }.inObjectScope(.transient)
            .initCompleted { _, subscription in
                subscriptions.increment()
                subscription.isSubscribed = true
            }
        container.register((any TWSubscribing).self) { _ in TWSubscription() }.inObjectScope(.transient)
            .initCompleted { _, subscription in
                subscriptions.increment()
                subscription.isSubscribed = true
            }
        container.register(TWSession.self) { r in TWSession(subscription: try r.resolve()) }.inObjectScope(.graph)
        let sessionHooks = Counter()
        container.register(TWSession.self, name: "transient") { r in TWSession(subscription: try r.resolve()) }
            .inObjectScope(.transient)
            .initCompleted { _, _ in sessionHooks.increment() }
        container.register(TWSubscriber.self) { r in
            runs.increment()
            let subscription: any TWSubscribing
            switch subscribed {
            case .asItsClass: subscription = try r.resolve(TWSubscription.self)
            case .asAProtocol: subscription = try r.resolve((any TWSubscribing).self)
            case .keptByTheFactory:
                let made = try r.resolve(TWSubscription.self)
                kept.value!.append(made)
                subscription = made
            case .heldByAGraphInstance: subscription = try r.resolve(TWSession.self).subscription
            case .heldByATransientWithAHook:
                subscription = try r.resolve(TWSession.self, name: "transient").subscription
            }
            return TWSubscriber(subscription: subscription, settings: try r.resolve())
        }
        let entry = try #require(container.entries.first { $0.key == ServiceKey((any TWSettings).self) })
        let storage = try #require(entry.storage as InstanceStorage?)
        let database = Task { try await container.resolve(TWDatabase.self) }
        #expect(await poll { gate.hasArrivals })

        let subscriber = Task { try await container.resolve(TWSubscriber.self) }
        #expect(await poll { CreationCoordinator.shared.isWaited(on: storage) }, "the subscriber awaits the settings")
        gate.open()
        _ = try await database.value
        let resolved = try await subscriber.value
        #expect(runs.value == 2)
        #expect(resolved.subscription.isSubscribed)
        switch subscribed {
        case .asItsClass, .asAProtocol, .heldByAGraphInstance, .heldByATransientWithAHook:
            #expect(subscriptions.value == 1, "one subscription for one subscriber")
            if subscribed == .heldByATransientWithAHook { #expect(sessionHooks.value == 1) }
        case .keptByTheFactory:
            #expect(subscriptions.value == 2, "the list holds the first run's subscription too")
            let keptSubscriptions = kept.value ?? []
            #expect(keptSubscriptions.count == 2 && keptSubscriptions.allSatisfy { $0.isSubscribed })
        }
    }

    /// A synchronous helper that an `async` factory calls with its resolver is the factory's own code, which nothing
    /// runs again: its resolve throws `.asyncRequired`, saying to `try await`, and leaves nothing behind for the next
    /// synchronous code that runs on the thread.
    @Test func aSynchronousHelperOfAnAsyncFactoryThrowsAndLeavesNothingBehind() async throws {
        let held = try await heldByAnAwaitingResolve(.ownHook, client: .factory)
        let container = held.container
        @Sendable func settings(from r: any Resolver) throws -> any TWSettings { try r.resolve() }
        let leftBehind = Flag()
        container.register(TWReport.self) { r async throws in
            defer { leftBehind.isOn = ThreadContext.current.awaitedBuild != nil }
            return TWReport(settings: try settings(from: r))
        }
        let loggers = Counter()
        container.register(TWLogger.self) { _ in
            loggers.increment()
            return TWLogger()
        }

        let error = await asyncResolutionError { try await container.resolve(TWReport.self) }
        #expect(error?.kind == .asyncRequired)
        #expect(error.map { "\($0)".contains("runs in a task") && "\($0)".contains("try await") } == true, "\(error!)")
        #expect(!leftBehind.isOn, "the helper's resolve left a wait for the next synchronous code on its thread")
        let logger = Task { try await container.resolve(TWLogger.self) }
        #expect(await endsSoon(logger), "an unrelated resolve waited for the settings")
        #expect(loggers.value == 1)
        held.gate.open()
        _ = try await held.database.value
    }
}

/// Whether `task` ends within the watchdog's patience, without awaiting it for longer: the test's guard against a wait
/// that would last until something it checks afterwards happens (not a measure of time; no shorter, for the task that
/// sees it end may wait that long for one of Swift's threads for tasks while a long test runs alongside).
private func endsSoon<Success>(_ task: Task<Success, any Error>) async -> Bool {
    let ended = Flag()
    Task.detached {
        _ = try? await task.value
        ended.isOn = true
    }
    return await poll(timeout: .seconds(Watchdog.patience)) { ended.isOn }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
