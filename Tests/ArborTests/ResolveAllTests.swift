import Arbor
import Foundation
import Testing

// `resolveAll(_:)` resolves every registration of a type without runtime arguments that a container sees, in the
// order each name was first registered from the root down, each by its own scope, within the resolution that asks.

private protocol APlugin: AnyObject, Sendable {
    var id: String { get }
}

private final class NamedPlugin: APlugin {
    let id: String
    init(_ id: String) { self.id = id }
}

private final class UsingPlugin: APlugin {
    let id: String
    let log: ALog
    init(_ id: String, log: ALog) {
        self.id = id
        self.log = log
    }
}

private final class ALog: Sendable {}

private final class AEditor: Sendable {
    let plugins: [any APlugin]
    let log: ALog
    init(plugins: [any APlugin], log: ALog) {
        self.plugins = plugins
        self.log = log
    }
}

private func register(_ id: String, in container: Container, name: String? = nil) {
    container.register((any APlugin).self, name: name) { _ in NamedPlugin(id) }
}

private func ids(_ plugins: [any APlugin]) -> [String] { plugins.map(\.id) }

@Suite struct ResolveAllTests {
    @Test func everyNameInTheOrderItWasFirstRegistered() throws {
        let container = Container()
        register("spelling", in: container, name: "spelling")
        register("default", in: container)
        register("grammar", in: container, name: "grammar")
        register("spelling 2", in: container, name: "spelling")  // replaces, keeps its place
        #expect(try ids(container.resolveAll((any APlugin).self)) == ["spelling 2", "default", "grammar"])

        container.unregister((any APlugin).self, name: "spelling")
        register("spelling 3", in: container, name: "spelling")  // new after removal: goes last
        #expect(try ids(container.resolveAll((any APlugin).self)) == ["default", "grammar", "spelling 3"])
    }

    @Test func nothingRegisteredIsAnEmptyArrayButAnArrayIsNotDerived() throws {
        let container = Container()
        #expect(try container.resolveAll((any APlugin).self).isEmpty)
        let error = #expect(throws: ResolutionError.self) { try container.resolve([any APlugin].self) }
        #expect(error?.kind == .notRegistered, "a missing array registration is still an error")
    }

    @Test func registrationsWithRuntimeArgumentsAreLeftOut() throws {
        let container = Container()
        register("plain", in: container)
        container.register((any APlugin).self, name: "configured") { (_, id: String) in NamedPlugin(id) }
        #expect(try ids(container.resolveAll((any APlugin).self)) == ["plain"])
    }

    @Test func aChildHidesItsAncestorsNameInItsPlaceAndAddsItsOwnAfter() throws {
        let root = Container()
        register("root a", in: root, name: "a")
        register("root b", in: root, name: "b")
        let middle = root.makeChild()
        register("middle c", in: middle, name: "c")
        let leaf = middle.makeChild()
        register("leaf d", in: leaf, name: "d")
        register("leaf a", in: leaf, name: "a")

        #expect(try ids(leaf.resolveAll((any APlugin).self)) == ["leaf a", "root b", "middle c", "leaf d"])
        #expect(try ids(middle.resolveAll((any APlugin).self)) == ["root a", "root b", "middle c"])
        #expect(try ids(root.resolveAll((any APlugin).self)) == ["root a", "root b"])
    }

    @Test func eachElementKeepsItsOwnScope() throws {
        let container = Container()
        container.register((any APlugin).self, name: "shared") { _ in NamedPlugin("shared") }.inObjectScope(.permanent)
        container.register((any APlugin).self, name: "fresh") { _ in NamedPlugin("fresh") }
        let first = try container.resolveAll((any APlugin).self)
        let second = try container.resolveAll((any APlugin).self)
        #expect(first[0] === second[0], "the permanent plugin is the one instance")
        #expect(first[1] !== second[1], "the transient plugin is new each time")
    }

    @Test func fromAFactoryTheElementsJoinItsResolution() throws {
        let container = Container()
        container.register(ALog.self) { _ in ALog() }.inObjectScope(.graph)
        for id in ["a", "b"] {
            container.register((any APlugin).self, name: id) { r in UsingPlugin(id, log: try r.resolve()) }
        }
        container.register(AEditor.self) { r in
            AEditor(plugins: try r.resolveAll((any APlugin).self), log: try r.resolve())
        }
        let editor = try container.resolve(AEditor.self)
        #expect(ids(editor.plugins) == ["a", "b"])
        for plugin in editor.plugins {
            #expect((plugin as? UsingPlugin)?.log === editor.log, "one graph-scoped log for the whole graph")
        }
        let other = try container.resolve(AEditor.self)
        #expect(other.log !== editor.log)
    }

