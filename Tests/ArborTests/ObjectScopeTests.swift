import Arbor
import Testing

// API.md §4 and §10.6–10.8: scopes, and who owns which instance in the container tree.

private class Service {
    let label: String
    init(_ label: String = "service") { self.label = label }
}

private final class Subservice: Service {}

/// Two dependencies of the same type, resolved while building one object, plus one resolved in its hook.
private final class Pair {
    let first: Service
    let second: Service
    var fromHook: Service?
    init(first: Service, second: Service) {
        self.first = first
        self.second = second
    }
}

private final class Consumer {
    let dependency: Service
    var fromHook: Service?
    init(dependency: Service) { self.dependency = dependency }
}

private struct Value {
    let serial: Int
}

private protocol Named: AnyObject {
    var label: String { get }
}

extension Service: Named {}

/// A value of 19 words that holds a strong and a weak reference.
private struct Bulky {
    let serial: Int
    let payload = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
    let owner: Service
    weak var observer: Service?
}

private struct Gathered {
    let values: [(Bulky, Bulky)]
    let named: (any Named, any Named)
}

private struct ValuePair {
    let first: Value
    let second: Value
}

extension ObjectScope {
    fileprivate static let testSession = ObjectScope(name: "session", retention: .strong)
}

@Suite struct ObjectScopeTests {
    /// Registers `Pair`, built from two `Service`s, with a hook that resolves a third.
    private static func registerPair(in c: Container) {
        c.register(Pair.self) { r in Pair(first: try r.resolve(), second: try r.resolve()) }
            .inObjectScope(.transient)
            .initCompleted { r, pair in pair.fromHook = try r.resolve(Service.self) }
    }

    // MARK: transient

    @Test func transientBuildsANewInstanceEveryTimeAlsoWithinOneGraph() throws {
        let c = Container()
        let built = Counter()
        c.register(Service.self) { _ in
            built.increment()
            return Service()
        }.inObjectScope(.transient)
        Self.registerPair(in: c)

        let pair = try c.resolve(Pair.self)
        #expect(pair.first !== pair.second)
        #expect(pair.fromHook !== pair.first)
        #expect(pair.fromHook !== pair.second)
        #expect(built.value == 3)

        #expect(try c.resolve(Service.self) !== c.resolve(Service.self))
        #expect(built.value == 5)
    }

    // MARK: graph

    @Test func graphSharesOneInstancePerResolutionIncludingHooks() throws {
        let c = Container()
        let built = Counter()
        c.register(Service.self) { _ in
            built.increment()
            return Service()
        }.inObjectScope(.graph)
        Self.registerPair(in: c)

        let pair = try c.resolve(Pair.self)
        #expect(pair.first === pair.second)
        #expect(pair.fromHook === pair.first, "deferred hooks share the resolution's graph")
        #expect(built.value == 1)

        let next = try c.resolve(Pair.self)
        #expect(next.first !== pair.first, "the next top-level resolve builds a new graph")
        #expect(next.first === next.second)
        #expect(built.value == 2)
    }

    @Test func graphIsTheDefaultScope() throws {
        let c = Container()
        #expect(c.defaultScope == .graph)
        let registration = c.register(Service.self) { _ in Service() }
        Self.registerPair(in: c)
        #expect(registration.scope == .graph)

        let pair = try c.resolve(Pair.self)
        #expect(pair.first === pair.second)
        #expect(try c.resolve(Service.self) !== c.resolve(Service.self))
    }

    @Test func graphInstanceIsSharedWithHooksOfInstancesCreatedInHooks() throws {
        let c = Container()
        c.register(Service.self) { _ in Service() }
        c.register(Consumer.self) { r in Consumer(dependency: try r.resolve()) }
            .inObjectScope(.transient)
            .initCompleted { r, consumer in consumer.fromHook = try r.resolve(Service.self) }
        let nested = Box<Consumer>()
        c.register(Pair.self) { r in Pair(first: try r.resolve(), second: try r.resolve()) }
            .initCompleted { r, _ in nested.value = try r.resolve(Consumer.self) }

        let pair = try c.resolve(Pair.self)
        let consumer = try #require(nested.value)
        #expect(consumer.dependency === pair.first)
        #expect(consumer.fromHook === pair.first)
    }

