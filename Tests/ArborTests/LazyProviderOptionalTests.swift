import Arbor
import Foundation
import Testing

// API.md §3 and §10.10: `Optional<T>`, `Lazy<T>` and `Provider<T>`, derived from `T`'s registration.

private protocol Engine: AnyObject { var label: String { get } }

private final class V8: Engine, Sendable {
    let label: String
    init(_ label: String = "v8") { self.label = label }
}

private final class Shared {}

private final class Part {
    let shared: Shared
    init(shared: Shared) { self.shared = shared }
}

/// Holds a `Lazy<Part>` and a `Provider<Part>` from its factory, and uses them in its hook.
private final class Machine {
    let shared: Shared
    let lazyPart: Lazy<Part>
    let parts: Provider<Part>
    var fromLazy: Part?
    var fromProvider: [Part] = []
    init(shared: Shared, lazyPart: Lazy<Part>, parts: Provider<Part>) {
        self.shared = shared
        self.lazyPart = lazyPart
        self.parts = parts
    }
}

private struct Greeting: Equatable {
    let text: String
}

private final class Holder {
    let engine: Lazy<any Engine>
    init(engine: Lazy<any Engine>) { self.engine = engine }
}

/// Keeps the resolver its factory was given, to resolve with later.
private final class ResolverKeeper: Sendable {
    let resolver: any Resolver
    init(resolver: any Resolver) { self.resolver = resolver }
}

/// Works with or without an engine.
private final class Dashboard {
    let engine: (any Engine)?
    init(engine: (any Engine)?) { self.engine = engine }
}

private final class Parent {
    let child: Child
    init(child: Child) { self.child = child }
}

private final class Child {
    let parent: Lazy<Parent>
    init(parent: Lazy<Parent>) { self.parent = parent }
}

private final class Missing {}

@Suite struct OptionalResolutionTests {
    @Test func optionalIsNilWhenNothingIsRegistered() throws {
        let container = Container()
        let engine = try container.resolve((any Engine)?.self)
        #expect(engine == nil)
    }

    /// An optional `Lazy` or `Provider` of an unregistered service is `nil`, as an optional of the service is: an
    /// optional feature resolved lazily. (It threw `.notRegistered`.) Registered, it resolves, also asynchronously.
    @Test func anOptionalLazyOrProviderOfAnUnregisteredServiceIsNil() async throws {
        let container = Container()
        #expect(try resolveSynchronously(Lazy<any Engine>?.self, from: container) == nil)
        #expect(try resolveSynchronously(Provider<any Engine>?.self, name: "spare", from: container) == nil)
        #expect(try await container.resolve(Lazy<any Engine>?.self) == nil)
        container.register((any Engine).self) { _ in V8() }
        let lazy = try #require(try resolveSynchronously(Lazy<any Engine>?.self, from: container))
        #expect(try lazy.instance.label == "v8")
        let provider = try #require(try await container.resolve(Provider<any Engine>?.self))
        #expect(try provider.instance.label == "v8")
    }

    /// A wrapper of a wrapper checks the service inside both when it is resolved, as a wrapper does: a `Lazy` of a
    /// `Lazy` of an unregistered service resolved, and failed only when used.
    @Test func aLazyOfALazyOfAnUnregisteredServiceThrowsWhenResolved() throws {
        let container = Container()
        let error = try #require(resolutionError { try container.resolve(Lazy<Lazy<any Engine>>.self) })
        #expect(error.kind == .notRegistered)
        #expect(error.key == ServiceKey((any Engine).self))
        #expect(throws: ResolutionError.self) { try container.resolve(Provider<Lazy<any Engine>>.self) }
        container.register((any Engine).self) { _ in V8() }
        let lazy = try container.resolve(Lazy<Lazy<any Engine>>.self)
        #expect(try lazy.instance.instance.label == "v8")
    }

    @Test func optionalResolvesTheRegisteredService() throws {
        let container = Container()
        container.register((any Engine).self) { _ in V8("registered") }
        let engine = try container.resolve((any Engine)?.self)
        #expect(engine?.label == "registered")
    }

    @Test func optionalOfAThrowingFactoryStillThrows() {
        let container = Container()
        container.register((any Engine).self) { _ in throw TestFailure("no fuel") }
        let error = resolutionError { try container.resolve((any Engine)?.self) }
        #expect(error?.kind == .factoryFailed)
        #expect(error?.underlying as? TestFailure == TestFailure("no fuel"))
    }

