import Arbor
import ArborTestSupport
import Foundation
import Testing

// `async` factories and hooks, resolved with `try await`: the semantics of a synchronous resolve — lifetimes, graph
// sharing, deferred hooks in creation order, errors with paths, rollback — in graphs that mix both kinds.

private final class AConfig: Sendable {
    let url: String
    init(url: String) { self.url = url }
}

private final class ADatabase: Sendable {
    let config: AConfig
    init(config: AConfig) { self.config = config }
    static func connect(_ config: AConfig) async throws -> ADatabase {
        await Task.yield()
        return ADatabase(config: config)
    }
}

private final class AClock: @unchecked Sendable {}

private final class ARepository: @unchecked Sendable {
    let database: ADatabase
    let clock: AClock
    init(database: ADatabase, clock: AClock) {
        self.database = database
        self.clock = clock
    }
}

/// A node of a mixed graph: `left` and `right` share one `shared` within a resolve.
private final class ANode: @unchecked Sendable {
    let label: String
    let children: [ANode]
    var wired: ANode?
    init(_ label: String, children: [ANode] = []) {
        self.label = label
        self.children = children
    }
}

private final class AOrder: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [String] = []
    func record(_ event: String) { lock.withLock { events.append(event) } }
    var values: [String] { lock.withLock { events } }
}

private struct AFailure: Error {}

@Suite struct AsyncResolutionTests {
    @Test func anAsyncFactoryIsResolvedWithTryAwait() async throws {
        let container = Container()
        container.register(AConfig.self) { _ in AConfig(url: "db://main") }
        container.register(ADatabase.self) { r async throws in try await ADatabase.connect(try r.resolve()) }
            .inObjectScope(.permanent)
        container.register(AClock.self) { _ in AClock() }
        container.register(ARepository.self) { r async throws in
            ARepository(database: try await r.resolve(), clock: try await r.resolve())
        }
        let repository = try await container.resolve(ARepository.self)
        #expect(repository.database.config.url == "db://main")
        #expect(try await container.resolve(ADatabase.self) === repository.database)
        #expect(try await container.resolve(ARepository.self) !== repository)
    }

    @Test func namesAndRuntimeArgumentsWorkAsForSynchronousFactories() async throws {
        let container = Container()
        container.register(AConfig.self, name: "replica") { _ async in AConfig(url: "db://replica") }
        container.register(AConfig.self) { (_, url: String) async in AConfig(url: url) }
        container.register(AConfig.self, name: "pair") { (_, host: String, port: Int) async in
            AConfig(url: "\(host):\(port)")
        }
        #expect(try await container.resolve(AConfig.self, name: "replica").url == "db://replica")
        #expect(try await container.resolve(AConfig.self, arguments: "db://given").url == "db://given")
        #expect(try await container.resolve(AConfig.self, name: "pair", arguments: "host", 5432).url == "host:5432")
        let inferred: AConfig = try await container.resolve(name: "replica")
        #expect(inferred.url == "db://replica")
    }