    @Test func graphSharesValuesAndProtocolInstancesOfAnySizeAndReleasesThemAfterwards() throws {
        let c = Container()
        let serials = Counter()
        c.register(Service.self) { _ in Service("owner") }
        c.register((any Named).self) { _ in Service("named") }
        let names = (0..<24).map(String.init)
        for name in names {
            // Large values, each holding references: a graph of them outgrows its first buffer and is moved.
            c.register(Bulky.self, name: name) { r in
                let owner = try r.resolve(Service.self)
                return Bulky(serial: serials.increment(), owner: owner, observer: owner)
            }
        }
        c.register(Gathered.self) { r in
            var values: [(Bulky, Bulky)] = []
            for name in names {
                values.append((try r.resolve(Bulky.self, name: name), try r.resolve(Bulky.self, name: name)))
            }
            return Gathered(values: values, named: (try r.resolve(), try r.resolve()))
        }

        weak var owner: Service?
        weak var named: Service?
        do {
            let gathered = try c.resolve(Gathered.self)
            #expect(gathered.values.allSatisfy { $0.serial == $1.serial && $0.owner === $1.owner })
            #expect(Set(gathered.values.map(\.0.serial)).count == names.count)
            let first = gathered.values[0].0.owner
            #expect(gathered.values.allSatisfy { $0.0.observer === first }, "weak references survive a move")
            #expect(gathered.named.0 === gathered.named.1, "a protocol service is shared too")
            owner = gathered.values[0].0.owner
            named = gathered.named.0 as? Service
            #expect(owner != nil && named != nil)
        }
        #expect(owner == nil, "the graph released its copies of the values")
        #expect(named == nil)
    }

    @Test func hooksGetTheirOwnInstanceWhateverItsTypeWhileTheGraphGrowsAroundIt() throws {
        let c = Container()
        let seen = Recorder()
        let serials = Counter()
        let names = (0..<24).map(String.init)
        for name in names {
            c.register(Bulky.self, name: name) { r in
                let owner = try r.resolve(Service.self)
                return Bulky(serial: serials.increment(), owner: owner, observer: owner)
            }
        }
        // Each hook first resolves enough large values to move every instance the graph holds, then looks at its
        // own instance: a class (borrowed), `AnyObject` (borrowed), a value and a protocol (copied).
        let growGraph: @Sendable (any Resolver) throws -> Void = { r in
            for name in names { _ = try r.resolve(Bulky.self, name: name) }
        }
        c.register(Service.self) { _ in Service("class") }
            .initCompleted { r, service in
                try growGraph(r)
                seen.record(service.label)
            }
        c.register(AnyObject.self) { _ in Service("object") }
            .initCompleted { r, object in
                try growGraph(r)
                seen.record((object as? Service)?.label ?? "?")
            }
        c.register(Value.self) { _ in Value(serial: 7) }
            .initCompleted { r, value in
                try growGraph(r)
                seen.record("value \(value.serial)")
            }
        c.register((any Named).self) { _ in Service("protocol") }
            .initCompleted { r, named in
                try growGraph(r)
                seen.record(named.label)
            }
        c.register(Gathered.self) { r in
            _ = try r.resolve(AnyObject.self)
            _ = try r.resolve(Value.self)
            return Gathered(values: [], named: (try r.resolve(), try r.resolve()))
        }

        let gathered = try c.resolve(Gathered.self)
        // The class instance is built by the first hook (the large values use it), so its hook joins the queue last.
        #expect(seen.events == ["object", "value 7", "protocol", "class"])
        #expect(gathered.named.0 === gathered.named.1)
        #expect(serials.value == names.count, "the large values were built once, in the one graph")
    }

