import Arbor
import ArborTestSupport
import Foundation
import Testing

// Misuse: everything a user can get wrong, and what Arbor answers. Each test backs one row of the misuse table in
// the documentation: the mistake, the error's reason and the gist of its message — or, where Arbor does not treat
// it as an error, the behaviour a user gets instead.

@Suite struct MisuseTests {
    // MARK: Asking for something that is not there

    @Test func wrongArgumentTypesListTheRegisteredShapes() throws {
        let container = Container()
        container.register(MUGreeter.self) { (_, name: String, times: Int) in MUGreeter(name, times) }
        container.register(MUGreeter.self) { (_, name: String) in MUGreeter(name, 1) }

        // 3.0 is a Double, not an Int: a different key.
        let error = try #require(resolutionError { try container.resolve(MUGreeter.self, arguments: "Ann", 3.0) })
        #expect(error.kind == .notRegistered)
        #expect(error.key == ServiceKey(MUGreeter.self, arguments: String.self, Double.self))
        #expect(
            Set(error.registeredAlternatives)
                == [
                    ServiceKey(MUGreeter.self, arguments: String.self, Int.self),
                    ServiceKey(MUGreeter.self, arguments: String.self),
                ])
        let text = "\(error)"
        #expect(text.contains("MUGreeter(arguments: String, Double)"))
        #expect(text.contains("registered for MUGreeter:"))
        #expect(text.contains("MUGreeter(arguments: String, Int)"))
        #expect(text.contains("container.register(MUGreeter.self) { (r, arg1: String, arg2: Double) in ... }"))
        // The usual cause: a value passed as its own type where the registration takes a protocol or an optional.
        #expect(text.contains("Arguments match by the types they are passed as"))
        #expect(text.contains("e.g. arguments: client as any HTTPClient, or title as String?."))
    }

    @Test func missingArgumentsListTheRegisteredShapes() throws {
        let container = Container()
        container.register(MUGreeter.self) { (_, name: String, times: Int) in MUGreeter(name, times) }
        let error = try #require(resolutionError { try container.resolve(MUGreeter.self) })
        #expect(error.kind == .notRegistered)
        #expect(error.registeredAlternatives == [ServiceKey(MUGreeter.self, arguments: String.self, Int.self)])
        #expect("\(error)".contains("registered for MUGreeter: MUGreeter(arguments: String, Int)"))
        #expect(!"\(error)".contains("Arguments match by"), "no arguments were passed: nothing to cast")
    }

    @Test func aMissingNameListsTheNames() throws {
        let parent = Container()
        parent.register(MUCar.self, name: "sports") { _ in MUCar() }
        let child = parent.makeChild()
        child.register(MUCar.self, name: "family") { _ in MUCar() }
        let error = try #require(resolutionError { try child.resolve(MUCar.self, name: "truck") })
        #expect(error.kind == .notRegistered)
        #expect(error.key == ServiceKey(MUCar.self, name: "truck"))
        // Nearest container first.
        #expect(
            error.registeredAlternatives == [
                ServiceKey(MUCar.self, name: "family"), ServiceKey(MUCar.self, name: "sports"),
            ])
        #expect("\(error)".contains("registered for MUCar: MUCar(name: \"family\"), MUCar(name: \"sports\")"))
    }

    @Test func aNameInAnotherCaseOrWithATypoIsSuggested() throws {
        let parent = Container()
        parent.register(MUCar.self, name: "sportsCar") { _ in MUCar() }
        parent.register(MUCar.self, name: "family") { _ in MUCar() }
        parent.register(MUCar.self, name: "van") { _ in MUCar() }
        let child = parent.makeChild()

        let cased = try #require(resolutionError { try child.resolve(MUCar.self, name: "SportsCar") })
        #expect(cased.kind == .notRegistered)
        #expect("\(cased)".contains("Did you mean MUCar(name: \"sportsCar\")? The names differ only in case."))

        let swapped = try #require(resolutionError { try child.resolve(MUCar.self, name: "famliy") })
        #expect("\(swapped)".contains("Did you mean MUCar(name: \"family\")? The names are spelled nearly the same."))
        let slip = try #require(resolutionError { try child.resolve(MUCar.self, name: "famly") })
        #expect("\(slip)".contains("Did you mean MUCar(name: \"family\")? The names are spelled nearly the same."))
        let twoSlips = try #require(resolutionError { try child.resolve(MUCar.self, name: "fmly") })
        #expect(!"\(twoSlips)".contains("Did you mean"), "two edits are too many for a six-letter name")

        // Short names, other argument types and the unnamed key get no suggestion, only the list.
        let short = try #require(resolutionError { try child.resolve(MUCar.self, name: "vat") })
        #expect(!"\(short)".contains("Did you mean"))
        child.register(MUCar.self, name: "truck") { (_, load: Int) in MUCar() }
        let otherArguments = try #require(resolutionError { try child.resolve(MUCar.self, name: "Truck") })
        #expect(!"\(otherArguments)".contains("Did you mean"))
        let unnamed = try #require(resolutionError { try child.resolve(MUCar.self) })
        #expect(!"\(unnamed)".contains("Did you mean"))
    }

    /// A type registered under thousands of names: a missing name's error lists the first twenty, and a missing
    /// optional is `nil`, as with a few. (The list of alternatives was built in time quadratic in their number.)
    @Test func aTypeWithThousandsOfNamesListsAFewAndStillSuggests() throws {
        let container = Container()
        for index in 0..<5_000 { container.register(MUCar.self, name: "car-\(index)") { _ in MUCar() } }
        #expect(try container.resolve(MUCar?.self, name: "missing") == nil)
        let error = try #require(resolutionError { try container.resolve(MUCar.self, name: "car-4999x") })
        #expect(error.registeredAlternatives.count == 5_000)
        let text = "\(error)"
        #expect(text.contains("and 4980 more"))
        #expect(text.contains("Did you mean MUCar(name: \"car-4999\")?"), "a name past the twenty listed")
    }

    @Test func anUnregisteredTypeSaysSoAndShowsHowToRegisterIt() throws {
        let container = Container()
        container.register(MUCar.self) { r in
            _ = try r.resolve(MUEngine.self); return MUCar()
        }
        let error = try #require(resolutionError { try container.resolve(MUCar.self) })
        #expect(error.kind == .notRegistered)
        #expect(error.key == ServiceKey(MUEngine.self))
        #expect(error.path == [ServiceKey(MUCar.self), ServiceKey(MUEngine.self)])
        let text = "\(error)"
        #expect(text.contains("path: MUCar → MUEngine"))
        #expect(text.contains("MUEngine has no registration at all"))
        #expect(text.contains("container.register(MUEngine.self) { r in ... }"))
    }

    @Test func theParentNeverSeesAChildsRegistration() throws {
        let parent = Container()
        let child = parent.makeChild()
        child.register(MUEngine.self) { _ in MUEngine() }
        let error = try #require(resolutionError { try parent.resolve(MUEngine.self) })
        #expect(error.kind == .notRegistered)
        #expect(try parent.resolve(MUEngine?.self) == nil)
    }

    @Test func anOptionalOfAFailingServiceThrowsInsteadOfReturningNil() throws {
        let container = Container()
        container.register(MUEngine.self) { _ in throw TestFailure("broken") }
        let error = try #require(resolutionError { try container.resolve(MUEngine?.self) })
        #expect(error.kind == .factoryFailed)
        // An optional asked for with other argument types than registered is nil: that key has no registration.
        #expect(try container.resolve(MUEngine?.self, arguments: 1) == nil)
    }

    @Test func lazyAndProviderOfAnUnregisteredServiceThrowAtOnce() throws {
        let container = Container()
        #expect(resolutionError { try container.resolve(Lazy<MUEngine>.self) }?.kind == .notRegistered)
        #expect(resolutionError { try container.resolve(Provider<MUEngine>.self) }?.kind == .notRegistered)
    }

    @Test func anArrayOfAServiceIsNotEveryRegistrationAndTheErrorSaysWhatIs() throws {
        let container = Container()
        container.register(MUEngine.self, name: "a") { _ in MUEngine() }
        let error = try #require(resolutionError { try container.resolve([MUEngine].self) })
        #expect(error.kind == .notRegistered)
        #expect("\(error)".contains("For every registration of MUEngine, call resolveAll(MUEngine.self)."))
        #expect(try container.resolveAll(MUEngine.self).count == 1)
    }

    @Test func autoregisteringAnArgumentTheInitializerDoesNotTakeThrowsSayingSo() throws {
        let container = Container()
        container.autoregister(MUEngine.self, arguments: Int.self, initializer: MUEngine.init)
        let error = try #require(resolutionError { try container.resolve(MUEngine.self, arguments: 1) })
        let text = "\(error)"
        #expect(text.contains("MUEngine was autoregistered with the runtime argument type Int"))
        #expect(text.contains("Name only argument types the initializer takes, or register it with a factory."))
    }

    // MARK: Cycles and depth

    @Test func aCycleShowsItAndSuggestsInitCompleted() throws {
        let container = Container()
        container.register(MUParent.self) { r in MUParent(child: try r.resolve()) }
        container.register(MUChild.self) { r in
            let child = MUChild()
            child.parent = try r.resolve(MUParent.self)
            return child
        }
        let error = try #require(resolutionError { try container.resolve(MUParent.self) })
        #expect(error.kind == .circularDependency)
        #expect(error.path == [ServiceKey(MUParent.self), ServiceKey(MUChild.self), ServiceKey(MUParent.self)])
        let text = "\(error)"
        #expect(text.contains("circular dependency MUParent → MUChild → MUParent"))
        #expect(text.contains("initCompleted"))
    }

    @Test func aServiceThatResolvesItselfIsACycle() throws {
        let container = Container()
        container.register(MUEngine.self) { r in
            _ = try r.resolve(MUEngine.self)
            return MUEngine()
        }.inObjectScope(.permanent)
        let error = try #require(resolutionError { try container.resolve(MUEngine.self) })
        #expect(error.kind == .circularDependency)
        #expect("\(error)".contains("circular dependency MUEngine → MUEngine"))
        // Nothing is kept: fixing the registration makes it resolve.
        container.register(MUEngine.self) { _ in MUEngine() }.inObjectScope(.permanent)
        _ = try container.resolve(MUEngine.self)
    }

    @Test func aHookThatResolvesItsOwnSharedInstanceGetsThatInstance() throws {
        for scope in [ObjectScope.graph, .permanent, .weak] {
            let container = Container()
            let seen = Box<MUEngine>()
            container.register(MUEngine.self) { _ in MUEngine() }
                .inObjectScope(scope)
                .initCompleted { r, engine in seen.value = try r.resolve(MUEngine.self) }
            let engine = try container.resolve(MUEngine.self)
            #expect(seen.value === engine, "\(scope): the hook got another instance")
        }
    }

    @Test func aTransientHookThatResolvesItsOwnTypeEndsAtTheDepthLimit() throws {
        // Each new instance's hook builds another one: an endless chain that stops with an error, not a hang.
        let container = Container()
        let hooks = Counter()
        container.maxResolutionDepth = 20
        container.register(MUEngine.self) { _ in MUEngine() }
            .inObjectScope(.transient)
            .initCompleted { r, _ in
                hooks.increment()
                _ = try r.resolve(MUEngine.self)
            }
        let error = try #require(resolutionError { try container.resolve(MUEngine.self) })
        #expect(error.kind == .depthLimitExceeded)
        #expect(error.path.count == 22)
        #expect(hooks.value == 21)
        #expect("\(error)".contains("give those services a shared scope"))
    }

    @Test func aDepthLimitOfZeroAllowsOnlyServicesWithoutDependencies() throws {
        for limit in [0, -1, -100] {
            let container = Container()
            container.maxResolutionDepth = limit
            #expect(container.maxResolutionDepth == 0, "a negative limit counts as 0")
            container.register(MUEngine.self) { _ in MUEngine() }
            container.register(MUCar.self) { r in
                _ = try r.resolve(MUEngine.self); return MUCar()
            }
            _ = try container.resolve(MUEngine.self)
            let error = try #require(resolutionError { try container.resolve(MUCar.self) })
            #expect(error.kind == .depthLimitExceeded)
            #expect(error.path == [ServiceKey(MUCar.self), ServiceKey(MUEngine.self)])
            #expect("\(error)".contains("The limit is 0"))
        }
    }

    @Test func theDepthLimitIsTheOneOfTheContainerWhereTheResolveStarts() throws {
        let parent = Container()
        parent.register(MUEngine.self) { _ in MUEngine() }
        parent.register(MUCar.self) { r in
            _ = try r.resolve(MUEngine.self); return MUCar()
        }
        let child = parent.makeChild()
        child.maxResolutionDepth = 0
        _ = try parent.resolve(MUCar.self)
        #expect(resolutionError { try child.resolve(MUCar.self) }?.kind == .depthLimitExceeded)
    }

    // MARK: Calling back into the container

    @Test func registeringFromInsideAFactoryWorks() throws {
        // No lock is held while a factory runs: it may register, even the service it resolves next.
        let container = Container()
        container.register(MUCar.self) { [unowned container] r in
            container.register(MUEngine.self) { _ in MUEngine() }
            _ = try r.resolve(MUEngine.self)
            return MUCar()
        }
        let finished = onAnotherThread(timeout: 10) { (try? container.resolve(MUCar.self)) != nil }
        #expect(finished == true, "registering from inside a factory deadlocked or failed")
        #expect(container.isRegistered(MUEngine.self))
    }

    @Test func aFactoryThatReplacesItsOwnRegistrationFinishesWithTheOldOne() throws {
        // The permanent being built belongs to the registration that was replaced: it is returned, not kept, and
        // the next resolve uses the new registration.
        let container = Container()
        let versions = Recorder()
        container.register(MUEngine.self) { [unowned container] _ in
            versions.record("old")
            container.register(MUEngine.self) { _ in
                versions.record("new")
                return MUEngine()
            }.inObjectScope(.permanent)
            return MUEngine()
        }.inObjectScope(.permanent)
        let first = try container.resolve(MUEngine.self)
        let second = try container.resolve(MUEngine.self)
        #expect(first !== second)
        #expect(try container.resolve(MUEngine.self) === second)
        #expect(versions.events == ["old", "new"])
    }

    @Test func removingEverythingFromInsideAFactoryFinishesTheResolve() throws {
        let container = Container()
        container.register(MUEngine.self) { _ in MUEngine() }.inObjectScope(.permanent)
        container.register(MUCar.self) { [unowned container] r in
            _ = try r.resolve(MUEngine.self)
            container.removeAll()
            return MUCar()
        }
        _ = try container.resolve(MUCar.self)
        #expect(!container.isRegistered(MUCar.self))
        #expect(resolutionError { try container.resolve(MUEngine.self) }?.kind == .notRegistered)
    }

    @Test func resolvingThroughTheContainerInsideAFactoryStartsASeparateResolution() throws {
        // The factory should use its resolver; the container's resolve is a new top-level resolution, with its own
        // graph, so graph-scoped instances are not shared with the one being built.
        let container = Container()
        container.register(MUEngine.self) { _ in MUEngine() }
        container.register(MUCar.self) { [unowned container] r in
            MUCar(engine: try r.resolve(), spare: try container.resolve(MUEngine.self))
        }
        let car = try container.resolve(MUCar.self)
        #expect(car.engine !== car.spare)
    }

    @Test func aPermanentCycleThroughTheContainersResolveFailsInsteadOfDeadlocking() throws {
        // A's factory resolves B through the container (a separate resolution on the same thread), whose factory
        // resolves A, which the outer resolution is building: that would wait forever, so it throws.
        let container = Container()
        container.register(MUParent.self) { [unowned container] _ in
            MUParent(child: try container.resolve(MUChild.self))
        }.inObjectScope(.permanent)
        container.register(MUChild.self) { [unowned container] _ in
            let child = MUChild()
            child.parent = try container.resolve(MUParent.self)
            return child
        }.inObjectScope(.permanent)
        let outcome = onAnotherThread(timeout: 10) { resolutionErrorQuietly { try container.resolve(MUParent.self) } }
        let error = try #require(outcome, "deadlocked")
        #expect(error?.kind == .circularDependency)
        #expect(error.map { "\($0)" }?.contains("resolver it was given") == true)
    }

    /// A graph-scoped factory that resolves its own service through the container recurses, a new resolution at
    /// depth 0 each time, until the stack is nearly used up: the error says that a factory called a container's
    /// `resolve`, not only that the thread's stack is small.
    /// Graph-scoped, and transient (whose outermost build, without hooks or arguments, takes a shorter path: it
    /// overflowed the stack).
    @Test(arguments: [ObjectScope.graph, .transient])
    func aFactoryResolvingItsOwnServiceThroughTheContainerIsToldSoWhenTheStackRunsOut(_ scope: ObjectScope) throws {
        final class Recursive: Sendable {
            let inner: Recursive?
            init(_ inner: Recursive?) { self.inner = inner }
        }
        let container = Container()
        container.register(Recursive.self) { [unowned container] _ in
            Recursive(try container.resolve(Recursive.self))
        }
        .inObjectScope(scope)
        let outcome = onAnotherThread(timeout: 60) { resolutionErrorQuietly { try container.resolve(Recursive.self) } }
        let ended = try #require(outcome, "it did not end")
        let error = try #require(ended)
        #expect(error.kind == .depthLimitExceeded)
        #expect(error.description.contains("called a container's resolve instead of the resolver it was given"))
        #expect(!error.description.contains("larger stack"), "a larger stack would only take longer to run out")
    }

    /// The Swinject habit of wiring a circular pair in a hook through the captured container: the hook's resolve is
    /// a resolution of its own. The error leads with that, not with advice to add the hook the code already has.
    @Test func aHookWiringACircularPairThroughTheContainerIsToldSo() throws {
        final class Coordinator: @unchecked Sendable {
            var router: Router?
        }
        final class Router: @unchecked Sendable {
            weak var coordinator: Coordinator?
        }
        let container = Container()
        container.register(Coordinator.self) { r in
            let coordinator = Coordinator()
            coordinator.router = try r.resolve(Router.self)
            return coordinator
        }
        .inObjectScope(.permanent)
        container.register(Router.self) { _ in Router() }
            .inObjectScope(.permanent)
            .initCompleted { [unowned container] _, router in router.coordinator = try container.resolve() }
        let error = try #require(resolutionError { try container.resolve(Coordinator.self) })
        #expect(error.kind == .circularDependency)
        #expect(error.description.contains("called a container's resolve instead of the resolver it was given"))
        #expect(!error.description.contains("Break the cycle: let one side receive the other in an initCompleted hook"))
    }

    /// The same misuse in `async` factories: a resolve of the container, awaited in a factory, of what the awaiting
    /// resolution is building — the service itself, or a cycle back to it, of any shared scope — throws instead of
    /// waiting for ever (it waited for ever before: the two resolutions of one task were strangers to each other).
    enum AsyncMisuse: String, CaseIterable, CustomTestStringConvertible {
        case itself, cycle, weak, perContainer
        var testDescription: String { rawValue }
    }

    @Test(arguments: AsyncMisuse.allCases)
    func anAsyncFactoryAwaitingTheContainersResolveOfWhatItsResolutionBuildsFails(_ misuse: AsyncMisuse) async throws {
        let container = Container()
        let scope: ObjectScope = misuse == .weak ? .weak : misuse == .perContainer ? .perContainer : .permanent
        container.register(MUParent.self) { [unowned container] _ async throws in
            if misuse == .cycle { return MUParent(child: try await container.resolve(MUChild.self)) }
            _ = try await container.resolve(MUParent.self)
            return MUParent(child: MUChild())
        }
        .inObjectScope(scope)
        container.register(MUChild.self) { [unowned container] _ async throws in
            let child = MUChild()
            child.parent = try await container.resolve(MUParent.self)
            return child
        }
        .inObjectScope(.permanent)
        let resolve = Task { try await container.resolve(MUParent.self) }
        let watchdog = Watchdog("an async resolve of what its own task builds", seconds: Watchdog.patience)
        defer { watchdog.disarm() }
        let error = try #require(await asyncResolutionError { try await resolve.value })
        #expect(error.kind == .circularDependency)
        #expect(error.description.contains("resolver it was given"))
    }

    @Test func aResolverHandedToAnotherThreadStartsANewResolutionThere() throws {
        let container = Container()
        container.register(MUEngine.self) { _ in MUEngine() }
        container.register(MUCar.self) { r in
            let engine: MUEngine = try r.resolve()
            let fromThere = onAnotherThread(timeout: 10) { try? r.resolve(MUEngine.self) }
            return MUCar(engine: engine, spare: fromThere ?? nil)
        }
        let car = try container.resolve(MUCar.self)
        let spare = try #require(car.spare, "the resolver deadlocked or failed on another thread")
        #expect(spare !== car.engine, "another thread shared this resolution's graph")
    }

    // MARK: Containers that are gone

    @Test func aResolverCapturedFromADroppedChildKeepsTheChildAndItsOverrides() throws {
        let app = Container()
        app.register(MUEngine.self) { _ in MUEngine(label: "app") }
        app.register(MUKeeper.self) { r in MUKeeper(resolver: r) }
        var child: Container? = app.makeChild()
        child!.register(MUEngine.self) { _ in MUEngine(label: "child") }
        let keeper = try child!.resolve(MUKeeper.self)
        let childReference = WeakRef(child!)
        child = nil

        // The captured resolver keeps the child alive and resolves from it, with its override.
        #expect(childReference.object != nil)
        #expect(try keeper.resolver!.resolve(MUEngine.self).label == "child")
        #expect(try keeper.resolver!.resolve(Lazy<MUEngine>.self).instance.label == "child")
        _ = keeper
    }

    @Test func theChildIsFreedOnceNothingKeepsItsResolver() throws {
        let app = Container()
        app.register(MUKeeper.self) { r in MUKeeper(resolver: r) }
        let childReference: WeakRef<Container> = try {
            let child = app.makeChild()
            _ = try child.resolve(MUKeeper.self)
            return WeakRef(child)
        }()
        #expect(childReference.object == nil)
    }

    @Test func resolvingFromAClosedChildOrItsCapturedResolverThrowsContainerClosed() throws {
        let app = Container()
        app.register(MUEngine.self) { _ in MUEngine() }
        app.register(MUKeeper.self) { r in MUKeeper(resolver: r) }
        let child = app.makeChild()
        let grandchild = child.makeChild()
        let keeper = try grandchild.resolve(MUKeeper.self)
        child.close()
        for resolve in [{ try child.resolve(MUEngine.self) }, { try grandchild.resolve(MUEngine.self) }] {
            let error = try #require(resolutionError(resolve))
            #expect(error.kind == .containerClosed)
            #expect("\(error)".contains("the container was closed"))
        }
        #expect(resolutionError { try keeper.resolver!.resolve(MUEngine.self) }?.kind == .containerClosed)
        _ = try app.resolve(MUEngine.self)
        #expect("\(try #require(resolutionError { try child.resolve(MUEngine.self) }))".contains("closed one's parent"))
    }

    /// A closed root has no parent to make a new child of: the text says so, and what to do, for the root and for a
    /// child made of it afterwards (an app's second start in a test, with the root the first one's shutdown closed).
    @Test func resolvingUnderAClosedRootSaysToMakeANewRoot() throws {
        let root = Container()
        root.register(MUEngine.self) { _ in MUEngine() }
        _ = try root.resolve(MUEngine.self)  // cached in this thread's look-ups: the cached path says the same
        root.close()
        let request = root.makeChild()
        for resolve in [{ try root.resolve(MUEngine.self) }, { try request.resolve(MUEngine.self) }] {
            let error = try #require(resolutionError(resolve))
            #expect(error.kind == .containerClosed)
            #expect(error.description.contains("The container closed is the root of its tree"))
            #expect(error.description.contains("ArborTesting.overriding(root)"))
            #expect(!error.description.contains("closed one's parent"))
        }
    }

    // MARK: Registrations that are not what they seem

    @Test func registeringTheSameKeyAgainReplacesItSilently() throws {
        let container = Container()
        container.register(MUEngine.self) { _ in MUEngine(label: "first") }.inObjectScope(.permanent)
        let first = try container.resolve(MUEngine.self)
        container.register(MUEngine.self) { _ in MUEngine(label: "second") }.inObjectScope(.permanent)
        let second = try container.resolve(MUEngine.self)
        #expect(first.label == "first" && second.label == "second")
    }

    @Test func configuringAReplacedRegistrationIsIgnored() throws {
        let container = Container()
        let old = container.register(MUEngine.self) { _ in MUEngine(label: "old") }
        container.register(MUEngine.self) { _ in MUEngine(label: "new") }
        old.inObjectScope(.permanent).initCompleted { _, engine in engine.label = "hooked" }
        #expect(old.scope == nil)
        let engine = try container.resolve(MUEngine.self)
        #expect(engine.label == "new")
        #expect(try container.resolve(MUEngine.self) !== engine, "the stale handle's scope was applied")
    }

    @Test func aRegistrationHasTheDefaultScopeUntilInObjectScopeIsApplied() throws {
        // `register(…).inObjectScope(…)` is two steps: a thread that resolves in between gets the container's
        // default scope. Register before other threads resolve, or give the container the default scope you need.
        let container = Container(defaultScope: .graph)
        let registration = container.register(MUEngine.self) { _ in MUEngine() }
        let before = try container.resolve(MUEngine.self)
        registration.inObjectScope(.permanent)
        let after = try container.resolve(MUEngine.self)
        #expect(before !== after)
        #expect(try container.resolve(MUEngine.self) === after)

        let permanentByDefault = Container(defaultScope: .permanent)
        permanentByDefault.register(MUEngine.self) { _ in MUEngine() }
        #expect(try permanentByDefault.resolve(MUEngine.self) === permanentByDefault.resolve(MUEngine.self))
    }

    @Test func implementsWithAnUnrelatedTypeThrowsTypeMismatch() throws {
        let container = Container()
        container.register(MUEngine.self) { _ in MUEngine() }.implements(MUCar.self)
        let error = try #require(resolutionError { try container.resolve(MUCar.self) })
        #expect(error.kind == .typeMismatch)
        let text = "\(error)"
        #expect(text.contains("MUEngine") && text.contains("MUCar"))
    }

    /// `implements` on a registration that was replaced does nothing, as the other calls on it do: it used to forward
    /// the other type to whatever now holds the key, and could replace a live registration with a forward.
    @Test func implementsOnAReplacedRegistrationDoesNothing() throws {
        protocol Vehicle: AnyObject {}
        final class Van: Vehicle {}
        let container = Container()
        let stale = container.register(MUEngine.self) { _ in MUEngine() }
        container.register(MUEngine.self) { _ in MUEngine() }  // replaces it
        stale.implements(MUCar.self)
        #expect(!container.isRegistered(MUCar.self))

        // A stale handle forwarding a type that has a registration of its own: that registration stays.
        let vehicles = Counter()
        let van = container.register(Van.self) { _ in Van() }
        container.register((any Vehicle).self) { _ in
            vehicles.increment()
            return Van()
        }
        container.register(Van.self) { _ in Van() }  // `van` is stale now
        van.implements((any Vehicle).self)
        _ = try container.resolve((any Vehicle).self)
        #expect(vehicles.value == 1, "the protocol's own registration still answers")
    }

    /// `implements` of the registration's own type would replace it with a forward to itself: it does nothing.
    @Test func implementsOfTheRegistrationsOwnTypeDoesNothing() throws {
        let container = Container()
        let built = Counter()
        container.register(MUEngine.self) { _ in
            built.increment()
            return MUEngine()
        }
        .implements(MUEngine.self)
        _ = try container.resolve(MUEngine.self)
        #expect(built.value == 1)
    }

    @Test func aPermanentServiceWithArgumentsKeepsTheFirstArguments() throws {
        let container = Container()
        container.register(MUGreeter.self) { (_, name: String) in MUGreeter(name, 1) }.inObjectScope(.permanent)
        let ann = try container.resolve(MUGreeter.self, arguments: "Ann")
        let bob = try container.resolve(MUGreeter.self, arguments: "Bob")
        #expect(bob === ann)
        #expect(bob.name == "Ann")
    }

    @Test func aWeakValueTypeBehavesAsTransient() throws {
        let container = Container()
        let builds = Counter()
        container.register(MUPoint.self) { _ in
            MUPoint(serial: builds.increment())
        }.inObjectScope(.weak)
        let first = try container.resolve(MUPoint.self)
        let second = try container.resolve(MUPoint.self)
        #expect(first.serial == 1 && second.serial == 2)
    }

    @Test func resettingGraphOrTransientScopesDoesNothing() throws {
        let container = Container()
        container.register(MUEngine.self) { _ in MUEngine() }.inObjectScope(.permanent)
        let engine = try container.resolve(MUEngine.self)
        container.resetObjectScope(.graph)
        container.resetObjectScope(.transient)
        container.resetObjectScope(.weak)
        #expect(try container.resolve(MUEngine.self) === engine)
    }

    @Test func unregisteringInAChildLeavesTheParentsRegistration() throws {
        let parent = Container()
        parent.register(MUEngine.self) { _ in MUEngine(label: "parent") }
        let child = parent.makeChild()
        child.unregister(MUEngine.self)
        #expect(try child.resolve(MUEngine.self).label == "parent")
        child.register(MUEngine.self) { _ in MUEngine(label: "child") }
        #expect(try child.resolve(MUEngine.self).label == "child")
        child.unregister(MUEngine.self)
        #expect(try child.resolve(MUEngine.self).label == "parent")
    }

    @Test func aThrowingHookFailsTheResolveAndNamesItsService() throws {
        let container = Container()
        container.register(MUEngine.self) { _ in MUEngine() }
            .initCompleted { _, _ in throw TestFailure("hook") }
        container.register(MUCar.self) { r in MUCar(engine: try r.resolve()) }
        let error = try #require(resolutionError { try container.resolve(MUCar.self) })
        #expect(error.kind == .factoryFailed)
        #expect(error.key == ServiceKey(MUEngine.self))
        #expect(error.path == [ServiceKey(MUCar.self), ServiceKey(MUEngine.self)])
        #expect("\(error)".contains("an initCompleted hook threw"))
    }

    @Test func aFactoryThatCapturesItsContainerKeepsItAlive() throws {
        // The container keeps its factories, so a factory that captures the container strongly is a retain cycle.
        // Resolve through the factory's resolver instead (or capture the container weakly or unowned).
        let reference: WeakRef<Container> = {
            let container = Container()
            container.register(MUEngine.self) { _ in try container.resolve(MUCar.self).engine ?? MUEngine() }
            container.register(MUCar.self) { _ in MUCar() }
            return WeakRef(container)
        }()
        #expect(reference.object != nil)
        reference.object?.removeAll()  // dropping the registrations breaks the cycle
        #expect(reference.object == nil)
    }

    @Test func aPermanentThatKeepsItsResolverOrAProviderKeepsItsContainerAlive() throws {
        // A resolver, a Provider and an unused Lazy keep the container they resolve from; a permanent instance is
        // kept by its container: together a retain cycle. Keep them out of permanent services, or close() the
        // container, which drops its instances.
        let references: [WeakRef<Container>] = try (0..<3).map { variant in
            let container = Container()
            container.register(MUEngine.self) { _ in MUEngine() }
            container.register(MUKeeper.self) { r in
                switch variant {
                case 0: return MUKeeper(resolver: r)
                case 1: return MUKeeper(provider: try r.resolve(Provider<MUEngine>.self))
                default: return MUKeeper(lazy: try r.resolve(Lazy<MUEngine>.self))
                }
            }.inObjectScope(.permanent)
            _ = try container.resolve(MUKeeper.self)
            return WeakRef(container)
        }
        #expect(references.allSatisfy { $0.object != nil })
        for reference in references { reference.object?.close() }
        #expect(references.allSatisfy { $0.object == nil }, "close() should break the cycle")
    }
}

