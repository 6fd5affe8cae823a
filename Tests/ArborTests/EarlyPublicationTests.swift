import ArborTestSupport
import Foundation
import Testing

@testable import Arbor

// An `async` resolve may suspend between builds: an `async` factory awaits its network after resolving its
// dependencies. What it built before is complete, and other resolutions get it at once: a synchronous resolve from
// another thread or task does not block until the whole resolve has finished. Inside tasks, such blocked resolves
// took the threads Swift runs tasks on, which the suspended resolve needed to go on: with one on each, nothing did.

private protocol EPSettings: AnyObject, Sendable {
    var name: String { get }
}

private final class EPFileSettings: EPSettings {
    let name = "file"
}

private struct UnexpectedResolve: Error {}

private final class EPDatabase: Sendable {
    let settings: any EPSettings
    init(settings: any EPSettings) { self.settings = settings }
}

/// A graph-scoped object with an `initCompleted` hook: while its hook waits to run, what is built after it is not
/// complete.
private final class EPWiring: @unchecked Sendable {
    var isWired = false
}

/// What an observer heard of the settings: "built", "reused", in order.
private final class EPEvents: ResolutionObserver, @unchecked Sendable {
    private let recorder = Recorder()
    private let key = ServiceKey((any EPSettings).self)

    var settings: [String] { recorder.events }

    func instanceBuilt(_ event: InstanceBuilt) {
        if event.key == key { recorder.record("built") }
    }

    func instanceReused(_ event: InstanceReused) {
        if event.key == key { recorder.record("reused") }
    }
}

private enum EPScope: String, CaseIterable, CustomTestStringConvertible {
    case permanent, weak, perContainer

    var scope: ObjectScope {
        switch self {
        case .permanent: .permanent
        case .weak: .weak
        case .perContainer: .perContainer
        }
    }

    var testDescription: String { rawValue }
}

@Suite struct EarlyPublicationTests {
    /// The app's root, with settings in `scope` (a synchronous factory) and a database whose `async` factory resolves
    /// them, then waits at `gate`; and the container to resolve from: a request's child for a per-container scope.
    private func makeContainer(
        _ scope: EPScope, gate: Gate, builds: Counter, settingsHook: Bool = false, wiringFirst: Bool = false
    ) -> (root: Container, container: Container) {
        let root = Container()
        let settings = registerSettings(in: root, scope, builds: builds)
        if settingsHook { settings.initCompleted { _, _ in } }
        root.register(EPWiring.self) { _ in EPWiring() }.initCompleted { _, wiring in wiring.isWired = true }
        root.register(EPDatabase.self) { r async throws in
            if wiringFirst { _ = try await r.resolve(EPWiring.self) }
            let settings = try await r.resolve((any EPSettings).self)
            await gate.passAsync()
            return EPDatabase(settings: settings)
        }
        return (root, scope == .perContainer ? root.makeChild() : root)
    }

    /// Registers the settings in `scope`, counting their builds.
    @discardableResult
    private func registerSettings(
        in container: Container, _ scope: EPScope, builds: Counter
    ) -> Registration<any EPSettings> {
        container.register((any EPSettings).self) { _ in
            builds.increment()
            return EPFileSettings()
        }
        .inObjectScope(scope.scope)
    }

    private func settingsStorage(_ scope: EPScope, root: Container, container: Container) throws -> InstanceStorage {
        let entry = try #require(root.entries.first { $0.key == ServiceKey((any EPSettings).self) })
        if scope == .perContainer { return container.perContainerStorage(for: entry) }
        return try #require(entry.storage)
    }