    @Test func optionalOfAServiceWithAMissingDependencyThrows() {
        let container = Container()
        container.register(Part.self) { r in Part(shared: try r.resolve()) }
        let error = resolutionError { try container.resolve(Part?.self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.key == ServiceKey(Shared.self))
        #expect(error?.path == [ServiceKey(Part.self), ServiceKey(Shared.self)])
    }

    @Test func optionalUsesNamesAndArgumentTypes() throws {
        let container = Container()
        container.register(Greeting.self, name: "formal") { (_, name: String) in Greeting(text: "Good day, \(name)") }
        #expect(
            try container.resolve(Greeting?.self, name: "formal", arguments: "Ann") == Greeting(text: "Good day, Ann"))
        #expect(try container.resolve(Greeting?.self, name: "formal") == nil)
        #expect(try container.resolve(Greeting?.self, arguments: "Ann") == nil)
        #expect(try container.resolve(Greeting?.self, name: "formal", arguments: 3) == nil)
    }

    @Test func optionalInAFactorySeesTheAncestorsRegistrations() throws {
        let parent = Container()
        let child = parent.makeChild()
        child.register(Dashboard.self) { r in Dashboard(engine: try r.resolve()) }
        #expect(try child.resolve(Dashboard.self).engine == nil)

        parent.register((any Engine).self) { _ in V8("parent") }
        #expect(try child.resolve(Dashboard.self).engine?.label == "parent")
    }

    @Test func aRegistrationOfTheOptionalItselfTakesPrecedence() throws {
        let container = Container()
        container.register((any Engine).self) { _ in V8("plain") }
        container.register((any Engine)?.self) { _ in nil }
        #expect(try container.resolve((any Engine)?.self) == nil)
    }
}

@Suite struct LazyTests {
    @Test func lazyResolvesOnceOnFirstInstance() throws {
        let container = Container()
        let built = Counter()
        container.register((any Engine).self) { _ in
            built.increment()
            return V8()
        }.inObjectScope(.transient)

        let lazy = try container.resolve(Lazy<any Engine>.self)
        #expect(built.value == 0)
        #expect(!lazy.isResolved)
        let first = try lazy.instance
        #expect(built.value == 1)
        #expect(lazy.isResolved)
        let second = try lazy.instance
        #expect(first === second)
        #expect(built.value == 1)
    }

    @Test func eachLazyIsItsOwn() throws {
        let container = Container()
        container.register((any Engine).self) { _ in V8() }.inObjectScope(.transient)
        let one = try container.resolve(Lazy<any Engine>.self)
        let other = try container.resolve(Lazy<any Engine>.self)
        #expect(one !== other)
        #expect(try one.instance !== other.instance)
    }

