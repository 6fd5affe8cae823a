import Arbor
import Testing

// API.md §5 and §10.2–10.4: cycles, the depth limit, deferred initCompleted hooks, rollback and error paths.

private final class CycleA {
    init(b: CycleB) {}
}

private final class CycleB {
    init(a: CycleA) {}
}

private final class SelfCycle {
    init(other: SelfCycle) {}
}

private protocol Greeter: AnyObject {}

private final class EnglishGreeter: Greeter {}

private final class GreeterPair {
    let first: any Greeter
    let second: any Greeter
    init(first: any Greeter, second: any Greeter) {
        self.first = first
        self.second = second
    }
}

private final class Node {
    let next: Node?
    init(next: Node?) { self.next = next }
}

private final class Parent {
    let child: Child
    init(child: Child) { self.child = child }
}

private final class Child {
    weak var parent: Parent?
}

private final class Link {
    var next: Link?
}

/// A service registered under a protocol type, with a name and the service it was built with.
private protocol Named: AnyObject {
    var name: String { get }
    var next: (any Named)? { get }
}

private final class NamedStep: Named {
    let name: String
    let next: (any Named)?

    init(name: String, next: (any Named)?) {
        self.name = name
        self.next = next
    }
}

/// A service whose factory and hooks record what happens, under a label.
private final class Step {
    let label: String
    var finished = false
    var next: Step?
    init(_ label: String) { self.label = label }
}

@Suite struct ResolutionTrackerTests {
    // MARK: Cycles

    @Test func aCycleWithoutHooksThrowsCircularDependency() throws {
        let c = Container()
        c.register(CycleA.self) { r in CycleA(b: try r.resolve()) }
        c.register(CycleB.self) { r in CycleB(a: try r.resolve()) }

        let error = try #require(resolutionError { try c.resolve(CycleA.self) })
        #expect(error.kind == .circularDependency)
        #expect(error.key == ServiceKey(CycleA.self))
        #expect(error.path == [ServiceKey(CycleA.self), ServiceKey(CycleB.self), ServiceKey(CycleA.self)])
        #expect(error.description.contains("CycleA → CycleB → CycleA"))
        #expect(error.description.contains("initCompleted"))
    }

    @Test func aCycleIsDetectedInEveryScope() throws {
        for scope in [ObjectScope.transient, .graph, .weak, .permanent] {
            let c = Container(defaultScope: scope)
            c.register(CycleA.self) { r in CycleA(b: try r.resolve()) }
            c.register(CycleB.self) { r in CycleB(a: try r.resolve()) }

            let error = resolutionError { try c.resolve(CycleB.self) }
            #expect(error?.kind == .circularDependency, "scope \(scope)")
            #expect(error?.description.contains("CycleB → CycleA → CycleB") == true, "scope \(scope)")
            // A failed resolution leaves nothing behind: the same error again, not a hang or a stale instance.
            #expect(resolutionError { try c.resolve(CycleB.self) }?.kind == .circularDependency, "scope \(scope)")
        }
    }

    @Test func aSelfCycleThrowsCircularDependency() throws {
        let c = Container()
        c.register(SelfCycle.self) { r in SelfCycle(other: try r.resolve()) }

        let error = try #require(resolutionError { try c.resolve(SelfCycle.self) })
        #expect(error.kind == .circularDependency)
        #expect(error.path == [ServiceKey(SelfCycle.self), ServiceKey(SelfCycle.self)])
        #expect(error.description.contains("SelfCycle → SelfCycle"))
        #expect(error.description.contains("initCompleted"))
    }

    @Test func aCycleDeeperInThePathShowsTheCycle() throws {
        let c = Container()
        c.register(Node.self, name: "entry") { r in Node(next: try r.resolve(Node.self, name: "a")) }
        c.register(Node.self, name: "a") { r in Node(next: try r.resolve(Node.self, name: "b")) }
        c.register(Node.self, name: "b") { r in Node(next: try r.resolve(Node.self, name: "a")) }

        let error = try #require(resolutionError { try c.resolve(Node.self, name: "entry") })
        #expect(error.kind == .circularDependency)
        #expect(error.path.count == 4)
        #expect(error.description.contains(#"Node(name: "a") → Node(name: "b") → Node(name: "a")"#))
    }