    @Test func aDeinitThatResolvesWhileTheGraphIsReleasedGetsAResolutionOfItsOwn() throws {
        final class Shared {}
        final class User {
            let shared: Shared
            init(_ shared: Shared) { self.shared = shared }
        }
        final class Temporary {
            let onDeinit: @Sendable () -> Void
            init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
            deinit { onDeinit() }
        }
        final class Root {
            let shared: Shared
            init(_ shared: Shared, _: Temporary) { self.shared = shared }
        }
        let c = Container()
        let seen = Recorder()
        c.register(Shared.self) { _ in Shared() }.inObjectScope(.graph)
        c.register(User.self) { r in User(try r.resolve()) }
        // `Temporary` lives in the graph only: it goes when the resolution releases the graph's instances.
        c.register(Temporary.self) { [unowned c] _ in
            Temporary {
                do {
                    let user = try c.resolve(User.self)
                    seen.record(user.shared === (try? c.resolve(User.self))?.shared ? "shared" : "own graph")
                } catch {
                    seen.record("\(error)")
                }
            }
        }
        .inObjectScope(.graph)
        c.register(Root.self) { r in Root(try r.resolve(), try r.resolve()) }

        for _ in 0..<3 {
            let root = try c.resolve(Root.self)
            #expect(try c.resolve(User.self).shared !== root.shared, "a new resolve has a graph of its own")
        }
        #expect(seen.events == ["own graph", "own graph", "own graph"])
    }

    // MARK: permanent

    @Test func permanentIsOnePerRegistration() throws {
        let c = Container()
        let built = Counter()
        c.register(Service.self) { _ in
            built.increment()
            return Service("unnamed")
        }.inObjectScope(.permanent)
        c.register(Service.self, name: "other") { _ in Service("other") }.inObjectScope(.permanent)

        let a = try c.resolve(Service.self)
        let b = try c.resolve(Service.self)
        let other = try c.resolve(Service.self, name: "other")
        #expect(a === b)
        #expect(other !== a)
        #expect(try c.resolve(Service.self, name: "other") === other)
        #expect(built.value == 1)
    }

    @Test func permanentIsSharedByAllDescendants() throws {
        let root = Container()
        root.register(Service.self) { _ in Service() }.inObjectScope(.permanent)
        let left = root.makeChild()
        let right = root.makeChild()
        let grandchild = left.makeChild()

        let fromRight = try right.resolve(Service.self)
        #expect(try left.resolve(Service.self) === fromRight)
        #expect(try grandchild.resolve(Service.self) === fromRight)
        #expect(try root.resolve(Service.self) === fromRight)
    }

    @Test func permanentInAChildIsTheChildsOwn() throws {
        let parent = Container()
        let child = parent.makeChild()
        parent.register(Service.self) { _ in Service("parent") }.inObjectScope(.permanent)
        child.register(Service.self) { _ in Service("child") }.inObjectScope(.permanent)

        let fromChild = try child.resolve(Service.self)
        let fromParent = try parent.resolve(Service.self)
        #expect(fromChild.label == "child")
        #expect(fromParent.label == "parent")
        #expect(try child.resolve(Service.self) === fromChild)
    }

    @Test func permanentIsBuiltFromTheOwningContainerSoAChildOverrideDoesNotLeakIn() throws {
        let parent = Container()
        let child = parent.makeChild()
        parent.register(Service.self) { _ in Service("parent") }
        parent.register(Consumer.self) { r in Consumer(dependency: try r.resolve()) }
            .inObjectScope(.permanent)
            .initCompleted { r, consumer in consumer.fromHook = try r.resolve(Service.self) }
        child.register(Service.self) { _ in Service("child") }

        // Resolved from the child first: still built from the parent, which owns it.
        let consumer = try child.resolve(Consumer.self)
        #expect(consumer.dependency.label == "parent")
        #expect(consumer.fromHook?.label == "parent", "its hooks also resolve from the owning container")
        #expect(try parent.resolve(Consumer.self) === consumer)
        #expect(try child.resolve(Service.self).label == "child")
    }