    @Test func lazyOfAnUnregisteredServiceThrowsWhenTheLazyIsResolved() {
        let container = Container()
        let error = resolutionError { try container.resolve(Lazy<Missing>.self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.key == ServiceKey(Missing.self))
    }

    @Test func lazyOfAnUnregisteredServiceInAFactoryThrowsWithThePath() {
        let container = Container()
        container.register(Holder.self) { r in Holder(engine: try r.resolve()) }
        let error = resolutionError { try container.resolve(Holder.self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.key == ServiceKey((any Engine).self))
        #expect(error?.path == [ServiceKey(Holder.self), ServiceKey((any Engine).self)])
    }

    @Test func lazyOfAnUnregisteredShapeListsTheRegisteredOnes() {
        let container = Container()
        container.register(Greeting.self) { (_, name: String) in Greeting(text: name) }
        let error = resolutionError { try container.resolve(Lazy<Greeting>.self, arguments: 3) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.registeredAlternatives == [ServiceKey(Greeting.self, arguments: String.self)])
    }

    @Test func lazyUsesNamesAndCapturesArguments() throws {
        let container = Container()
        container.register(Greeting.self) { _ in Greeting(text: "Hi") }
        container.register(Greeting.self, name: "formal") { (_, name: String, times: Int) in
            Greeting(text: Array(repeating: "Good day, \(name)", count: times).joined(separator: " "))
        }
        let plain = try container.resolve(Lazy<Greeting>.self)
        let formal = try container.resolve(Lazy<Greeting>.self, name: "formal", arguments: "Ann", 2)
        #expect(try plain.instance == Greeting(text: "Hi"))
        #expect(try formal.instance == Greeting(text: "Good day, Ann Good day, Ann"))
    }

    @Test func aThrowingFactoryThrowsFromInstanceAndTheNextAccessTriesAgain() throws {
        let container = Container()
        let failing = Flag(true)
        container.register((any Engine).self) { _ in
            if failing.isOn { throw TestFailure("cold") }
            return V8()
        }
        let lazy = try container.resolve(Lazy<any Engine>.self)  // the factory has not run yet
        let error = resolutionError { try lazy.instance }
        #expect(error?.kind == .factoryFailed)
        #expect(!lazy.isResolved)
        failing.isOn = false
        #expect(try lazy.instance.label == "v8")
    }

    @Test func lazyResolvesInTheContainerThatResolvedIt() throws {
        let parent = Container()
        parent.register((any Engine).self) { _ in V8("parent") }
        let child = parent.makeChild()
        child.register((any Engine).self) { _ in V8("child") }
        #expect(try child.resolve(Lazy<any Engine>.self).instance.label == "child")
        #expect(try parent.resolve(Lazy<any Engine>.self).instance.label == "parent")
    }

    @Test func lazyInAPermanentServiceResolvesFromTheOwningContainer() throws {
        let parent = Container()
        parent.register((any Engine).self) { _ in V8("parent") }
        parent.register(Holder.self) { r in Holder(engine: try r.resolve()) }.inObjectScope(.permanent)
        let child = parent.makeChild()
        child.register((any Engine).self) { _ in V8("child") }

        let holder = try child.resolve(Holder.self)
        #expect(try holder.engine.instance.label == "parent")  // the child's override never leaks upwards
    }

    @Test func lazyUsedInAHookSharesTheResolutionsGraph() throws {
        let container = Container()
        container.register(Shared.self) { _ in Shared() }  // graph, the default
        container.register(Part.self) { r in Part(shared: try r.resolve()) }
        container.register(Machine.self) { r in
            Machine(shared: try r.resolve(), lazyPart: try r.resolve(), parts: try r.resolve())
        }.initCompleted { _, machine in
            machine.fromLazy = try machine.lazyPart.instance
        }

        let machine = try container.resolve(Machine.self)
        #expect(machine.fromLazy?.shared === machine.shared)
        // Used later, the Lazy keeps what it resolved.
        #expect(try machine.lazyPart.instance === machine.fromLazy)
    }

    @Test func lazyFirstUsedAfterItsResolutionStartsANewOne() throws {
        let container = Container()
        container.register(Shared.self) { _ in Shared() }
        container.register(Part.self) { r in Part(shared: try r.resolve()) }
        container.register(Machine.self) { r in
            Machine(shared: try r.resolve(), lazyPart: try r.resolve(), parts: try r.resolve())
        }
        let machine = try container.resolve(Machine.self)
        let part = try machine.lazyPart.instance
        #expect(part.shared !== machine.shared)
    }

    @Test func lazyBreaksAConstructorCycle() throws {
        let container = Container()
        container.register(Parent.self) { r in Parent(child: try r.resolve()) }
        container.register(Child.self) { r in Child(parent: try r.resolve()) }
        let parent = try container.resolve(Parent.self)
        // Used after the resolution, the Lazy builds a new graph: a new Parent, with a new Child.
        let other = try parent.child.parent.instance
        #expect(other !== parent)
        #expect(other.child !== parent.child)
    }

    @Test func lazyInAHookReachesTheInstanceBeingBuilt() throws {
        let container = Container()
        let seen = Box<Parent>()
        container.register(Parent.self) { r in Parent(child: try r.resolve()) }
        container.register(Child.self) { r in Child(parent: try r.resolve()) }
            .initCompleted { _, child in seen.value = try child.parent.instance }
        let parent = try container.resolve(Parent.self)
        #expect(seen.value === parent)  // the graph's own Parent, not a new one
        #expect(try parent.child.parent.instance === parent)
    }

    @Test func lazyOfAnOptionalOfAnUnregisteredServiceIsNil() throws {
        let container = Container()
        let lazy = try container.resolve(Lazy<(any Engine)?>.self)
        #expect(try lazy.instance == nil)
        #expect(lazy.isResolved)
    }

    @Test func aUsedLazyNoLongerKeepsItsContainerAlive() throws {
        var container: Container? = Container()
        container!.register((any Engine).self) { _ in V8() }
        let watched = WeakRef(container!)
        let lazy = try container!.resolve(Lazy<any Engine>.self)
        container = nil
        #expect(watched.object != nil)  // the Lazy needs its container until it has resolved
        _ = try lazy.instance
        // The thread's idle resolution remembers the container it last resolved in: resolve elsewhere to let go.
        _ = try Container().resolve(Int?.self)
        #expect(watched.object == nil)
    }

    @Test func optionalLazyAndProviderFollowTypeForwarding() throws {
        let container = Container()
        container.register(V8.self) { _ in V8("forwarded") }
            .inObjectScope(.permanent)
            .implements((any Engine).self)
        let v8 = try container.resolve(V8.self)
        #expect(try container.resolve(Lazy<any Engine>.self).instance === v8)
        #expect(try container.resolve(Provider<any Engine>.self).instance === v8)
        #expect(try container.resolve((any Engine)?.self) === v8)
    }

    @Test func concurrentFirstAccessesAllGetTheSameInstance() async throws {
        let container = Container()
        container.register((any Engine).self) { _ in V8() }.inObjectScope(.transient)
        for _ in 0..<20 {
            let lazy = try await container.resolve(Lazy<any Engine>.self)
            let engines = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
                for _ in 0..<8 {
                    group.addTask { ObjectIdentifier(try lazy.instance) }
                }
                return try await group.reduce(into: Set<ObjectIdentifier>()) { $0.insert($1) }
            }
            #expect(engines.count == 1)
            #expect(engines.first == ObjectIdentifier(try lazy.instance))
        }
    }

    @Test func lazyIsSendable() throws {
        let container = Container()
        container.register((any Engine).self) { _ in V8() }
        let lazy = try container.resolve(Lazy<any Engine>.self)
        let sendable: any Sendable = lazy
        #expect(sendable is Lazy<any Engine>)
    }
}

@Suite struct ProviderTests {
    @Test func providerResolvesOnEveryInstance() throws {
        let container = Container()
        let built = Counter()
        container.register((any Engine).self) { _ in
            built.increment()
            return V8()
        }.inObjectScope(.transient)

        let provider = try container.resolve(Provider<any Engine>.self)
        #expect(built.value == 0)
        let first = try provider.instance
        let second = try provider.instance
        #expect(first !== second)
        #expect(built.value == 2)
    }