    // MARK: Depth

    /// Registers `Node`s named n0 … n(count-1); each resolves the next, the last is a leaf.
    private static func registerChain(of count: Int, in c: Container) {
        for i in 0..<count {
            c.register(Node.self, name: "n\(i)") { r in
                Node(next: i == count - 1 ? nil : try r.resolve(Node.self, name: "n\(i + 1)"))
            }
        }
    }

    @Test func defaultDepthLimitIs200AndStopsALongChainWithoutCrashing() throws {
        let c = Container()
        #expect(c.maxResolutionDepth == 200)
        Self.registerChain(of: 500, in: c)

        let error = try #require(resolutionError { try c.resolve(Node.self, name: "n0") })
        #expect(error.kind == .depthLimitExceeded)
        // n(k) is resolved at depth k: n200 is still allowed, n201 is one too deep.
        #expect(error.key == ServiceKey(Node.self, name: "n201"))
        #expect(error.path.count == 202)
        #expect(error.path.first == ServiceKey(Node.self, name: "n0"))
    }

    @Test func aChainExactlyAtTheDefaultLimitResolves() throws {
        let c = Container()
        Self.registerChain(of: 201, in: c)  // n0 … n200: the deepest is at depth 200
        let head = try c.resolve(Node.self, name: "n0")
        var length = 1
        var node = head
        while let next = node.next {
            length += 1
            node = next
        }
        #expect(length == 201)
    }

    @Test func depthEqualToTheLimitResolvesOneMoreThrows() throws {
        let fits = Container()
        fits.maxResolutionDepth = 5
        Self.registerChain(of: 6, in: fits)  // depth 5 at the end
        #expect(fits.maxResolutionDepth == 5)
        _ = try fits.resolve(Node.self, name: "n0")

        let tooDeep = Container()
        tooDeep.maxResolutionDepth = 5
        Self.registerChain(of: 7, in: tooDeep)  // depth 6 at the end
        let error = try #require(resolutionError { try tooDeep.resolve(Node.self, name: "n0") })
        #expect(error.kind == .depthLimitExceeded)
        #expect(error.key == ServiceKey(Node.self, name: "n6"))
        #expect(error.path == (0...6).map { ServiceKey(Node.self, name: "n\($0)") })

        // Every top-level resolve starts again at depth 0.
        _ = try tooDeep.resolve(Node.self, name: "n1")
    }

    @Test func depthLimitZeroAllowsALeafButNoDependency() throws {
        let c = Container()
        c.maxResolutionDepth = 0
        Self.registerChain(of: 2, in: c)

        _ = try c.resolve(Node.self, name: "n1")  // the leaf
        let error = resolutionError { try c.resolve(Node.self, name: "n0") }
        #expect(error?.kind == .depthLimitExceeded)
        #expect(error?.key == ServiceKey(Node.self, name: "n1"))
    }

    @Test func anInstanceAlreadyHeldPastTheDepthLimitStillThrows() throws {
        // A nested resolve of an instance a permanent or weak registration already holds takes it without building,
        // but the depth limit applies to it as to any other: the same error before and after it was built.
        let c = Container()
        c.maxResolutionDepth = 0
        c.register((any Greeter).self) { _ in EnglishGreeter() }.inObjectScope(.permanent)
        c.register(Node.self, name: "uses greeter") { r in
            _ = try r.resolve((any Greeter).self)
            return Node(next: nil)
        }
        let greeter = try c.resolve((any Greeter).self)  // held from now on
        let error = resolutionError { try c.resolve(Node.self, name: "uses greeter") }
        #expect(error?.kind == .depthLimitExceeded)
        #expect(error?.key == ServiceKey((any Greeter).self))

        c.maxResolutionDepth = 1
        let child = c.makeChild()
        child.register(GreeterPair.self) { r in
            GreeterPair(first: try r.resolve((any Greeter).self), second: try r.resolve((any Greeter).self))
        }
        // From a child, under a protocol type: the very instance the root holds, each time.
        let pair = try child.resolve(GreeterPair.self)
        #expect(pair.first === greeter)
        #expect(pair.second === greeter)
    }

