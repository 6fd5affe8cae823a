import Arbor
import Testing

// API.md §2–3 and §10.1, §10.5–10.7, §10.12: registering, resolving, the registration's lifetime.

private final class Engine {
    let label: String
    init(_ label: String = "engine") { self.label = label }
}

private final class Car {
    let engine: Engine
    let label: String
    init(engine: Engine, label: String) {
        self.engine = engine
        self.label = label
    }
}

/// What a factory received: how many runtime arguments, and their values.
private struct Signature: Equatable {
    let arity: Int
    let values: [String]
    init(_ values: String...) {
        self.init(values)
    }
    init(_ values: [String]) {
        arity = values.count
        self.values = values
    }
}

private final class Clock {}

@Suite struct RegistrationTests {
    // MARK: Names and type inference

    @Test func namedRegistrationsAreSeparateServices() throws {
        let c = Container()
        c.register(Engine.self) { _ in Engine("v8") }
        c.register(Car.self) { r in Car(engine: try r.resolve(), label: "plain") }
        c.register(Car.self, name: "sports") { r in Car(engine: try r.resolve(Engine.self), label: "sports") }

        #expect(try c.resolve(Car.self).label == "plain")
        #expect(try c.resolve(Car.self, name: "sports").label == "sports")
        #expect(try c.resolve(Car.self, name: "sports").engine.label == "v8")
        let error = resolutionError { try c.resolve(Car.self, name: "racing") }
        #expect(error?.kind == .notRegistered)
    }

    @Test func typeInferredResolve() throws {
        let c = Container()
        c.register(Engine.self) { _ in Engine("v8") }
        c.register(Car.self) { r in Car(engine: try r.resolve(), label: "plain") }
        c.register(Car.self, name: "sports") { r in Car(engine: try r.resolve(), label: "sports") }

        let car: Car = try c.resolve()
        let sports: Car = try c.resolve(name: "sports")
        let engine: Engine = try c.resolve()
        #expect(car.label == "plain")
        #expect(car.engine.label == "v8")
        #expect(sports.label == "sports")
        #expect(engine.label == "v8")
    }

    // MARK: Runtime arguments