    @Test func everyLifetimeKeepsItsRulesInAnAsyncResolve() async throws {
        let container = Container()
        let builds = Counter()
        func register(_ name: String, _ scope: ObjectScope) {
            container.register(ANode.self, name: name) { _ async in
                builds.increment()
                return ANode(name)
            }
            .inObjectScope(scope)
        }
        register("transient", .transient)
        register("graph", .graph)
        register("weak", .weak)
        register("permanent", .permanent)
        register("perContainer", .perContainer)
        container.register(ANode.self, name: "root") { r async throws in
            var children: [ANode] = []
            for name in ["transient", "graph", "weak", "permanent", "perContainer"] {
                children.append(try await r.resolve(ANode.self, name: name))
                children.append(try await r.resolve(ANode.self, name: name))
            }
            return ANode("root", children: children)
        }
        let first = try await container.resolve(ANode.self, name: "root")
        let pairs = stride(from: 0, to: 10, by: 2).map { (first.children[$0], first.children[$0 + 1]) }
        #expect(pairs[0].0 !== pairs[0].1, "transient: a new one each time")
        for pair in pairs.dropFirst() { #expect(pair.0 === pair.1, "\(pair.0.label): shared within the resolve") }
        let second = try await container.resolve(ANode.self, name: "root")
        #expect(second.children[2] !== first.children[2], "graph: one per resolve")
        #expect(second.children[4] === first.children[4], "weak: shared while held")
        #expect(second.children[6] === first.children[6], "permanent: one")
        #expect(second.children[8] === first.children[8], "per-container: one per container")
        let child = container.makeChild()
        #expect(try await child.resolve(ANode.self, name: "perContainer") !== first.children[8])
        #expect(try await child.resolve(ANode.self, name: "permanent") === first.children[6])
    }

    @Test func aGraphMixesSynchronousAndAsyncFactoriesAndSharesGraphInstances() async throws {
        let container = Container()
        container.register(ANode.self, name: "shared") { _ in ANode("shared") }
        container.register(ANode.self, name: "left") { r async throws in
            ANode("left", children: [try await r.resolve(ANode.self, name: "shared")])
        }
        container.register(ANode.self, name: "right") { r in
            ANode("right", children: [try r.resolve(ANode.self, name: "shared")])
        }
        container.register(ANode.self, name: "root") { r async throws in
            ANode(
                "root",
                children: [
                    try await r.resolve(ANode.self, name: "left"), try await r.resolve(ANode.self, name: "right"),
                ])
        }
        let root = try await container.resolve(ANode.self, name: "root")
        #expect(root.children[0].children[0] === root.children[1].children[0])
        let again = try await container.resolve(ANode.self, name: "root")
        #expect(again.children[0].children[0] !== root.children[0].children[0])
    }

    @Test func hooksRunAfterTheGraphIsBuiltInCreationOrderAndMayBeAsync() async throws {
        let container = Container()
        let order = AOrder()
        container.register(ANode.self, name: "parent") { r async throws in
            order.record("parent factory")
            return ANode("parent", children: [try await r.resolve(ANode.self, name: "child")])
        }
        .initCompleted { _, _ async in
            await Task.yield()
            order.record("parent hook")
        }
        container.register(ANode.self, name: "child") { _ in
            order.record("child factory")
            return ANode("child")
        }
        .initCompleted { r, child async throws in
            order.record("child hook")
            child.wired = try await r.resolve(ANode.self, name: "parent")
        }
        let parent = try await container.resolve(ANode.self, name: "parent")
        #expect(order.values == ["parent factory", "child factory", "child hook", "parent hook"])
        #expect(parent.children[0].wired === parent, "the hook shares the resolution's graph")
    }

    @Test func aSynchronousResolveOfAnAsyncServiceThrowsAndSaysToAwait() throws {
        let container = Container()
        container.register(AConfig.self) { _ in AConfig(url: "db://main") }
        container.register(ADatabase.self) { r async throws in try await ADatabase.connect(try r.resolve()) }
        container.register(AClock.self) { _ in AClock() }
        container.register(ARepository.self) { r in ARepository(database: try r.resolve(), clock: try r.resolve()) }

        let direct = try #require(resolutionError { try container.resolve(ADatabase.self) })
        #expect(direct.kind == .asyncRequired)
        #expect(direct.path == [ServiceKey(ADatabase.self)])
        #expect(direct.description.contains("try await"))

        // A synchronous factory cannot wait for it: the path shows which one asked.
        let nested = try #require(resolutionError { try container.resolve(ARepository.self) })
        #expect(nested.kind == .asyncRequired)
        #expect(nested.path == [ServiceKey(ARepository.self), ServiceKey(ADatabase.self)])
    }

    @Test func aSynchronousResolveOfAServiceWithAnAsyncHookThrows() throws {
        let container = Container()
        container.register(AClock.self) { _ in AClock() }.initCompleted { _, _ async in }
        let error = try #require(resolutionError { try container.resolve(AClock.self) })
        #expect(error.kind == .asyncRequired)
        #expect(error.description.contains("initCompleted"))
    }

    @Test func cyclesAndTheDepthLimitThrowWithThePath() async throws {
        let container = Container()
        container.register(ANode.self, name: "a") { r async throws in
            ANode("a", children: [try await r.resolve(ANode.self, name: "b")])
        }
        container.register(ANode.self, name: "b") { r async throws in
            ANode("b", children: [try await r.resolve(ANode.self, name: "a")])
        }
        let cycle = try await #require(asyncResolutionError { try await container.resolve(ANode.self, name: "a") })
        #expect(cycle.kind == .circularDependency)
        #expect(cycle.path.map(\.name) == ["a", "b", "a"])

        let deep = Container()
        deep.maxResolutionDepth = 3
        for level in 0..<10 {
            deep.register(ANode.self, name: "\(level)") { r async throws in
                ANode("\(level)", children: [try await r.resolve(ANode.self, name: "\(level + 1)")])
            }
        }
        let tooDeep = try await #require(asyncResolutionError { try await deep.resolve(ANode.self, name: "0") })
        #expect(tooDeep.kind == .depthLimitExceeded)
        #expect(tooDeep.path.count == 5)
    }

    /// A failed `async` resolve keeps what it had published, complete — its factory returned, and no hook of it or of
    /// anything built before it was left to run — and nothing else: a permanent dependency with an `initCompleted`
    /// hook is published only when the resolve ends, so the next resolve builds it again.
    @Test(arguments: [false, true])
    func aFailedAsyncFactoryKeepsOnlyWhatWasCompleteAndTheNextResolveStartsClean(hooked: Bool) async throws {
        let container = Container()
        let builds = Counter()
        let failing = Counter()
        let permanent = container.register(ANode.self, name: "permanent") { _ async in
            builds.increment()
            return ANode("permanent")
        }
        .inObjectScope(.permanent)
        if hooked { permanent.initCompleted { _, _ in } }
        container.register(ANode.self, name: "root") { r async throws in
            let node = ANode("root", children: [try await r.resolve(ANode.self, name: "permanent")])
            if failing.increment() == 1 { throw AFailure() }
            return node
        }
        let error = try await #require(asyncResolutionError { try await container.resolve(ANode.self, name: "root") })
        #expect(error.kind == .factoryFailed)
        #expect(error.reason.underlyingError is AFailure)
        let root = try await container.resolve(ANode.self, name: "root")
        #expect(
            builds.value == (hooked ? 2 : 1),
            "the failed resolve's permanent instance was \(builds.value == 1 ? "kept" : "not kept")")
        #expect(try await container.resolve(ANode.self, name: "permanent") === root.children[0])
    }

