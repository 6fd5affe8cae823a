import Arbor
import ArborTestSupport
import Dispatch
import Foundation
import Testing

// Cycles through resolves that a factory's resolver makes from another task or thread: an `async let` or a task
// group in an `async` factory, a thread a synchronous factory waits for. Each such resolve is a resolution of its
// own; Arbor follows the chain of them, so the cycle throws `.circularDependency` instead of building without end or
// waiting for ever. Each test has a time limit: without the check, the permanent cases never end. It is the
// watchdog's patience (`Watchdog.patience`, in whole minutes), not less: an `async` test may wait that long for one of
// Swift's threads for tasks while a long test runs alongside, and a shorter limit could not tell that from a hang.

private protocol CTHub: AnyObject, Sendable {}
private final class CTHubImpl: CTHub {
    let spoke: CTSpoke
    init(spoke: CTSpoke) { self.spoke = spoke }
}
private final class CTSpoke: Sendable {
    let hub: (any CTHub)?
    init(hub: (any CTHub)?) { self.hub = hub }
}
private final class CTLeft: Sendable {}
private final class CTRight: Sendable {}
private final class CTShared: Sendable {}
private final class CTPair: Sendable {
    let left: CTLeft
    let right: CTRight
    init(left: CTLeft, right: CTRight) { (self.left, self.right) = (left, right) }
}

@Suite(.timeLimit(.minutes(Int((Watchdog.patience / 60).rounded(.up))))) struct ChildTaskCycleTests {
    enum Scope: String, CaseIterable, Sendable {
        case graph, permanent, weak, perContainer
        var objectScope: ObjectScope {
            switch self {
            case .graph: .graph
            case .permanent: .permanent
            case .weak: .weak
            case .perContainer: .perContainer
            }
        }
    }

    /// The hub's factory resolves its spoke in a child task, through its resolver; the spoke's resolves the hub.
    @Test(arguments: Scope.allCases)
    func aCycleThroughAnAsyncLetThrows(_ scope: Scope) async throws {
        let container = Container()
        let hubs = Counter()
        container.register((any CTHub).self) { r async throws in
            hubs.increment()
            async let spoke: CTSpoke = r.resolve()
            return CTHubImpl(spoke: try await spoke)
        }.inObjectScope(scope.objectScope)
        container.register(CTSpoke.self) { r async throws in CTSpoke(hub: try await r.resolve((any CTHub).self)) }

        let error = await #expect(throws: ResolutionError.self) { try await container.resolve((any CTHub).self) }
        #expect(error?.kind == .circularDependency)
        #expect("\(error.map(String.init(describing:)) ?? "")".contains("another task"))
        #expect(hubs.value <= 2, "the cycle went round \(hubs.value) times")
        // Nothing was kept: with the cycle broken, the hub builds.
        container.register(CTSpoke.self) { _ in CTSpoke(hub: nil) }
        _ = try await container.resolve((any CTHub).self)
    }

    @Test(arguments: Scope.allCases)
    func aCycleThroughATaskGroupThrows(_ scope: Scope) async throws {
        let container = Container()
        container.register((any CTHub).self) { r async throws in
            let spoke = try await withThrowingTaskGroup(of: CTSpoke.self) { group in
                group.addTask { try await r.resolve(CTSpoke.self) }
                return try await group.next()!
            }
            return CTHubImpl(spoke: spoke)
        }.inObjectScope(scope.objectScope)
        container.register(CTSpoke.self) { r async throws in CTSpoke(hub: try await r.resolve((any CTHub).self)) }

        let error = await #expect(throws: ResolutionError.self) { try await container.resolve((any CTHub).self) }
        #expect(error?.kind == .circularDependency)
    }

    @Test func aCycleThroughASynchronousResolveInAChildTaskThrows() async throws {
        let container = Container()
        container.register((any CTHub).self) { r async throws in
            async let spoke = Task { try r.resolve(CTSpoke.self) }.value  // the synchronous resolve, in a task
            return CTHubImpl(spoke: try await spoke)
        }.inObjectScope(.permanent)
        container.register(CTSpoke.self) { r in CTSpoke(hub: try r.resolve((any CTHub).self)) }

        let error = await #expect(throws: ResolutionError.self) { try await container.resolve((any CTHub).self) }
        #expect(error?.kind == .circularDependency)
    }

    /// A synchronous factory that waits for a thread resolving through its resolver. (Not graph-scoped: a thread
    /// started by hand does not inherit the lineage, as a child task does, so that cycle is not seen; the article
    /// says so.) The resolve runs on a thread of its own too, and the test waits for it suspended: the factory blocks
    /// its thread for as long as the other thread resolves, which must not be one of Swift's threads for tasks.
    @Test(arguments: [Scope.permanent, .weak, .perContainer])
    func aCycleThroughAThreadTheFactoryWaitsForThrows(_ scope: Scope) async throws {
        let container = Container()
        container.register((any CTHub).self) { r in
            CTHubImpl(spoke: try onAnotherThread { try r.resolve(CTSpoke.self) })
        }.inObjectScope(scope.objectScope)
        container.register(CTSpoke.self) { r in CTSpoke(hub: try r.resolve((any CTHub).self)) }

        let outcome = await onAThreadOfItsOwn { Result { try container.resolve((any CTHub).self) } }
        let error = resolutionError { try outcome.get() }
        #expect(error?.kind == .circularDependency)
        #expect(error.map { "\($0)".contains("another thread") } == true)
    }

    /// Child tasks that resolve other services through the resolver, which share a permanent dependency: no cycle,
    /// and one instance of it.
    @Test func childTasksResolvingOtherServicesStillWork() async throws {
        let container = Container()
        let shared = Counter()
        container.register(CTShared.self) { _ in
            shared.increment()
            return CTShared()
        }.inObjectScope(.permanent)
        container.register(CTLeft.self) { r in
            _ = try r.resolve(CTShared.self); return CTLeft()
        }
        container.register(CTRight.self) { r async throws in
            _ = try await r.resolve(CTShared.self); return CTRight()
        }
        container.register(CTPair.self) { r async throws in
            async let left: CTLeft = r.resolve()
            async let right: CTRight = r.resolve()
            return CTPair(left: try await left, right: try await right)
        }.inObjectScope(.permanent)

        let pair = try await container.resolve(CTPair.self)
        #expect(try await container.resolve(CTPair.self) === pair)
        #expect(shared.value == 1)
    }

    /// The same service resolved in two sibling child tasks is no cycle: neither resolve is inside the other.
    @Test func siblingChildTasksMayResolveTheSameService() async throws {
        let container = Container()
        container.register(CTLeft.self) { _ in CTLeft() }.inObjectScope(.permanent)
        container.register(CTPair.self) { r async throws in
            async let first: CTLeft = r.resolve()
            async let second: CTLeft = r.resolve()
            let (a, b) = try await (first, second)
            #expect(a === b)
            return CTPair(left: a, right: CTRight())
        }
        _ = try await container.resolve(CTPair.self)
    }
}

/// Runs `body` on a thread of its own and waits for it, at most a minute: a deadlock fails the test, never hangs it.
/// (`DispatchQueue.sync` would run it on the caller's thread.)
private func onAnotherThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) throws -> Result {
    let outcome = OutcomeBox<Result>()
    guard runThreads(1, timeout: 60, { _ in outcome.result = Swift.Result(catching: body) }) else {
        throw CancellationError()  // the resolve on the thread never returned
    }
    return try outcome.result!.get()
}

private final class OutcomeBox<Value: Sendable>: @unchecked Sendable {
    var result: Result<Value, any Error>?  // written before the thread finishes, read after
}