    @Test func aResolveInAHookCountsOneLevelDeeperThanItsInstance() throws {
        // A (depth 0) → hook resolves B (depth 1) → hook resolves C (depth 2).
        func makeContainer(limit: Int) -> Container {
            let c = Container()
            c.maxResolutionDepth = limit
            c.register(Step.self, name: "A") { _ in Step("A") }
                .initCompleted { r, step in step.next = try r.resolve(Step.self, name: "B") }
            c.register(Step.self, name: "B") { _ in Step("B") }
                .initCompleted { r, step in step.next = try r.resolve(Step.self, name: "C") }
            c.register(Step.self, name: "C") { _ in Step("C") }
            return c
        }
        let a = try makeContainer(limit: 2).resolve(Step.self, name: "A")
        #expect(a.next?.next?.label == "C")

        let error = resolutionError { try makeContainer(limit: 1).resolve(Step.self, name: "A") }
        #expect(error?.kind == .depthLimitExceeded)
        #expect(error?.key == ServiceKey(Step.self, name: "C"))
    }

    @Test func aHookChainThatNeverEndsIsStoppedByTheDepthLimit() throws {
        let c = Container()
        c.maxResolutionDepth = 10
        let built = Counter()
        c.register(Link.self) { _ in
            built.increment()
            return Link()
        }
        .inObjectScope(.transient)
        .initCompleted { r, link in link.next = try r.resolve(Link.self) }

        let error = resolutionError { try c.resolve(Link.self) }
        #expect(error?.kind == .depthLimitExceeded)
        #expect(built.value == 11, "one Link per depth 0 … 10, then the limit")
    }

    @Test func aHookChainThatNeverEndsIsStoppedWithTheDefaultLimit() throws {
        let c = Container()
        c.register(Link.self) { _ in Link() }
            .inObjectScope(.transient)
            .initCompleted { r, link in link.next = try r.resolve(Link.self) }

        #expect(resolutionError { try c.resolve(Link.self) }?.kind == .depthLimitExceeded)
    }

    // MARK: Hook order