    @Test func aCycleThroughTheCollectionThrowsWithThePath() throws {
        let container = Container()
        container.register(AEditor.self) { r in AEditor(plugins: try r.resolveAll((any APlugin).self), log: ALog()) }
        container.register((any APlugin).self, name: "looping") { r in
            _ = try r.resolve(AEditor.self)
            return NamedPlugin("looping")
        }
        let error = #expect(throws: ResolutionError.self) { try container.resolve(AEditor.self) }
        #expect(error?.kind == .circularDependency)
        #expect(
            error?.path == [
                ServiceKey(AEditor.self), ServiceKey((any APlugin).self, name: "looping"), ServiceKey(AEditor.self),
            ])
    }

    @Test func theElementsCountTowardsTheDepth() throws {
        let container = Container()
        container.register(ALog.self) { _ in ALog() }
        container.register((any APlugin).self) { r in UsingPlugin("a", log: try r.resolve()) }
        container.register(AEditor.self) { r in AEditor(plugins: try r.resolveAll((any APlugin).self), log: ALog()) }
        container.maxResolutionDepth = 2
        #expect(try container.resolve(AEditor.self).plugins.count == 1, "editor 0, plugin 1, log 2")
        container.maxResolutionDepth = 1
        let error = #expect(throws: ResolutionError.self) { try container.resolve(AEditor.self) }
        #expect(error?.kind == .depthLimitExceeded)
        #expect(error?.path == [ServiceKey(AEditor.self), ServiceKey((any APlugin).self), ServiceKey(ALog.self)])
    }

    @Test func aFailingElementThrowsItsOwnError() throws {
        let container = Container()
        container.register((any APlugin).self, name: "needs log") { r in UsingPlugin("x", log: try r.resolve()) }
        let error = #expect(throws: ResolutionError.self) { try container.resolveAll((any APlugin).self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.key == ServiceKey(ALog.self))
        #expect(error?.path == [ServiceKey((any APlugin).self, name: "needs log"), ServiceKey(ALog.self)])
    }

    @Test func aForwardedTypeIsAnElement() throws {
        let container = Container()
        container.register(NamedPlugin.self) { _ in NamedPlugin("forwarded") }
            .inObjectScope(.permanent)
            .implements((any APlugin).self, name: "forwarded")
        register("direct", in: container, name: "direct")
        let plugins = try container.resolveAll((any APlugin).self)
        #expect(ids(plugins) == ["forwarded", "direct"])
        #expect(plugins[0] === (try container.resolve(NamedPlugin.self)))
    }

    @Test func aRegisteredArrayMakesTheCollectionLazy() throws {
        let container = Container()
        var built = 0
        let counter = UncheckedBox { built += 1 }
        container.register((any APlugin).self, name: "a") { _ in
            counter.value()
            return NamedPlugin("a")
        }
        container.register([any APlugin].self) { r in try r.resolveAll((any APlugin).self) }
        let lazy = try container.resolve(Lazy<[any APlugin]>.self)
        #expect(built == 0)
        #expect(ids(try lazy.instance) == ["a"])
        #expect(built == 1)
    }

    @Test func aClosedContainerSaysSo() throws {
        let container = Container()
        register("a", in: container)
        container.close()
        let error = #expect(throws: ResolutionError.self) { try container.resolveAll((any APlugin).self) }
        #expect(error?.kind == .containerClosed)
        let text = error.map(String.init(describing:)) ?? ""
        #expect(text.hasPrefix("Arbor could not resolve all APlugin registrations: the container was closed."))
    }

    @Test func asyncFactoriesAndAsyncResolvers() async throws {
        let container = Container()
        container.register(ALog.self) { _ async in ALog() }.inObjectScope(.graph)
        container.register((any APlugin).self, name: "async") { r async throws in
            UsingPlugin("async", log: try await r.resolve())
        }
        container.register((any APlugin).self, name: "sync") { _ in NamedPlugin("sync") }
        container.register(AEditor.self) { r async throws in
            AEditor(plugins: try await r.resolveAll((any APlugin).self), log: try await r.resolve())
        }
        #expect(try await ids(container.resolveAll((any APlugin).self)) == ["async", "sync"])
        let editor = try await container.resolve(AEditor.self)
        #expect((editor.plugins[0] as? UsingPlugin)?.log === editor.log)

        let error = synchronously {
            #expect(throws: ResolutionError.self) { try container.resolveAll((any APlugin).self) }
        }
        #expect(error?.kind == .asyncRequired, "a synchronous resolveAll of an async element says to await")
    }
}

private final class UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

// `resolveAll`, synchronous and `async`, while another thread unregisters and registers plugins again: it never
// throws for a plugin that went away in between, lists each name at most once, and leaves out only names the other
// thread was replacing while the collection was resolved (the names are read first, then each one resolved: one gone
// when the names were read, another gone when its turn came).
@Suite struct ResolveAllRaceTests {
    /// The rounds the churning thread has begun.
    private final class Progress: @unchecked Sendable {
        private let lock = NSLock()
        private var begun = 0
        var rounds: Int { lock.withLock { begun } }
        func begin(_ round: Int) { lock.withLock { begun = round + 1 } }
    }

    @Test func aPluginUnregisteredWhileTheCollectionIsResolvedIsLeftOut() async throws {
        let container = Container()
        let names = (0..<8).map { "p\($0)" }
        for name in names {
            container.register((any APlugin).self, name: name) { _ in NamedPlugin(name) }
        }
        let rounds = 2_000
        let progress = Progress()
        async let churn: Void = Task.detached {
            for round in 0..<rounds {
                progress.begin(round)
                let name = names[round % names.count]
                container.unregister((any APlugin).self, name: name)
                container.register((any APlugin).self, name: name) { _ in NamedPlugin(name) }
            }
        }.value
        var collections = 0
        for round in 0..<rounds {
            // The round in progress when the collection began, and every round begun until it ended.
            let first = max(progress.rounds - 1, 0)
            let plugins =
                round.isMultiple(of: 2)
                ? try synchronously { try container.resolveAll((any APlugin).self) }
                : try await container.resolveAll((any APlugin).self)
            let replaced = Set((first..<max(progress.rounds, first + 1)).map { names[$0 % names.count] })
            let found = plugins.map(\.id)
            #expect(Set(found).count == found.count, "each name once: \(found)")
            let missing = Set(names).subtracting(found)
            #expect(missing.isSubset(of: replaced), "only names being replaced are missing: \(missing), \(replaced)")
            collections += 1
        }
        await churn
        #expect(collections == rounds)
        #expect(try await container.resolveAll((any APlugin).self).count == names.count)
    }
}