    @Test func providerOfAPermanentServiceReturnsTheSameInstance() throws {
        let container = Container()
        container.register((any Engine).self) { _ in V8() }.inObjectScope(.permanent)
        let provider = try container.resolve(Provider<any Engine>.self)
        #expect(try provider.instance === provider.instance)
        #expect(try provider.instance === container.resolve((any Engine).self))
    }

    @Test func providerUsedLaterBuildsANewGraphEachTime() throws {
        let container = Container()
        container.register(Shared.self) { _ in Shared() }
        let provider = try container.resolve(Provider<Shared>.self)
        #expect(try provider.instance !== provider.instance)
    }

    @Test func providerUsedInAHookSharesTheResolutionsGraph() throws {
        let container = Container()
        container.register(Shared.self) { _ in Shared() }
        container.register(Part.self) { r in Part(shared: try r.resolve()) }.inObjectScope(.transient)
        container.register(Machine.self) { r in
            Machine(shared: try r.resolve(), lazyPart: try r.resolve(), parts: try r.resolve())
        }.initCompleted { _, machine in
            machine.fromProvider = [try machine.parts.instance, try machine.parts.instance]
        }

        let machine = try container.resolve(Machine.self)
        #expect(machine.fromProvider.count == 2)
        #expect(machine.fromProvider[0] !== machine.fromProvider[1])  // Part is transient
        #expect(machine.fromProvider.allSatisfy { $0.shared === machine.shared })  // Shared is the graph's
    }

    @Test func providerOfAnUnregisteredServiceThrowsWhenResolved() {
        let container = Container()
        let error = resolutionError { try container.resolve(Provider<Missing>.self, name: "nope") }
        #expect(error?.kind == .notRegistered)
        #expect(error?.key == ServiceKey(Missing.self, name: "nope"))
    }

    @Test func providerUsesNamesAndCapturesArguments() throws {
        let container = Container()
        let built = Counter()
        container.register(Greeting.self, name: "counted") { (_, name: String) in
            Greeting(text: "\(name) #\(built.increment())")
        }
        let provider = try container.resolve(Provider<Greeting>.self, name: "counted", arguments: "Ann")
        #expect(try provider.instance == Greeting(text: "Ann #1"))
        #expect(try provider.instance == Greeting(text: "Ann #2"))
    }

    @Test func providerResolvesInTheContainerThatResolvedIt() throws {
        let parent = Container()
        parent.register((any Engine).self) { _ in V8("parent") }
        let child = parent.makeChild()
        child.register((any Engine).self) { _ in V8("child") }
        #expect(try child.resolve(Provider<any Engine>.self).instance.label == "child")
    }

    @Test func providerFailuresThrowFromInstance() throws {
        let container = Container()
        let failing = Flag(true)
        container.register((any Engine).self) { _ in
            if failing.isOn { throw TestFailure() }
            return V8()
        }
        let provider = try container.resolve(Provider<any Engine>.self)
        #expect(resolutionError { try provider.instance }?.kind == .factoryFailed)
        failing.isOn = false
        #expect(try provider.instance.label == "v8")
    }