    @Test func hooksRunInTheOrderFactoriesReturned() throws {
        let c = Container()
        let events = Recorder()
        func register(_ label: String, dependencies: [String]) {
            c.register(Step.self, name: label) { r in
                events.record("factory \(label)")
                for dependency in dependencies { _ = try r.resolve(Step.self, name: dependency) }
                return Step(label)
            }
            .initCompleted { _, step in events.record("hook \(step.label)") }
        }
        register("A", dependencies: ["B", "C"])
        register("B", dependencies: ["D"])
        register("C", dependencies: [])
        register("D", dependencies: [])

        _ = try c.resolve(Step.self, name: "A")
        #expect(
            events.events == [
                "factory A", "factory B", "factory D", "factory C",
                "hook D", "hook B", "hook C", "hook A",
            ])
    }

    @Test func hooksAreDeferredUntilTheOutermostFactoryReturned() throws {
        let c = Container()
        let events = Recorder()
        c.register(Step.self, name: "inner") { _ in Step("inner") }
            .initCompleted { _, _ in events.record("inner hook") }
        c.register(Step.self, name: "outer") { r in
            let inner = try r.resolve(Step.self, name: "inner")
            events.record("outer factory got \(inner.label)")
            return Step("outer")
        }

        _ = try c.resolve(Step.self, name: "outer")
        #expect(events.events == ["outer factory got inner", "inner hook"])
    }

    @Test func hooksOfOneRegistrationRunInTheOrderAdded() throws {
        let c = Container()
        let events = Recorder()
        c.register(Step.self) { _ in Step("S") }
            .initCompleted { _, _ in events.record("1") }
            .initCompleted { _, _ in events.record("2") }
            .initCompleted { _, _ in events.record("3") }

        _ = try c.resolve(Step.self)
        #expect(events.events == ["1", "2", "3"])
    }

    @Test func servicesResolvedInAHookJoinTheEndOfTheQueue() throws {
        let c = Container()
        let events = Recorder()
        c.register(Step.self, name: "A") { r in
            _ = try r.resolve(Step.self, name: "B")
            return Step("A")
        }
        .initCompleted { _, _ in events.record("hook A") }
        c.register(Step.self, name: "B") { _ in Step("B") }
            .initCompleted { r, _ in
                events.record("hook B")
                _ = try r.resolve(Step.self, name: "X")
            }
        c.register(Step.self, name: "X") { _ in Step("X") }
            .initCompleted { _, _ in events.record("hook X") }

        _ = try c.resolve(Step.self, name: "A")
        #expect(events.events == ["hook B", "hook A", "hook X"])
    }

    @Test func hooksRunOncePerInstance() throws {
        let c = Container()
        let events = Recorder()
        c.register(Step.self, name: "graph") { _ in Step("graph") }
            .initCompleted { _, step in events.record(step.label) }
        c.register(Step.self, name: "permanent") { _ in Step("permanent") }
            .inObjectScope(.permanent)
            .initCompleted { _, step in events.record(step.label) }
        c.register(Step.self, name: "transient") { _ in Step("transient") }
            .inObjectScope(.transient)
            .initCompleted { _, step in events.record(step.label) }
        c.register(Step.self, name: "root") { r in
            for name in ["graph", "permanent", "transient", "graph", "permanent", "transient"] {
                _ = try r.resolve(Step.self, name: name)
            }
            return Step("root")
        }

        _ = try c.resolve(Step.self, name: "root")
        #expect(events.events == ["graph", "permanent", "transient", "transient"])

        _ = try c.resolve(Step.self, name: "root")
        #expect(
            events.events == ["graph", "permanent", "transient", "transient", "graph", "transient", "transient"],
            "a held permanent instance is not hooked again; a new graph is")
    }

    @Test func resolveReturnsOnlyAfterEveryHookRan() throws {
        let c = Container()
        c.register(Step.self, name: "A") { _ in Step("A") }
            .initCompleted { r, step in step.next = try r.resolve(Step.self, name: "B") }
            .initCompleted { _, step in step.finished = true }
        c.register(Step.self, name: "B") { _ in Step("B") }
            .initCompleted { r, step in step.next = try r.resolve(Step.self, name: "C") }
            .initCompleted { _, step in step.finished = true }
        c.register(Step.self, name: "C") { _ in Step("C") }
            .initCompleted { _, step in step.finished = true }

        let a = try c.resolve(Step.self, name: "A")
        let b = try #require(a.next)
        let cStep = try #require(b.next)
        #expect(a.finished)
        #expect(b.finished)
        #expect(cStep.finished)
        #expect(cStep.label == "C")
    }

    // MARK: Wiring cycles with initCompleted

    private static func registerParentAndChild(in c: Container, scope: ObjectScope) {
        c.register(Parent.self) { r in Parent(child: try r.resolve()) }.inObjectScope(scope)
        c.register(Child.self) { _ in Child() }
            .inObjectScope(scope)
            .initCompleted { r, child in child.parent = try r.resolve(Parent.self) }
    }

    @Test func parentAndChildAreWiredInGraphScope() throws {
        let c = Container()
        Self.registerParentAndChild(in: c, scope: .graph)

        let parent = try c.resolve(Parent.self)
        #expect(parent.child.parent === parent)

        let next = try c.resolve(Parent.self)
        #expect(next !== parent, "a new graph, a new pair")
        #expect(next.child !== parent.child)
        #expect(next.child.parent === next)
    }

    @Test func parentAndChildInGraphScopeDoNotLeak() throws {
        let c = Container()
        Self.registerParentAndChild(in: c, scope: .graph)

        var childRef = WeakRef(Child())
        let parentRef = try weakly {
            let parent = try c.resolve(Parent.self)
            childRef = WeakRef(parent.child)
            #expect(parent.child.parent === parent)
            return parent
        }
        #expect(parentRef.object == nil)
        #expect(childRef.object == nil)
    }

    @Test func parentAndChildAreWiredInPermanentScope() throws {
        let c = Container()
        Self.registerParentAndChild(in: c, scope: .permanent)

        let parent = try c.resolve(Parent.self)
        #expect(parent.child.parent === parent)
        #expect(try c.resolve(Child.self) === parent.child)
        #expect(try c.resolve(Parent.self) === parent)
    }

    @Test func permanentParentAndChildResolvedFromTheChildEnd() throws {
        let c = Container()
        Self.registerParentAndChild(in: c, scope: .permanent)

        let child = try c.resolve(Child.self)
        let parent = try #require(child.parent)
        #expect(parent.child === child)
        #expect(try c.resolve(Parent.self) === parent)
    }

    // MARK: Rollback

    @Test func aThrowingPermanentFactoryCachesNothing() throws {
        let c = Container()
        let failing = Flag(true)
        let built = Counter()
        c.register(Step.self) { _ in
            built.increment()
            if failing.isOn { throw TestFailure() }
            return Step("ok")
        }.inObjectScope(.permanent)

        #expect(resolutionError { try c.resolve(Step.self) }?.kind == .factoryFailed)
        failing.isOn = false
        let step = try c.resolve(Step.self)
        #expect(try c.resolve(Step.self) === step)
        #expect(built.value == 2)
    }

    @Test func aFailedResolutionLeavesNoPermanentDependencyCached() throws {
        for scope in [ObjectScope.permanent, .weak] {
            let c = Container()
            let failing = Flag(true)
            let built = Counter()
            let kept = Box<Step>()  // keeps the instance alive, so a weak cache could still hand it out
            c.register(Step.self, name: "dependency") { _ in
                built.increment()
                let step = Step("dependency")
                kept.value = step
                return step
            }.inObjectScope(scope)
            c.register(Step.self, name: "outer") { r in
                _ = try r.resolve(Step.self, name: "dependency")
                if failing.isOn { throw TestFailure() }
                return Step("outer")
            }

            #expect(resolutionError { try c.resolve(Step.self, name: "outer") }?.kind == .factoryFailed)
            let stale = try #require(kept.value)

            let fresh = try c.resolve(Step.self, name: "dependency")
            #expect(fresh !== stale, "scope \(scope)")
            #expect(built.value == 2, "scope \(scope)")

            failing.isOn = false
            _ = try c.resolve(Step.self, name: "outer")
            #expect(try c.resolve(Step.self, name: "dependency") === fresh, "scope \(scope)")
        }
    }

    @Test func aThrowingHookLeavesNoInstanceCached() throws {
        for scope in [ObjectScope.permanent, .weak] {
            let c = Container()
            let failing = Flag(true)
            let built = Counter()
            let kept = Box<Step>()
            c.register(Step.self) { _ in
                built.increment()
                let step = Step("hooked")
                kept.value = step
                return step
            }
            .inObjectScope(scope)
            .initCompleted { _, step in
                if failing.isOn { throw TestFailure("hook") }
                step.finished = true
            }

            let error = resolutionError { try c.resolve(Step.self) }
            #expect(error?.kind == .factoryFailed, "scope \(scope)")
            let stale = try #require(kept.value)

            failing.isOn = false
            let step = try c.resolve(Step.self)
            #expect(step !== stale, "scope \(scope)")
            #expect(step.finished, "scope \(scope)")
            #expect(built.value == 2, "scope \(scope)")
            #expect(try c.resolve(Step.self) === step, "scope \(scope)")
        }
    }

    @Test func aThrowingHookOfAnotherServiceRollsBackPermanentInstances() throws {
        let c = Container()
        let failing = Flag(true)
        let built = Counter()
        c.register(Step.self, name: "permanent") { _ in
            built.increment()
            return Step("permanent")
        }.inObjectScope(.permanent)
        c.register(Step.self, name: "outer") { _ in Step("outer") }
            .initCompleted { r, step in
                step.next = try r.resolve(Step.self, name: "permanent")
                if failing.isOn { throw TestFailure() }
            }

        #expect(resolutionError { try c.resolve(Step.self, name: "outer") }?.kind == .factoryFailed)
        failing.isOn = false
        let outer = try c.resolve(Step.self, name: "outer")
        #expect(built.value == 2)
        #expect(outer.next === (try c.resolve(Step.self, name: "permanent")))
    }

    // MARK: Error paths

    @Test func aNestedResolutionErrorPassesUpUnchanged() throws {
        let c = Container()
        c.register(Step.self, name: "A") { r in
            let next = try r.resolve(Step.self, name: "B")
            let step = Step("A")
            step.next = next
            return step
        }
        c.register(Step.self, name: "B") { r in
            do {
                _ = try r.resolve(Step.self, name: "missing")
            } catch {
                throw error  // a factory that rethrows what it got
            }
            return Step("B")
        }

        let error = try #require(resolutionError { try c.resolve(Step.self, name: "A") })
        #expect(error.kind == .notRegistered)
        #expect(error.key == ServiceKey(Step.self, name: "missing"))
        #expect(
            error.path == [
                ServiceKey(Step.self, name: "A"), ServiceKey(Step.self, name: "B"),
                ServiceKey(Step.self, name: "missing"),
            ])
    }

    @Test func aNestedErrorFromAHookPassesUpUnchanged() throws {
        let c = Container()
        c.register(Step.self, name: "A") { _ in Step("A") }
            .initCompleted { r, step in step.next = try r.resolve(Step.self, name: "missing") }

        let error = try #require(resolutionError { try c.resolve(Step.self, name: "A") })
        #expect(error.kind == .notRegistered)
        #expect(error.key == ServiceKey(Step.self, name: "missing"))
        #expect(error.path == [ServiceKey(Step.self, name: "A"), ServiceKey(Step.self, name: "missing")])
    }

    @Test func aPlainFactoryErrorIsWrappedWithThePathToTheFactory() throws {
        let c = Container()
        c.register(Step.self, name: "A") { r in
            _ = try r.resolve(Step.self, name: "B")
            return Step("A")
        }
        c.register(Step.self, name: "B") { r in
            _ = try r.resolve(Step.self, name: "C")
            throw TestFailure("B failed")
        }
        c.register(Step.self, name: "C") { _ in Step("C") }

        let error = try #require(resolutionError { try c.resolve(Step.self, name: "A") })
        #expect(error.kind == .factoryFailed)
        #expect(error.underlying as? TestFailure == TestFailure("B failed"))
        #expect(error.key == ServiceKey(Step.self, name: "B"))
        #expect(error.path == [ServiceKey(Step.self, name: "A"), ServiceKey(Step.self, name: "B")])
    }

    /// The same for services registered under a protocol type, transient ones (which write their instance straight
    /// into the caller's memory when nothing else is kept) and graph-scoped ones: the error names the path to the
    /// factory that threw, and the failed resolve leaves none of its frames behind.
    @Test(arguments: [ObjectScope.transient, .graph])
    func aFactoryErrorUnderAProtocolTypeNamesThePathAndLeavesNoFrameBehind(scope: ObjectScope) throws {
        let c = Container()
        let failing = Flag(true)
        c.register((any Named).self, name: "A") { r in
            NamedStep(name: "A", next: try r.resolve((any Named).self, name: "B"))
        }.inObjectScope(scope)
        c.register((any Named).self, name: "B") { r in
            let next = try r.resolve((any Named).self, name: "C")
            if failing.isOn { throw TestFailure("B failed") }
            return NamedStep(name: "B", next: next)
        }.inObjectScope(scope)
        c.register((any Named).self, name: "C") { _ in NamedStep(name: "C", next: nil) }.inObjectScope(scope)

        // Twice: a frame the first failure left behind would lengthen the second one's path.
        for _ in 0..<2 {
            let error = try #require(resolutionError { try c.resolve((any Named).self, name: "A") })
            #expect(error.kind == .factoryFailed)
            #expect(error.underlying as? TestFailure == TestFailure("B failed"))
            #expect(error.path == [ServiceKey((any Named).self, name: "A"), ServiceKey((any Named).self, name: "B")])
        }

        failing.isOn = false
        let a = try c.resolve((any Named).self, name: "A")
        #expect(a.name == "A" && a.next?.name == "B" && a.next?.next?.name == "C")
    }

    /// A graph-scoped service resolved at the top is kept for the hooks that wait: a hook of a service it depends on
    /// gets that same instance back, though nothing else asks for it after the outermost factory returned.
    @Test func anOutermostGraphInstanceIsTheOneTheHooksOfItsDependenciesGet() throws {
        let c = Container()
        let seen = Box<(any Named)?>(nil)
        c.register((any Named).self, name: "outer") { r in
            NamedStep(name: "outer", next: try r.resolve((any Named).self, name: "inner"))
        }
        c.register((any Named).self, name: "inner") { _ in NamedStep(name: "inner", next: nil) }
            .initCompleted { r, _ in seen.value = try r.resolve((any Named).self, name: "outer") }

        let outer = try c.resolve((any Named).self, name: "outer")
        #expect(try #require(seen.value) === outer)
        #expect(try c.resolve((any Named).self, name: "outer") !== outer, "a graph instance is one resolution's")
    }

    @Test func aHookErrorNamesTheServiceWhoseHookThrewOnThePathThatCreatedIt() throws {
        let c = Container()
        c.register(Step.self, name: "A") { r in
            _ = try r.resolve(Step.self, name: "B")
            _ = try r.resolve(Step.self, name: "C")
            return Step("A")
        }
        c.register(Step.self, name: "B") { _ in Step("B") }
        c.register(Step.self, name: "C") { _ in Step("C") }
            .initCompleted { _, _ in throw TestFailure("hook of C") }

        let error = try #require(resolutionError { try c.resolve(Step.self, name: "A") })
        #expect(error.kind == .factoryFailed)
        #expect(error.underlying as? TestFailure == TestFailure("hook of C"))
        #expect(error.key == ServiceKey(Step.self, name: "C"))
        #expect(error.path == [ServiceKey(Step.self, name: "A"), ServiceKey(Step.self, name: "C")])
    }

    @Test func aHookErrorOfAnInstanceCreatedInAHookHasTheHookPath() throws {
        let c = Container()
        c.register(Step.self, name: "A") { _ in Step("A") }
            .initCompleted { r, step in step.next = try r.resolve(Step.self, name: "B") }
        c.register(Step.self, name: "B") { _ in Step("B") }
            .initCompleted { _, _ in throw TestFailure("hook of B") }

        let error = try #require(resolutionError { try c.resolve(Step.self, name: "A") })
        #expect(error.kind == .factoryFailed)
        #expect(error.underlying as? TestFailure == TestFailure("hook of B"))
        #expect(error.key == ServiceKey(Step.self, name: "B"))
        #expect(error.path == [ServiceKey(Step.self, name: "A"), ServiceKey(Step.self, name: "B")])
    }
}