    // `try await r.resolve()` in an `async` factory awaits a plain dependency's factory in its own frame
    // (AsyncPlainPath.swift): the same errors, paths, graph sharing and clean state as through the requirement.
    @Test func aDependencyAwaitedInTheFactorysOwnFrameKeepsTheResolvesRules() async throws {
        let container = Container()
        let failing = Counter()
        container.register(ANode.self, name: "shared") { _ async in ANode("shared") }.inObjectScope(.graph)
        container.register(ANode.self, name: "flaky") { r async throws in
            let shared: ANode = try await r.resolve(name: "shared")
            if failing.increment() == 1 { throw AFailure() }
            return ANode("flaky", children: [shared])
        }
        .inObjectScope(.transient)
        container.register(ANode.self, name: "root") { r async throws in
            ANode(
                "root",
                children: [try await r.resolve(name: "shared"), try await r.resolve(ANode.self, name: "flaky")])
        }
        let error = try await #require(asyncResolutionError { try await container.resolve(ANode.self, name: "root") })
        #expect(error.kind == .factoryFailed)
        #expect(error.path.map(\.name) == ["root", "flaky"], "the failing dependency's path")
        let root = try await container.resolve(ANode.self, name: "root")
        #expect(root.children[0] === root.children[1].children[0], "one graph instance, awaited in two factories")
        let other = try await container.resolve(ANode.self, name: "root")
        #expect(other.children[0] !== root.children[0], "a new graph for the next resolve")

        container.register(ANode.self, name: "self") { r async throws in
            ANode("self", children: [try await r.resolve(name: "self")])
        }
        let cycle = try await #require(asyncResolutionError { try await container.resolve(ANode.self, name: "self") })
        #expect(cycle.kind == .circularDependency)
        #expect(cycle.path.map(\.name) == ["self", "self"])
    }