    @Test func aServiceOnlyAnAsyncResolveCanBuildSaysTheWrappersInstanceIsSynchronous() async throws {
        let container = Container()
        container.register((any Engine).self) { _ async in V8("async") }
        let lazy = try await container.resolve(Lazy<any Engine>.self)
        let provider = try await container.resolve(Provider<any Engine>.self)

        let reads: [(read: () throws -> Void, wrapper: String)] = [
            ({ _ = try lazy.instance }, "Lazy<Engine>"), ({ _ = try provider.instance }, "Provider<Engine>"),
        ]
        for (read, wrapper) in reads {
            let error = try #require(resolutionError(read))
            #expect(error.kind == .asyncRequired)
            #expect(error.path == [ServiceKey((any Engine).self)])
            #expect(
                error.description.contains(
                    "\(wrapper) resolves it when its `instance` is read, which is synchronous."))
            // Resolved at the top, not by a factory: there is no resolver to keep.
            #expect(error.description.contains("`try await container.resolve(Engine.self)`"))
            #expect(!error.description.contains("resolver your factory was given"))
        }
        // Held by a service its factory built, the advice is the factory's resolver, and it works.
        final class LazyHolder: Sendable {
            let engine: Lazy<any Engine>
            init(engine: Lazy<any Engine>) { self.engine = engine }
        }
        container.register(LazyHolder.self) { r in LazyHolder(engine: try r.resolve()) }
        let holder = try await container.resolve(LazyHolder.self)
        let error = try #require(resolutionError { _ = try holder.engine.instance })
        #expect(
            error.description.contains("keep it (`let resolver = r`), then `try await resolver.resolve(Engine.self)`"))
        container.register(ResolverKeeper.self) { r in ResolverKeeper(resolver: r) }
        let keeper = try await container.resolve(ResolverKeeper.self)
        #expect(try await keeper.resolver.resolve((any Engine).self).label == "async")
    }

    @Test func providerCanBeUsedFromManyTasks() async throws {
        let container = Container()
        container.register((any Engine).self) { _ in V8() }.inObjectScope(.transient)
        let provider = try await container.resolve(Provider<any Engine>.self)
        let engines = try await withThrowingTaskGroup(of: V8.self) { group in
            for _ in 0..<16 {
                group.addTask { try provider.instance as! V8 }
            }
            return try await group.reduce(into: [V8]()) { $0.append($1) }
        }
        #expect(Set(engines.map(ObjectIdentifier.init)).count == 16)  // all alive here, so all distinct
    }
}

// MARK: - Usage example

/// `Lazy`, `Provider` and optional resolution as an app uses them, with a `Lazy` that captures runtime arguments.
/// (Getting Started's own snippet, "Optional, lazy and repeated resolution", is run by GettingStartedArticleTests.)
private enum ReadmeWrappers {
    protocol Engine: AnyObject {}
    final class V8: Engine {}
    protocol MediaPlayer {}
    final class Request {}
    struct Greeter {
        let text: String
        init(_ name: String, _ times: Int) {
            text = Array(repeating: "Hi \(name)", count: times).joined(separator: " ")
        }
    }

    final class Car {
        let engine: Lazy<Engine>  // resolved on first use, then kept
        let requests: Provider<Request>  // resolved on every use
        init(engine: Lazy<Engine>, requests: Provider<Request>) {
            self.engine = engine
            self.requests = requests
        }
    }

    @Suite struct Example {
        @Test func readme() throws {
            let container = Container()
            container.register(Engine.self) { _ in V8() }
            container.register(Request.self) { _ in Request() }.inObjectScope(.transient)
            container.register(Greeter.self) { (_, name: String, times: Int) in Greeter(name, times) }

            let player = try container.resolve(MediaPlayer?.self)  // nil: no MediaPlayer is registered

            container.register(Car.self) { r in Car(engine: try r.resolve(), requests: try r.resolve()) }
            let car = try container.resolve(Car.self)  // no Engine built yet
            let engine = try car.engine.instance  // built now; the same instance on every access
            let request = try car.requests.instance  // a new Request on every access

            let greeter = try container.resolve(Lazy<Greeter>.self, arguments: "Ann", 2)  // arguments are captured

            #expect(player == nil)
            #expect(try car.engine.instance === engine)
            #expect(try car.requests.instance !== request)
            #expect(try greeter.instance.text == "Hi Ann Hi Ann")
        }
    }
}