    @Test func runtimeArgumentsOfEveryArityUpToFive() throws {
        let c = Container()
        c.register(Signature.self) { _ in Signature() }
        c.register(Signature.self) { (_, a: Int) in Signature("\(a)") }
        c.register(Signature.self) { (_, a: Int, b: String) in Signature("\(a)", b) }
        c.register(Signature.self) { (_, a: Int, b: String, d: Double) in Signature("\(a)", b, "\(d)") }
        c.register(Signature.self) { (_, a: Int, b: String, d: Double, e: Bool) in
            Signature("\(a)", b, "\(d)", "\(e)")
        }
        c.register(Signature.self) { (_, a: Int, b: String, d: Double, e: Bool, f: Character) in
            Signature("\(a)", b, "\(d)", "\(e)", "\(f)")
        }

        #expect(try c.resolve(Signature.self) == Signature())
        #expect(try c.resolve(Signature.self, arguments: 1) == Signature("1"))
        #expect(try c.resolve(Signature.self, arguments: 2, "two") == Signature("2", "two"))
        #expect(try c.resolve(Signature.self, arguments: 3, "three", 3.5) == Signature("3", "three", "3.5"))
        #expect(
            try c.resolve(Signature.self, arguments: 4, "four", 4.5, true) == Signature("4", "four", "4.5", "true"))
        #expect(
            try c.resolve(Signature.self, arguments: 5, "five", 5.5, false, Character("x"))
                == Signature("5", "five", "5.5", "false", "x"))
        // Different values reach the factory on every resolve.
        #expect(try c.resolve(Signature.self, arguments: 42, "answer") == Signature("42", "answer"))
    }

    @Test func argumentTypesAreExactPartOfTheKey() throws {
        let c = Container()
        c.register(Signature.self) { (_, a: Int, b: String) in Signature("\(a)", b) }

        // Same arity, other types, or other order: a different key.
        #expect(resolutionError { try c.resolve(Signature.self, arguments: "x", 1) }?.kind == .notRegistered)
        #expect(resolutionError { try c.resolve(Signature.self, arguments: 1, 2) }?.kind == .notRegistered)
        #expect(resolutionError { try c.resolve(Signature.self, arguments: 1) }?.kind == .notRegistered)
        #expect(resolutionError { try c.resolve(Signature.self) }?.kind == .notRegistered)
    }

    @Test func namedRegistrationWithArguments() throws {
        let c = Container()
        c.register(Signature.self, name: "formal") { (_, name: String, times: Int) in
            Signature("formal", name, "\(times)")
        }
        c.register(Signature.self) { (_, name: String, times: Int) in Signature("plain", name, "\(times)") }

        #expect(try c.resolve(Signature.self, name: "formal", arguments: "Ann", 3) == Signature("formal", "Ann", "3"))
        #expect(try c.resolve(Signature.self, arguments: "Bob", 2) == Signature("plain", "Bob", "2"))
    }

    @Test func sameServiceWithDifferentArgumentShapesCoexists() throws {
        let c = Container()
        c.register(Signature.self) { _ in Signature("none") }
        c.register(Signature.self) { (_, a: Int) in Signature("int", "\(a)") }
        c.register(Signature.self) { (_, a: String) in Signature("string", a) }
        c.register(Signature.self) { (_, a: Int, b: Int) in Signature("int,int", "\(a)", "\(b)") }

        #expect(try c.resolve(Signature.self) == Signature("none"))
        #expect(try c.resolve(Signature.self, arguments: 7) == Signature("int", "7"))
        #expect(try c.resolve(Signature.self, arguments: "seven") == Signature("string", "seven"))
        #expect(try c.resolve(Signature.self, arguments: 1, 2) == Signature("int,int", "1", "2"))
    }

    @Test func argumentsReachFactoryThroughTheFactorysResolver() throws {
        let c = Container()
        c.register(Signature.self) { (_, a: Int, b: String) in Signature("\(a)", b) }
        c.register(Car.self) { r in
            let signature = try r.resolve(Signature.self, arguments: 9, "nine")
            return Car(engine: Engine(), label: signature.values.joined(separator: "-"))
        }
        #expect(try c.resolve(Car.self).label == "9-nine")
    }

    @Test func aSingleVoidArgumentIsNoArgument() throws {
        let c = Container()
        c.register(Engine.self) { (_, _: Void) in Engine("void") }
        #expect(try c.resolve(Engine.self).label == "void")
        #expect(try c.resolve(Engine.self, arguments: ()).label == "void")
        c.register(Car.self) { r in Car(engine: try r.resolve(Engine.self, arguments: ()), label: "car") }
        #expect(try c.resolve(Car.self).engine.label == "void")

        c.register(Engine.self) { _ in Engine("plain") }  // The same key: it replaces the registration.
        #expect(try c.resolve(Engine.self, arguments: ()).label == "plain")
        #expect(try c.resolve(Car.self).engine.label == "plain")
    }

    @Test func aServiceTypeGivenAsAValueIsTheKeyOfEveryResolve() throws {
        class Vehicle {
            let label: String
            init(_ label: String) { self.label = label }
        }
        final class Truck: Vehicle {}
        let type: Vehicle.Type = Truck.self
        let c = Container()
        c.register(type) { _ in Truck("truck") }
        c.register(type) { (_, label: String) in Truck(label) }
        #expect(try c.resolve(type).label == "truck")
        #expect(try c.resolve(type, arguments: "given").label == "given")
        #expect(throws: ResolutionError.self, "registered for Truck, not Vehicle") { try c.resolve(Vehicle.self) }
        c.register(Engine.self) { r in
            Engine(try r.resolve(type).label + " " + (try r.resolve(type, arguments: "x")).label)
        }
        #expect(try c.resolve(Engine.self).label == "truck x")
    }

    @Test func argumentsGiveTheSameResultsOnEveryResolveInEveryScope() throws {
        let c = Container()
        let built = Counter()
        c.register(Engine.self) { (_, label: String) in
            built.increment()
            return Engine(label)
        }
        c.register(Engine.self, name: "transient") { (_, label: String, times: Int) in
            Engine(String(repeating: label, count: times))
        }
        .inObjectScope(.transient)
        c.register(Car.self) { (r, label: String) in
            let first = try r.resolve(Engine.self, arguments: label)
            #expect(try r.resolve(Engine.self, arguments: label) === first, "graph scope shares within a graph")
            return Car(engine: first, label: try r.resolve(Engine.self, name: "transient", arguments: label, 2).label)
        }

        // The first resolve of a key finds its registration under the locks; later ones, in the thread's cache.
        for round in 1...3 {
            let label = "v\(round)"
            let car = try c.resolve(Car.self, arguments: label)
            #expect(car.engine.label == label && car.label == label + label)
            #expect(built.value == 2 * round - 1, "one graph-scoped engine per graph")
            let engine = try c.resolve(Engine.self, arguments: label)
            #expect(engine !== car.engine, "a new graph for each top-level resolve")
            #expect(try c.resolve(Engine.self, name: "transient", arguments: "x", round).label.count == round)
            #expect(built.value == 2 * round)
        }

        // A replaced registration is seen at once.
        c.register(Engine.self) { (_, label: String) in Engine("replaced " + label) }
        #expect(try c.resolve(Engine.self, arguments: "x").label == "replaced x")
        // Through the requirement itself, with the name spelled out.
        #expect(try c.resolve(Engine.self, name: nil, arguments: "y").label == "replaced y")
        #expect(try c.resolve(Engine.self, name: Optional("transient"), arguments: "z", 3).label == "zzz")
    }

    @Test func aResolverOfYourOwnGetsEveryResolveThroughItsRequirements() throws {
        /// A test double that answers every resolve itself.
        final class StubResolver: Resolver {
            let calls = Recorder()
            func resolve<Service>(_ serviceType: Service.Type, name: String?) throws -> Service {
                calls.record("\(Service.self) \(name ?? "-")")
                return Signature("stub") as! Service
            }
            func resolve<Service, each Argument>(
                _ serviceType: Service.Type, name: String?, arguments: repeat each Argument
            ) throws -> Service {
                var values: [String] = []
                for argument in repeat each arguments { values.append("\(argument)") }
                calls.record("\(Service.self) \(name ?? "-") \(values.joined(separator: ","))")
                return Signature(values) as! Service
            }
        }
        let stub = StubResolver()
        let resolver: any Resolver = stub
        #expect(try resolver.resolve(Signature.self) == Signature("stub"))
        #expect(try resolver.resolve(Signature.self, arguments: 1, "two") == Signature(["1", "two"]))
        #expect(try resolver.resolve(Signature.self, name: "n", arguments: 3) == Signature(["3"]))
        let inferred: Signature = try stub.resolve(arguments: 4)
        #expect(inferred == Signature(["4"]))
        #expect(
            stub.calls.events == [
                "Signature -", "Signature - 1,two", "Signature n 3", "Signature - 4",
            ])
    }

    // MARK: Instances

    @Test func instanceRegistrationHandsOutTheSameInstance() throws {
        let c = Container()
        let clock = Clock()
        let registration = c.register(Clock.self, instance: clock)

        #expect(try c.resolve(Clock.self) === clock)
        #expect(try c.resolve(Clock.self) === clock)
        #expect(try c.makeChild().resolve(Clock.self) === clock)
        #expect(registration.scope == .permanent)
    }

    @Test func instanceRegistrationWithName() throws {
        let c = Container()
        let utc = Clock()
        let local = Clock()
        c.register(Clock.self, name: "utc", instance: utc)
        c.register(Clock.self, name: "local", instance: local)
        #expect(try c.resolve(Clock.self, name: "utc") === utc)
        #expect(try c.resolve(Clock.self, name: "local") === local)
        #expect(!c.isRegistered(Clock.self))
    }

    @Test func instanceRegistrationIsKeptByTheContainer() throws {
        let c = Container()
        let ref = weakly {
            let clock = Clock()
            c.register(Clock.self, instance: clock)
            return clock
        }
        #expect(ref.object != nil)
        #expect(try c.resolve(Clock.self) === ref.object)
    }

    @Test func anInstanceIsHeldFromItsRegistrationAndReleasedWithItsContainer() throws {
        let request = Container().makeChild()
        let released = Counter()
        let clock = Clock()
        request.register(Clock.self, instance: clock).onRelease { _ in released.increment() }
        request.close()  // never resolved: the container held it all the same
        #expect(released.value == 1)

        let session = Container()
        session.register(Clock.self, instance: clock).onRelease { _ in released.increment() }
        #expect(try session.resolve(Clock.self) === clock)
        session.resetObjectScope(.permanent)
        #expect(released.value == 2)
        #expect(try session.resolve(Clock.self) === clock)  // the registration gives it back after a reset
    }

    // MARK: Re-registration

    @Test func reRegistrationReplacesTheEarlierRegistration() throws {
        let c = Container()
        let first = c.register(Engine.self) { _ in Engine("first") }
        let second = c.register(Engine.self) { _ in Engine("second") }.inObjectScope(.transient)

        #expect(try c.resolve(Engine.self).label == "second")
        #expect(first.scope == nil)
        #expect(second.scope == .transient)

        // The replaced registration's handle no longer configures anything.
        first.inObjectScope(.permanent)
        #expect(second.scope == .transient)
        #expect(try c.resolve(Engine.self) !== c.resolve(Engine.self))
    }

    @Test func reRegistrationDropsThePermanentInstanceItHeld() throws {
        let c = Container()
        c.register(Engine.self) { _ in Engine("first") }.inObjectScope(.permanent)
        let old = try weakly { try c.resolve(Engine.self) }
        #expect(old.object != nil, "the container keeps a permanent instance")

        c.register(Engine.self) { _ in Engine("second") }.inObjectScope(.permanent)
        #expect(old.object == nil)
        #expect(try c.resolve(Engine.self).label == "second")
    }

    @Test func reRegistrationDropsAnInstanceRegistration() throws {
        let c = Container()
        let old = weakly {
            let clock = Clock()
            c.register(Clock.self, instance: clock)
            return clock
        }
        let replacement = Clock()
        c.register(Clock.self, instance: replacement)
        #expect(old.object == nil)
        #expect(try c.resolve(Clock.self) === replacement)
    }

    // MARK: isRegistered

    @Test func isRegisteredLooksHereAndInAncestors() {
        let root = Container()
        let middle = root.makeChild()
        let leaf = middle.makeChild()
        root.register(Engine.self) { _ in Engine() }
        middle.register(Car.self, name: "sports") { r in Car(engine: try r.resolve(), label: "sports") }

        #expect(root.isRegistered(Engine.self))
        #expect(leaf.isRegistered(Engine.self))
        #expect(leaf.isRegistered(Car.self, name: "sports"))
        #expect(middle.isRegistered(Car.self, name: "sports"))
        #expect(!root.isRegistered(Car.self, name: "sports"), "a parent never sees its child's registrations")
        #expect(!leaf.isRegistered(Car.self), "the unnamed Car is another key")
        #expect(!leaf.isRegistered(Engine.self, name: "sports"))
        #expect(!leaf.isRegistered(Clock.self))
    }

    @Test func isRegisteredIsTrueForAnyArgumentShape() {
        let c = Container()
        c.register(Signature.self) { (_, a: Int, b: String) in Signature("\(a)", b) }
        c.register(Signature.self, name: "one") { (_, a: Int) in Signature("\(a)") }

        #expect(c.isRegistered(Signature.self))
        #expect(c.isRegistered(Signature.self, name: "one"))
        #expect(c.makeChild().isRegistered(Signature.self, name: "one"))
        #expect(!c.isRegistered(Signature.self, name: "two"))
    }

    // MARK: unregister and removeAll

    @Test func unregisterRemovesEveryArgumentShapeOfThatName() throws {
        let c = Container()
        c.register(Signature.self) { _ in Signature() }
        c.register(Signature.self) { (_, a: Int) in Signature("\(a)") }
        c.register(Signature.self) { (_, a: String, b: Int) in Signature(a, "\(b)") }
        c.register(Signature.self, name: "kept") { _ in Signature("kept") }

        c.unregister(Signature.self)

        #expect(!c.isRegistered(Signature.self))
        #expect(resolutionError { try c.resolve(Signature.self) }?.kind == .notRegistered)
        #expect(resolutionError { try c.resolve(Signature.self, arguments: 1) }?.kind == .notRegistered)
        #expect(resolutionError { try c.resolve(Signature.self, arguments: "a", 1) }?.kind == .notRegistered)
        #expect(c.isRegistered(Signature.self, name: "kept"))
        #expect(try c.resolve(Signature.self, name: "kept") == Signature("kept"))
    }

    @Test func unregisterByName() throws {
        let c = Container()
        c.register(Signature.self) { _ in Signature("plain") }
        c.register(Signature.self, name: "gone") { _ in Signature("gone") }

        c.unregister(Signature.self, name: "gone")

        #expect(!c.isRegistered(Signature.self, name: "gone"))
        #expect(try c.resolve(Signature.self) == Signature("plain"))
    }

    @Test func treeDepthCountsAncestors() {
        let root = Container()
        let child = root.makeChild()
        let grandchild = Container(parent: child)
        #expect([root.treeDepth, child.treeDepth, grandchild.treeDepth] == [0, 1, 2])
    }

    @Test func unregisterInChildLeavesTheParentsRegistrationVisible() throws {
        let parent = Container()
        let child = parent.makeChild()
        parent.register(Engine.self) { _ in Engine("parent") }
        child.register(Engine.self) { _ in Engine("child") }
        #expect(try child.resolve(Engine.self).label == "child")

        child.unregister(Engine.self)

        #expect(try child.resolve(Engine.self).label == "parent")
        #expect(child.isRegistered(Engine.self))
        #expect(try parent.resolve(Engine.self).label == "parent")
    }

    @Test func unregisterDropsThePermanentInstance() throws {
        let c = Container()
        c.register(Engine.self) { _ in Engine() }.inObjectScope(.permanent)
        let old = try weakly { try c.resolve(Engine.self) }
        #expect(old.object != nil)

        c.unregister(Engine.self)
        #expect(old.object == nil)
    }

    @Test func removeAllRemovesThisContainersRegistrationsOnly() throws {
        let parent = Container()
        let child = parent.makeChild()
        parent.register(Engine.self) { _ in Engine("parent") }
        child.register(Engine.self) { _ in Engine("child") }
        child.register(Clock.self) { _ in Clock() }
        child.register(Signature.self, name: "x") { (_, a: Int) in Signature("\(a)") }

        child.removeAll()

        #expect(try child.resolve(Engine.self).label == "parent")
        #expect(!child.isRegistered(Clock.self))
        #expect(!child.isRegistered(Signature.self, name: "x"))
        #expect(parent.isRegistered(Engine.self))
    }

    @Test func removeAllDropsPermanentInstances() throws {
        let c = Container()
        c.register(Engine.self) { _ in Engine() }.inObjectScope(.permanent)
        let old = try weakly { try c.resolve(Engine.self) }
        #expect(old.object != nil)

        c.removeAll()
        #expect(old.object == nil)
        #expect(!c.isRegistered(Engine.self))
    }

    // MARK: resetObjectScope

    @Test func resetPermanentDropsOnlyPermanentInstances() throws {
        let c = Container()
        c.register(Engine.self) { _ in Engine("permanent") }.inObjectScope(.permanent)
        c.register(Clock.self) { _ in Clock() }.inObjectScope(.weak)
        let permanent = try c.resolve(Engine.self)
        let weak = try c.resolve(Clock.self)

        c.resetObjectScope(.permanent)

        #expect(try c.resolve(Engine.self) !== permanent, "a new permanent instance after the reset")
        #expect(try c.resolve(Clock.self) === weak, "the weak instance is untouched")
        #expect(c.isRegistered(Engine.self), "the registration stays")
    }

    @Test func resetPermanentDropsTheContainersReference() throws {
        let c = Container()
        c.register(Engine.self) { _ in Engine() }.inObjectScope(.permanent)
        let old = try weakly { try c.resolve(Engine.self) }
        #expect(old.object != nil)

        c.resetObjectScope(.permanent)
        #expect(old.object == nil)
    }

    @Test func resetContainerScopeIsResetPermanent() throws {
        let c = Container()
        c.register(Engine.self) { _ in Engine() }.inObjectScope(.permanent)
        c.register(Clock.self) { _ in Clock() }.inObjectScope(.container)
        let engine = try c.resolve(Engine.self)
        let clock = try c.resolve(Clock.self)

        c.resetObjectScope(.container)

        #expect(try c.resolve(Engine.self) !== engine)
        #expect(try c.resolve(Clock.self) !== clock)
    }

    @Test func resetWeakDropsOnlyWeakInstances() throws {
        let c = Container()
        c.register(Engine.self) { _ in Engine() }.inObjectScope(.permanent)
        c.register(Clock.self) { _ in Clock() }.inObjectScope(.weak)
        let permanent = try c.resolve(Engine.self)
        let weak = try c.resolve(Clock.self)  // still held here: only the reset can make the next one new

        c.resetObjectScope(.weak)

        #expect(try c.resolve(Clock.self) !== weak)
        #expect(try c.resolve(Engine.self) === permanent)
    }

    @Test(arguments: [ObjectScope.graph, .transient])
    func resetOfScopesThatKeepNothingDoesNothing(scope: ObjectScope) throws {
        let c = Container()
        c.register(Engine.self) { _ in Engine() }.inObjectScope(.permanent)
        c.register(Clock.self) { _ in Clock() }.inObjectScope(.weak)
        let permanent = try c.resolve(Engine.self)
        let weak = try c.resolve(Clock.self)

        c.resetObjectScope(scope)

        #expect(try c.resolve(Engine.self) === permanent)
        #expect(try c.resolve(Clock.self) === weak)
    }

    @Test func resetNeverTouchesAncestors() throws {
        let parent = Container()
        let child = parent.makeChild()
        parent.register(Engine.self) { _ in Engine("parent") }.inObjectScope(.permanent)
        parent.register(Clock.self) { _ in Clock() }.inObjectScope(.weak)
        child.register(Engine.self, name: "own") { _ in Engine("child") }.inObjectScope(.permanent)
        let shared = try child.resolve(Engine.self)
        let sharedWeak = try child.resolve(Clock.self)
        let own = try child.resolve(Engine.self, name: "own")

        child.resetObjectScope(.permanent)
        child.resetObjectScope(.weak)

        #expect(try child.resolve(Engine.self) === shared)
        #expect(try parent.resolve(Engine.self) === shared)
        #expect(try child.resolve(Clock.self) === sharedWeak)
        #expect(try child.resolve(Engine.self, name: "own") !== own)
    }

    // MARK: Registration handle

    @Test func registrationScopeReportsTheCurrentScope() {
        let c = Container()
        let registration = c.register(Engine.self) { _ in Engine() }
        #expect(registration.scope == .graph, "the container's default scope")

        registration.inObjectScope(.weak)
        #expect(registration.scope == .weak)

        #expect(Container(defaultScope: .transient).register(Engine.self) { _ in Engine() }.scope == .transient)

        c.unregister(Engine.self)
        #expect(registration.scope == nil, "a removed registration has no scope")
    }

    @Test func chainingConfiguresTheRegistration() throws {
        let c = Container()
        let recorder = Recorder()
        let registration = c.register(Engine.self) { _ in Engine() }
            .inObjectScope(.permanent)
            .initCompleted { _, _ in recorder.record("first") }
            .initCompleted { _, _ in recorder.record("second") }
        #expect(registration.scope == .permanent)

        let a = try c.resolve(Engine.self)
        let b = try c.resolve(Engine.self)
        #expect(a === b)
        #expect(recorder.events == ["first", "second"], "hooks run once, for the one permanent instance")
    }

    @Test func aKeptRegistrationCanBeConfiguredLater() throws {
        let c = Container()
        let recorder = Recorder()
        let registration = c.register(Engine.self) { _ in Engine() }
        registration.inObjectScope(.permanent)
        registration.initCompleted { _, engine in recorder.record(engine.label) }

        #expect(try c.resolve(Engine.self) === c.resolve(Engine.self))
        #expect(recorder.events == ["engine"])
    }

    // MARK: Every overload, through every kind of resolver (§10.1)

    @Test func everyOverloadWorksOnAConcreteContainer() throws {
        let c = Self.overloadContainer()
        let plain = try c.resolve(Signature.self)
        let inferred: Signature = try c.resolve()
        let named = try c.resolve(Signature.self, name: "named")
        let namedInferred: Signature = try c.resolve(name: "named")
        let oneArgument = try c.resolve(Signature.self, arguments: 5)
        let inferredWithArguments: Signature = try c.resolve(arguments: 5)
        let namedWithArguments = try c.resolve(Signature.self, name: "named", arguments: 6, "six")
        let optionalName = try c.resolve(Signature.self, name: nil)

        #expect(
            [
                plain, inferred, named, namedInferred, oneArgument, inferredWithArguments, namedWithArguments,
                optionalName,
            ]
                == Self.expectedOverloadResults)
    }

    @Test func everyOverloadWorksOnAnyResolver() throws {
        let resolver: any Resolver = Self.overloadContainer()
        #expect(try Self.exerciseOverloads(resolver) == Self.expectedOverloadResults)
    }

    @Test func everyOverloadWorksOnTheResolverAFactoryReceives() throws {
        let c = Self.overloadContainer()
        let results = Box<[Signature]>()
        c.register(Car.self) { r in
            results.value = try Self.exerciseOverloads(r)
            return Car(engine: Engine(), label: "probe")
        }
        _ = try c.resolve(Car.self)
        #expect(results.value == Self.expectedOverloadResults)
    }

    @Test func everyOverloadWorksOnTheResolverAHookReceives() throws {
        let c = Self.overloadContainer()
        let results = Box<[Signature]>()
        c.register(Car.self) { _ in Car(engine: Engine(), label: "probe") }
            .initCompleted { r, _ in results.value = try Self.exerciseOverloads(r) }
        _ = try c.resolve(Car.self)
        #expect(results.value == Self.expectedOverloadResults)
    }

    private static func overloadContainer() -> Container {
        let c = Container()
        c.register(Signature.self) { _ in Signature("plain") }
        c.register(Signature.self, name: "named") { _ in Signature("named") }
        c.register(Signature.self) { (_, a: Int) in Signature("one", "\(a)") }
        c.register(Signature.self, name: "named") { (_, a: Int, b: String) in Signature("named", "\(a)", b) }
        return c
    }

    private static let expectedOverloadResults = [
        Signature("plain"), Signature("plain"), Signature("named"), Signature("named"), Signature("one", "5"),
        Signature("one", "5"), Signature("named", "6", "six"), Signature("plain"),
    ]

    private static func exerciseOverloads(_ r: any Resolver) throws -> [Signature] {
        let plain = try r.resolve(Signature.self)
        let inferred: Signature = try r.resolve()
        let named = try r.resolve(Signature.self, name: "named")
        let namedInferred: Signature = try r.resolve(name: "named")
        let oneArgument = try r.resolve(Signature.self, arguments: 5)
        let inferredWithArguments: Signature = try r.resolve(arguments: 5)
        let namedWithArguments = try r.resolve(Signature.self, name: "named", arguments: 6, "six")
        let optionalName = try r.resolve(Signature.self, name: nil)
        return [
            plain, inferred, named, namedInferred, oneArgument, inferredWithArguments, namedWithArguments,
            optionalName,
        ]
    }

    // MARK: Resolvers outliving their resolution (§3)

    @Test func aCapturedResolverStartsANewResolutionAfterwards() throws {
        let c = Container()
        let captured = Box<any Resolver>()
        c.register(Engine.self) { _ in Engine() }  // graph scope
        c.register(Car.self) { r in
            captured.value = r
            return Car(engine: try r.resolve(), label: "car")
        }

        let car = try c.resolve(Car.self)
        let resolver = try #require(captured.value)
        let later = try resolver.resolve(Engine.self)
        let again = try resolver.resolve(Engine.self)

        #expect(later !== car.engine, "a new resolution builds a new graph instance")
        #expect(later !== again, "each later resolve is a resolution of its own")
    }

    @Test func aCapturedResolverResolvesInTheContainerThatBeganTheResolution() throws {
        let parent = Container()
        let child = parent.makeChild()
        let captured = Box<any Resolver>()
        parent.register(Car.self) { r in
            captured.value = r
            return Car(engine: try r.resolve(), label: "car")
        }
        parent.register(Engine.self) { _ in Engine("parent") }
        child.register(Engine.self) { _ in Engine("child") }

        let car = try child.resolve(Car.self)
        #expect(car.engine.label == "child")
        let resolver = try #require(captured.value)
        #expect(try resolver.resolve(Engine.self).label == "child")
    }

    // MARK: A container's own resolve inside a factory (§10.12)

    @Test func containerResolveInsideAFactoryIsASeparateResolution() throws {
        let c = Container()
        c.register(Engine.self) { _ in Engine() }  // graph scope
        let separate = Box<Engine>()
        c.register(Car.self) { [unowned c] r in
            separate.value = try c.resolve(Engine.self)
            return Car(engine: try r.resolve(), label: "car")
        }

        let car = try c.resolve(Car.self)
        let other = try #require(separate.value)
        #expect(other !== car.engine, "the container's resolve does not share the factory's graph")
    }

    @Test func containerResolveInsideAFactoryStartsAtDepthZero() throws {
        let c = Container()
        c.maxResolutionDepth = 1
        // outer (0) → middle (1) ⇢ container.resolve: inner (0) → leaf (1)
        c.register(Signature.self, name: "outer") { r in try r.resolve(Signature.self, name: "middle") }
        c.register(Signature.self, name: "middle") { [unowned c] _ in try c.resolve(Signature.self, name: "inner") }
        c.register(Signature.self, name: "inner") { r in try r.resolve(Signature.self, name: "leaf") }
        c.register(Signature.self, name: "leaf") { _ in Signature("leaf") }

        #expect(try c.resolve(Signature.self, name: "outer") == Signature("leaf"))
    }

    @Test func containerResolveInsideAPermanentFactoryDoesNotDeadlock() throws {
        let c = Container()
        c.register(Engine.self) { _ in Engine("permanent") }.inObjectScope(.permanent)
        c.register(Car.self) { [unowned c] _ in
            Car(engine: try c.resolve(Engine.self), label: "car")
        }.inObjectScope(.permanent)

        let car = try c.resolve(Car.self)
        #expect(car.engine === (try c.resolve(Engine.self)))
        #expect(try c.resolve(Car.self) === car)
    }
}