    @Test func aChildsOverrideReachesGraphServicesButNotThePermanentOnesItsParentOwns() async throws {
        let app = Container()
        app.register(AConfig.self) { _ in AConfig(url: "db://app") }
        app.register(ADatabase.self) { r async throws in try await ADatabase.connect(try r.resolve()) }
            .inObjectScope(.permanent)
        app.register(ANode.self) { r async throws in
            ANode((try await r.resolve(AConfig.self)).url)
        }
        let test = app.makeChild()
        test.register(AConfig.self) { _ async in AConfig(url: "db://test") }
        #expect(try await test.resolve(ANode.self).label == "db://test", "a graph service sees the child's override")
        let database = try await test.resolve(ADatabase.self)
        #expect(database.config.url == "db://app", "a permanent service is built from the container that owns it")
        #expect(try await app.resolve(ADatabase.self) === database)
    }

    @Test func aFailingAsyncHookKeepsNothingAndSaysWhichHookThrew() async throws {
        let container = Container()
        let failures = Counter()
        container.register(ANode.self, name: "permanent") { _ async in ANode("permanent") }
            .inObjectScope(.permanent)
            .initCompleted { _, _ async throws in
                if failures.increment() == 1 { throw AFailure() }
            }
        let error = try #require(
            await asyncResolutionError { try await container.resolve(ANode.self, name: "permanent") })
        #expect(error.kind == .factoryFailed)
        #expect(error.description.contains("initCompleted"))
        let first = try await container.resolve(ANode.self, name: "permanent")
        #expect(try await container.resolve(ANode.self, name: "permanent") === first)
        #expect(failures.value == 2, "the failed instance was not kept, so its hook ran again for the new one")
    }

    @Test func aLazyOfAnAsyncServiceSaysToAwaitWhenUsed() async throws {
        let container = Container()
        container.register(AConfig.self) { _ async in AConfig(url: "db://async") }
        let lazy = try await container.resolve(Lazy<AConfig>.self)
        let error = try #require(resolutionError { try lazy.instance })
        #expect(error.kind == .asyncRequired)
    }

    @Test func optionalLazyAndProviderWorkInAnAsyncResolve() async throws {
        let container = Container()
        container.register(AConfig.self) { _ async in AConfig(url: "db://async") }
        container.register(AClock.self) { _ in AClock() }
        let missing = try await container.resolve(ADatabase?.self)
        #expect(missing == nil)
        let present = try await container.resolve(AConfig?.self)
        #expect(present?.url == "db://async")
        let lazy = try await container.resolve(Lazy<AClock>.self)
        #expect(try lazy.instance === lazy.instance)
        let provider = try await container.resolve(Provider<AClock>.self)
        #expect(try provider.instance !== provider.instance)
    }

    @Test func aResolverKeptFromAnAsyncFactoryStartsANewResolutionLater() async throws {
        let container = Container()
        let kept = KeptResolver()
        container.register(AClock.self) { _ in AClock() }
        container.register(ANode.self) { r async in
            kept.resolver = r
            return ANode("node")
        }
        _ = try await container.resolve(ANode.self)
        let resolver = try #require(kept.resolver)
        let first = try await resolver.resolve(AClock.self)
        let second = try synchronously { try resolver.resolve(AClock.self) }
        #expect(first !== second)
    }

    @Test func aChildTaskOfAnAsyncFactoryStartsItsOwnResolution() async throws {
        let container = Container()
        container.register(AClock.self) { _ in AClock() }  // graph scope: shared within one resolution only
        container.register(ARepository.self) { r async throws in
            let mine: AClock = try await r.resolve()
            async let fromChildTask: AClock = r.resolve()
            let theirs = try await fromChildTask
            #expect(theirs !== mine, "a child task does not join the resolution")
            return ARepository(database: ADatabase(config: AConfig(url: "")), clock: mine)
        }
        _ = try await container.resolve(ARepository.self)
    }
}

private final class KeptResolver: @unchecked Sendable {
    var resolver: (any Resolver)?
}

/// `resolutionError`, for an `async` body.
func asyncResolutionError<Result>(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Result
) async -> ResolutionError? {
    do {
        _ = try await body()
        Issue.record("expected a ResolutionError, but nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as ResolutionError {
        return error
    } catch {
        Issue.record("expected a ResolutionError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Runs `body`, a synchronous call: in `async` code, `resolve` means the `async` one, and this is how to make the
/// synchronous one instead.
func synchronously<Result>(_ body: () throws -> Result) rethrows -> Result {
    try body()
}