    /// Starts a synchronous resolve of the settings on a thread of its own, and returns once it has returned or waits
    /// for another resolution's build: whether it returned without waiting, and what it got (once `done` signals).
    private func resolveSettingsOnAThread(
        from container: Container, storage: InstanceStorage
    ) async -> (returnedAtOnce: Bool, result: Box<any EPSettings>, done: DispatchSemaphore) {
        let result = Box<any EPSettings>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            result.value = try? container.resolve((any EPSettings).self)
            done.signal()
        }.start()
        _ = await poll { result.value != nil || CreationCoordinator.shared.isWaited(on: storage) }
        return (result.value != nil, result, done)
    }

    /// Also while an observer watches (a tracing one, a leak check, a profile): it hears of the build before the
    /// other resolve reuses the instance.
    @Test(arguments: EPScope.allCases, [false, true])
    fileprivate func aServiceBuiltBeforeAnAsyncFactoryAwaitsIsSharedAtOnce(scope: EPScope, observed: Bool) async throws
    {
        let gate = Gate()
        let builds = Counter()
        let (root, container) = makeContainer(scope, gate: gate, builds: builds)
        let events = EPEvents()
        if observed { root.addObserver(events) }
        let storage = try settingsStorage(scope, root: root, container: container)
        let database = Task.detached { try await container.resolve(EPDatabase.self) }
        #expect(await poll { gate.hasArrivals })

        let (returnedAtOnce, result, done) = await resolveSettingsOnAThread(from: container, storage: storage)
        #expect(returnedAtOnce, "the synchronous resolve waited for the database's whole resolve")
        gate.open()
        let settings = try await database.value.settings
        done.wait()
        #expect(result.value === settings, "both got the one instance")
        #expect(builds.value == 1)
        if observed {
            #expect(events.settings == ["built", "reused"])
        }
    }

    /// A synchronous resolve that already waits for the settings when their factory returns gets them then, while the
    /// database's factory still awaits. (The settings' factory starts that resolve, on a thread of its own, and
    /// returns once it waits: it holds none of the threads tasks run on meanwhile.)
    @Test(arguments: EPScope.allCases)
    fileprivate func aResolveWaitingForTheBuildGetsItWhenItsFactoryReturns(scope: EPScope) async throws {
        let gate = Gate()
        let root = Container()
        let resolving = Box<(container: Container, storage: InstanceStorage)>()
        let waiter = Box<any EPSettings>()
        let waited = Flag()
        let done = DispatchSemaphore(value: 0)
        root.register((any EPSettings).self) { _ in
            guard let (container, storage) = resolving.value else { throw UnexpectedResolve() }
            Thread {
                waiter.value = try? container.resolve((any EPSettings).self)
                done.signal()
            }.start()
            waited.isOn = waitUntilAThreadWaits(on: storage)
            return EPFileSettings()
        }
        .inObjectScope(scope.scope)
        root.register(EPDatabase.self) { r async throws in
            let settings = try await r.resolve((any EPSettings).self)
            await gate.passAsync()
            return EPDatabase(settings: settings)
        }
        let container = scope == .perContainer ? root.makeChild() : root
        let storage = try settingsStorage(scope, root: root, container: container)
        resolving.value = (container, storage)
        let database = Task.detached { try await container.resolve(EPDatabase.self) }
        #expect(await poll { gate.hasArrivals })
        #expect(waited.isOn, "the thread waited for the settings' factory")
        #expect(
            await poll { waiter.value != nil },
            "the waiting resolve got the settings while the database's factory awaits")
        gate.open()
        let settings = try await database.value.settings
        done.wait()
        #expect(waiter.value === settings)
        #expect(CreationCoordinator.shared.waitingCounts(for: storage) == (0, 0))
    }

    /// What is not complete yet waits for the resolve to end, as before: a service with an `initCompleted` hook, or
    /// one built while another's hook waits to run.
    @Test(arguments: [(true, false), (false, true)])
    func aServiceWhoseHooksHaveNotRunIsSharedOnlyWhenTheResolveEnds(ownHook: Bool, hookBefore: Bool) async throws {
        let gate = Gate()
        let builds = Counter()
        let (root, container) = makeContainer(
            .permanent, gate: gate, builds: builds, settingsHook: ownHook, wiringFirst: hookBefore)
        let storage = try settingsStorage(.permanent, root: root, container: container)
        let database = Task.detached { try await container.resolve(EPDatabase.self) }
        #expect(await poll { gate.hasArrivals })

        let (returnedAtOnce, result, done) = await resolveSettingsOnAThread(from: container, storage: storage)
        #expect(!returnedAtOnce, "the thread waits for the database's resolve to run the hooks")
        gate.open()
        let settings = try await database.value.settings
        done.wait()
        #expect(result.value === settings)
        #expect(builds.value == 1)
    }

    /// A resolve that fails after publishing a service early leaves it published: it was complete, and the next
    /// resolve shares it rather than building another.
    @Test func aServicePublishedEarlyStaysWhenTheResolveFailsLater() async throws {
        struct Unreachable: Error {}
        let builds = Counter()
        let container = Container()
        registerSettings(in: container, .permanent, builds: builds)
        container.register(EPDatabase.self) { r async throws in
            _ = try await r.resolve((any EPSettings).self)
            await Task.yield()
            throw Unreachable()
        }
        let error = await asyncResolutionError { try await container.resolve(EPDatabase.self) }
        #expect(error?.underlying is Unreachable)
        let first = try resolveSynchronously((any EPSettings).self, from: container)
        let second = try await container.resolve((any EPSettings).self)
        #expect(first === second)
        #expect(builds.value == 1, "the settings were built \(builds.value) times")
    }

    /// Many tasks resolving synchronously, more than Swift has threads for tasks, while an `async` resolve that built
    /// what they need awaits: they all get it, and the `async` resolve goes on.
    @Test func moreSynchronousResolvesInTasksThanThreadsDoNotStopAnAwaitingResolve() async throws {
        // Were they to wait, they would hold every thread a time limit needs to end the test: the watchdog has one of
        // its own.
        let watchdog = Watchdog("synchronous resolves in tasks and an awaiting resolve", seconds: Watchdog.patience)
        defer { watchdog.disarm() }
        let builds = Counter()
        let container = Container()
        registerSettings(in: container, .permanent, builds: builds)
        let started = Flag()
        container.register(EPDatabase.self) { r async throws in
            let settings = try await r.resolve((any EPSettings).self)
            started.isOn = true
            // Resuming needs one of the threads the tasks below run on.
            try await Task.sleep(nanoseconds: 20_000_000)
            return EPDatabase(settings: settings)
        }
        let database = Task { try await container.resolve(EPDatabase.self) }
        #expect(await poll { started.isOn })
        let tasks = 4 * ProcessInfo.processInfo.activeProcessorCount + 2
        let names = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<tasks {
                group.addTask { try resolveSynchronously((any EPSettings).self, from: container).name }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(names == Array(repeating: "file", count: tasks))
        #expect(try await database.value.settings.name == "file")
        #expect(builds.value == 1)
    }
}