    @Test func permanentNestedInAChildsGraphStillUsesItsOwner() throws {
        let parent = Container()
        let child = parent.makeChild()
        parent.register(Service.self) { _ in Service("parent") }
        parent.register(Consumer.self) { r in Consumer(dependency: try r.resolve()) }.inObjectScope(.permanent)
        child.register(Service.self) { _ in Service("child") }
        // A child registration that depends on the parent's permanent Consumer and on Service.
        child.register(Pair.self) { r in
            let consumer = try r.resolve(Consumer.self)
            return Pair(first: consumer.dependency, second: try r.resolve())
        }

        let pair = try child.resolve(Pair.self)
        #expect(pair.first.label == "parent")
        #expect(pair.second.label == "child")
    }

    // MARK: The tree

    @Test func childOverrideReachesTransientAndGraphDependenciesOfAParentRegistration() throws {
        for scope in [ObjectScope.transient, .graph] {
            let parent = Container()
            let child = parent.makeChild()
            parent.register(Service.self) { _ in Service("parent") }
            parent.register(Consumer.self) { r in Consumer(dependency: try r.resolve()) }
                .inObjectScope(scope)
                .initCompleted { r, consumer in consumer.fromHook = try r.resolve(Service.self) }
            child.register(Service.self) { _ in Service("child") }

            let fromChild = try child.resolve(Consumer.self)
            #expect(fromChild.dependency.label == "child", "scope \(scope)")
            #expect(fromChild.fromHook?.label == "child", "scope \(scope)")
            let fromParent = try parent.resolve(Consumer.self)
            #expect(fromParent.dependency.label == "parent", "scope \(scope)")
            #expect(fromParent.fromHook?.label == "parent", "scope \(scope)")
        }
    }

    @Test func parentNeverSeesChildRegistrations() throws {
        let parent = Container()
        let child = parent.makeChild()
        child.register(Service.self) { _ in Service("child") }
        parent.register(Consumer.self) { r in Consumer(dependency: try r.resolve()) }

        #expect(resolutionError { try parent.resolve(Service.self) }?.kind == .notRegistered)
        #expect(resolutionError { try parent.resolve(Consumer.self) }?.kind == .notRegistered)
        #expect(try child.resolve(Consumer.self).dependency.label == "child")
    }

    @Test func lookupIsNearestFirstAcrossThreeLevels() throws {
        let grandparent = Container()
        let parent = grandparent.makeChild()
        let child = parent.makeChild()
        #expect(child.parent === parent)
        #expect(parent.parent === grandparent)
        #expect(grandparent.parent == nil)

        for name in ["a", "b", "c"] {
            grandparent.register(Service.self, name: name) { _ in Service("grandparent") }
        }
        for name in ["a", "b"] {
            parent.register(Service.self, name: name) { _ in Service("parent") }
        }
        child.register(Service.self, name: "a") { _ in Service("child") }

        #expect(try child.resolve(Service.self, name: "a").label == "child")
        #expect(try child.resolve(Service.self, name: "b").label == "parent")
        #expect(try child.resolve(Service.self, name: "c").label == "grandparent")
        #expect(try parent.resolve(Service.self, name: "a").label == "parent")
        #expect(try parent.resolve(Service.self, name: "c").label == "grandparent")
        #expect(try grandparent.resolve(Service.self, name: "a").label == "grandparent")
    }

    @Test func explicitParentInitialiser() throws {
        let parent = Container()
        let child = Container(parent: parent)
        parent.register(Service.self) { _ in Service("parent") }
        #expect(child.parent === parent)
        #expect(try child.resolve(Service.self).label == "parent")
    }

    // MARK: weak