/// Like `resolutionError`, for use off the test's own thread (records no issue).
private func resolutionErrorQuietly<Result>(_ body: () throws -> Result) -> ResolutionError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? ResolutionError
    }
}

private final class MUGreeter: Sendable {
    let name: String
    let times: Int
    init(_ name: String, _ times: Int) {
        self.name = name
        self.times = times
    }
}

private final class MUEngine: @unchecked Sendable {
    var label: String
    init(label: String = "") { self.label = label }
}

private final class MUCar: Sendable {
    let engine: MUEngine?
    let spare: MUEngine?
    init(engine: MUEngine? = nil, spare: MUEngine? = nil) {
        self.engine = engine
        self.spare = spare
    }
}

private final class MUParent: Sendable {
    let child: MUChild
    init(child: MUChild) { self.child = child }
}

private final class MUChild: @unchecked Sendable {
    weak var parent: MUParent?
}

private final class MUKeeper: Sendable {
    let resolver: (any Resolver)?
    let provider: Provider<MUEngine>?
    let lazy: Lazy<MUEngine>?
    init(resolver: (any Resolver)? = nil, provider: Provider<MUEngine>? = nil, lazy: Lazy<MUEngine>? = nil) {
        self.resolver = resolver
        self.provider = provider
        self.lazy = lazy
    }
}

private struct MUPoint: Sendable {
    let serial: Int
}