    @Test func weakSharesAnInstanceWhateverTypeItIsRegisteredAsAndKeepsNoneOfThemAlive() throws {
        let c = Container()
        c.register(Service.self, name: "class") { _ in Service("class") }.inObjectScope(.weak)
        c.register(Service.self, name: "subclass") { _ in Subservice("subclass") }.inObjectScope(.weak)
        c.register((any Named).self) { _ in Service("protocol") }.inObjectScope(.weak)
        c.register(AnyObject.self) { _ in Service("object") }.inObjectScope(.weak)

        weak var released: Service?
        do {
            let held: [AnyObject] = [
                try c.resolve(Service.self, name: "class"), try c.resolve(Service.self, name: "subclass"),
                try c.resolve((any Named).self), try c.resolve(AnyObject.self),
            ]
            let again: [AnyObject] = [
                try c.resolve(Service.self, name: "class"), try c.resolve(Service.self, name: "subclass"),
                try c.resolve((any Named).self), try c.resolve(AnyObject.self),
            ]
            #expect(zip(held, again).allSatisfy { $0 === $1 }, "shared while held")
            #expect(held[1] is Subservice)
            released = held[0] as? Service
            #expect(released != nil)
        }
        #expect(released == nil, "handing an instance out keeps no extra reference to it")
        #expect(try c.resolve(Service.self, name: "class").label == "class", "built anew once released")
    }

    @Test func weakIsSharedWhileHeld() throws {
        let c = Container()
        let built = Counter()
        c.register(Service.self) { _ in
            built.increment()
            return Service()
        }.inObjectScope(.weak)

        let a = try c.resolve(Service.self)
        let b = try c.resolve(Service.self)
        let fromChild = try c.makeChild().resolve(Service.self)
        #expect(a === b)
        #expect(fromChild === a)
        #expect(built.value == 1)
    }

    @Test func weakIsRebuiltAfterTheLastStrongReferenceGoes() throws {
        let c = Container()
        let built = Counter()
        c.register(Service.self) { _ in
            built.increment()
            return Service()
        }.inObjectScope(.weak)

        let first = try weakly { try c.resolve(Service.self) }
        #expect(first.object == nil, "the container holds a weak instance only weakly")

        let second = try c.resolve(Service.self)
        #expect(built.value == 2)
        #expect(try c.resolve(Service.self) === second)
        #expect(built.value == 2)
    }

    @Test func weakValueTypesBehaveAsTransient() throws {
        let c = Container()
        let built = Counter()
        c.register(Value.self) { _ in Value(serial: built.increment()) }.inObjectScope(.weak)
        c.register(ValuePair.self) { r in ValuePair(first: try r.resolve(), second: try r.resolve()) }

        #expect(try c.resolve(Value.self).serial == 1)
        #expect(try c.resolve(Value.self).serial == 2)
        let pair = try c.resolve(ValuePair.self)
        #expect(pair.first.serial != pair.second.serial)
        #expect(built.value == 4)
    }

    @Test func weakInstanceIsHeldUntilItsResolutionEnds() throws {
        let c = Container()
        let built = Counter()
        let seenInOwnHook = Box<Bool>(false)
        c.register(Service.self) { _ in
            built.increment()
            return Service()
        }
        .inObjectScope(.weak)
        .initCompleted { _, _ in seenInOwnHook.value = true }
        // The factory drops its reference at once; the hook must still get the same weak instance.
        c.register(Consumer.self) { r in
            _ = try r.resolve(Service.self)
            return Consumer(dependency: Service("unrelated"))
        }
        .initCompleted { r, consumer in consumer.fromHook = try r.resolve(Service.self) }

        let consumer = try c.resolve(Consumer.self)
        #expect(built.value == 1, "the hook shares the instance the factory resolved, though nobody held it")
        #expect(consumer.fromHook != nil)
        #expect(seenInOwnHook.value == true)
    }

    // MARK: Default scopes

    @Test func containerWithPermanentDefaultScope() throws {
        let c = Container(defaultScope: .permanent)
        #expect(c.defaultScope == .permanent)
        let registration = c.register(Service.self) { _ in Service() }
        #expect(registration.scope == .permanent)
        #expect(try c.resolve(Service.self) === c.resolve(Service.self))
    }

    @Test func makeChildInheritsTheDefaultScope() throws {
        let root = Container(defaultScope: .permanent)
        let child = root.makeChild()
        #expect(child.defaultScope == .permanent)
        #expect(child.parent === root)

        let registration = child.register(Service.self) { _ in Service() }
        #expect(registration.scope == .permanent)
        #expect(try child.resolve(Service.self) === child.resolve(Service.self))

        #expect(Container(defaultScope: .transient).makeChild().defaultScope == .transient)
    }

    @Test func explicitScopeOverridesTheDefault() throws {
        let c = Container(defaultScope: .permanent)
        c.register(Service.self) { _ in Service() }.inObjectScope(.transient)
        #expect(try c.resolve(Service.self) !== c.resolve(Service.self))
    }

    // MARK: Custom scopes and .container

    @Test func customStrongScopeIsSharedUntilReset() throws {
        let c = Container()
        let child = c.makeChild()
        c.register(Service.self, name: "session") { _ in Service("session") }.inObjectScope(.testSession)
        c.register(Service.self, name: "permanent") { _ in Service("permanent") }.inObjectScope(.permanent)

        let session = try c.resolve(Service.self, name: "session")
        let permanent = try c.resolve(Service.self, name: "permanent")
        #expect(try c.resolve(Service.self, name: "session") === session)
        #expect(try child.resolve(Service.self, name: "session") === session)

        c.resetObjectScope(.testSession)

        let nextSession = try c.resolve(Service.self, name: "session")
        #expect(nextSession !== session)
        #expect(try c.resolve(Service.self, name: "session") === nextSession)
        #expect(
            try c.resolve(Service.self, name: "permanent") === permanent, "resetting a custom scope keeps .permanent")

        c.resetObjectScope(.permanent)
        #expect(
            try c.resolve(Service.self, name: "session") === nextSession, "resetting .permanent keeps the custom scope")
    }

    @Test func customScopeIdentityAndDescription() {
        let session = ObjectScope(name: "session", retention: .strong)
        #expect(session == .testSession)
        #expect(session != ObjectScope(name: "session", retention: .weak))
        #expect(session != .permanent)
        #expect(session.name == "session")
    }

    @Test func containerScopeIsPermanent() throws {
        #expect(ObjectScope.container == .permanent)
        let c = Container()
        let registration = c.register(Service.self) { _ in Service() }.inObjectScope(.container)
        #expect(registration.scope == .permanent)
        #expect(try c.resolve(Service.self) === c.resolve(Service.self))
    }

    @Test func builtInScopesAreDistinct() {
        let scopes: [ObjectScope] = [.transient, .graph, .weak, .permanent]
        #expect(Set(scopes).count == 4)
    }

    /// A resolution indexes its graph once it holds more than a few dozen instances, and keeps the index for the
    /// next graph on its thread: large and small graphs in turn each share exactly their own instances.
    @Test func largeAndSmallGraphsInTurnShareEachInstanceWithinTheirOwnResolve() throws {
        final class Node: @unchecked Sendable {
            let shared: Node?
            init(shared: Node?) { self.shared = shared }
        }
        final class Wide: @unchecked Sendable {
            let nodes: [Node]
            init(nodes: [Node]) { self.nodes = nodes }
        }
        let container = Container()
        container.register(Node.self, name: "shared") { _ in Node(shared: nil) }
        for index in 0..<80 {
            container.register(Node.self, name: "\(index)") { r in
                Node(shared: try r.resolve(Node.self, name: "shared"))
            }
        }
        for count in [80, 3, 80, 40, 2] {
            container.register(Wide.self, name: "\(count)") { r in
                Wide(nodes: try (0..<count).map { try r.resolve(Node.self, name: "\($0)") })
            }
        }
        var seen: [Node] = []  // Kept alive, so that no two can share an address.
        for count in [80, 3, 80, 40, 2, 80] {
            let wide = try container.resolve(Wide.self, name: "\(count)")
            let again = try container.resolve(Wide.self, name: "\(count)")
            #expect(wide.nodes.count == count)
            let shared = try #require(wide.nodes.first?.shared)
            #expect(wide.nodes.allSatisfy { $0.shared === shared }, "one shared node per graph of \(count)")
            #expect(again.nodes.first?.shared !== shared, "each graph of \(count) builds its own")
            #expect(!seen.contains { $0 === shared }, "a graph of \(count) shares a node of an earlier graph")
            seen.append(shared)
            withExtendedLifetime(again) {}
        }
    }
}
