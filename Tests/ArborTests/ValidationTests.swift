import Arbor
import Testing

private final class Engine: @unchecked Sendable {}
private final class Car: @unchecked Sendable {
    let engine: Engine
    init(engine: Engine) { self.engine = engine }
}
private final class Cache: @unchecked Sendable {}
private final class Loader: @unchecked Sendable {
    let cache: Cache
    init(cache: Cache) { self.cache = cache }
}
private final class Parent: @unchecked Sendable {
    let child: Child
    init(child: Child) { self.child = child }
}
private final class Child: @unchecked Sendable {
    weak var parent: Parent?
}
private struct Greeter {
    let text: String
}
private struct Broken: Error {}

@Suite struct ValidationTests {
    @Test func aWellWiredContainerIsValid() {
        let container = Container()
        container.register(Engine.self) { _ in Engine() }.inObjectScope(.permanent)
        container.register(Car.self) { r in Car(engine: try r.resolve()) }

        let report = container.validate()
        #expect(report.isValid)
        #expect(report.problems.isEmpty)
        #expect(Set(report.checked) == [ServiceKey(Engine.self), ServiceKey(Car.self)])
        #expect(report.description == "Validation found no problems in the 2 registrations it checked.")
    }

    @Test func everyFailureIsReportedWithItsPathNotJustTheFirst() throws {
        let container = Container()
        container.register(Car.self) { r in Car(engine: try r.resolve()) }  // Engine is missing
        container.register(Loader.self) { _ in throw Broken() }
        container.register(Cache.self) { _ in Cache() }

        let report = container.validate()
        #expect(!report.isValid)
        #expect(report.problems.count == 2)
        let car = try #require(report.problems.first { $0.key == ServiceKey(Car.self) })
        #expect(car.path == [ServiceKey(Car.self), ServiceKey(Engine.self)])
        guard case .resolutionFailed(let error) = car.kind else {
            Issue.record("expected a resolution failure, got \(car.kind)")
            return
        }
        #expect(error.kind == .notRegistered)
        #expect(report.problems.contains { $0.key == ServiceKey(Loader.self) })
        #expect(report.description.contains("Car does not resolve"))
        #expect(report.description.contains("Loader does not resolve"))
    }

    @Test func validationCreatesNoInstanceInTheRealContainers() throws {
        let builds = Counter()
        let app = Container()
        app.register(Engine.self) { _ in
            builds.increment()
            return Engine()
        }
        .inObjectScope(.permanent)
        let existing = try app.resolve(Engine.self)
        let child = app.makeChild()
        child.register(Car.self) { r in Car(engine: try r.resolve()) }.inObjectScope(.permanent)

        #expect(child.validate().isValid)
        #expect(builds.value == 2)  // once for real, once in the validation's own copy of `app`
        #expect(try app.resolve(Engine.self) === existing)
        #expect(try child.resolve(Car.self).engine === existing)
    }

    @Test func registrationsWithArgumentsAreNotCheckedWithoutSamples() throws {
        let container = Container()
        container.register(Greeter.self) { (_, name: String) in Greeter(text: "Hello, \(name)") }
        container.register(Greeter.self, name: "picky") { (_, name: String) -> Greeter in
            guard !name.isEmpty else { throw Broken() }
            return Greeter(text: name)
        }

        let unchecked = container.validate()
        #expect(unchecked.isValid)
        #expect(unchecked.checked.isEmpty)
        #expect(unchecked.notChecked.count == 2)
        #expect(unchecked.description.contains("runtime arguments"))
        #expect(
            unchecked.description.hasPrefix(
                "Validation found no problems in the 0 registrations it checked; 2 were not checked (below)."))

        let checked = container.validate { samples in
            samples.add(Greeter.self, arguments: "Ann")
            samples.add(Greeter.self, name: "picky", arguments: "")
        }
        #expect(checked.checked.count == 2)
        #expect(checked.notChecked.isEmpty)
        #expect(checked.problems.map(\.key) == [ServiceKey(Greeter.self, name: "picky", arguments: String.self)])
    }

    @Test func aPermanentServiceThatCapturesAWeakOneIsReported() throws {
        let container = Container()
        container.register(Cache.self) { _ in Cache() }.inObjectScope(.weak)
        container.register(Loader.self) { r in Loader(cache: try r.resolve()) }.inObjectScope(.permanent)

        let report = container.validate()
        let captive = try #require(report.problems.first)
        guard case .captiveDependency(let holder) = captive.kind else {
            Issue.record("expected a captive dependency, got \(captive.kind)")
            return
        }
        #expect(holder == ServiceKey(Loader.self))
        #expect(captive.path == [ServiceKey(Loader.self), ServiceKey(Cache.self)])
        #expect(report.description.contains("captured by the permanent Loader"))
        #expect(report.description.contains("though it is weak-scoped."))
        #expect(report.problems.count == 1)
    }

    /// A per-container service kept by a permanent one: the advice is to make the holder per-container or to pass the
    /// service where it is used. A `Provider` the holder keeps resolves where the holder was built, so the report does
    /// not offer it.
    @Test func aPerContainerServiceCapturedByAPermanentOneGetsAdviceThatWorks() throws {
        let app = Container()
        app.register(Cache.self) { _ in Cache() }.inObjectScope(.perContainer)
        app.register(Loader.self) { r in Loader(cache: try r.resolve()) }.inObjectScope(.permanent)
        let text = app.validate().description
        #expect(text.contains("Cache is captured by Loader, which every container shares"))
        #expect(text.contains("Make Loader per-container too, or pass Cache to Loader's methods"))
        #expect(text.contains("it hands every container the same one"))

        // Why: a Provider kept by the permanent service resolves where the service was built, in the container that
        // registered it: the app's one Cache, for every container.
        final class ProvidedLoader: Sendable {
            let caches: Provider<Cache>
            init(caches: Provider<Cache>) { self.caches = caches }
        }
        app.register(ProvidedLoader.self) { r in ProvidedLoader(caches: try r.resolve()) }.inObjectScope(.permanent)
        let first = app.makeChild()
        let second = app.makeChild()
        let loader = try first.resolve(ProvidedLoader.self)
        #expect(try loader.caches.instance === app.resolve(Cache.self))
        #expect(try loader.caches.instance !== first.resolve(Cache.self))
        #expect(try loader.caches.instance !== second.resolve(Cache.self))
    }

    /// The same mistake through a wrapper: a permanent or weak service that keeps a `Provider` or `Lazy` of a
    /// per-container one hands every container the same instance. The report names the wrapper.
    @Test func aProviderOrLazyOfAPerContainerServiceKeptByASharedOneIsReported() throws {
        final class ProvidedLoader: Sendable {
            let caches: Provider<Cache>
            init(caches: Provider<Cache>) { self.caches = caches }
        }
        final class LazyLoader: Sendable {
            let cache: Lazy<Cache>
            init(cache: Lazy<Cache>) { self.cache = cache }
        }
        let app = Container()
        app.register(Cache.self) { _ in Cache() }.inObjectScope(.perContainer)
        app.register(ProvidedLoader.self) { r in ProvidedLoader(caches: try r.resolve()) }.inObjectScope(.permanent)
        app.register(LazyLoader.self) { r in LazyLoader(cache: try r.resolve()) }.inObjectScope(.weak)
        let report = app.validate()
        #expect(report.problems.count == 2)
        for (holder, wrapper) in [
            (ServiceKey(ProvidedLoader.self), ServiceKey(Provider<Cache>.self)),
            (ServiceKey(LazyLoader.self), ServiceKey(Lazy<Cache>.self)),
        ] {
            let problem = try #require(report.problems.first { $0.key == holder })
            guard case .captiveDependency(let kept) = problem.kind else {
                Issue.record("expected a captive dependency, got \(problem.kind)")
                continue
            }
            #expect(kept == holder)
            #expect(problem.path == [holder, wrapper])
            #expect(problem.description.contains("\(wrapper) is kept by \(holder), which every container shares"))
            #expect(problem.description.contains("Make \(holder) per-container too, or pass Cache"))
        }

        // A per-container or transient holder may keep one: it is built, and resolves, in each container.
        let fine = Container()
        fine.register(Cache.self) { _ in Cache() }.inObjectScope(.perContainer)
        fine.register(ProvidedLoader.self) { r in ProvidedLoader(caches: try r.resolve()) }.inObjectScope(.perContainer)
        fine.register(LazyLoader.self) { r in LazyLoader(cache: try r.resolve()) }
        #expect(fine.validate().isValid)
    }

    @Test func aPermanentRegisteredInARequestChildDoesNotKeepAWeakServiceForGood() throws {
        let app = Container()
        app.register(Cache.self) { _ in Cache() }.inObjectScope(.weak)
        let request = app.makeChild()
        request.register(Loader.self) { r in Loader(cache: try r.resolve()) }.inObjectScope(.permanent)
        #expect(request.validate().isValid)  // the child's Loader, and the Cache it keeps, go with the child

        // The same registration in the app's container keeps the weak Cache for as long as the app runs.
        app.register(Loader.self) { r in Loader(cache: try r.resolve()) }.inObjectScope(.permanent)
        let problems = app.makeChild().validate().problems
        #expect(problems.count == 1)
        let problem = try #require(problems.first)
        guard case .captiveDependency(let holder) = problem.kind else {
            Issue.record("expected a captive dependency, got \(problem.kind)")
            return
        }
        #expect(holder == ServiceKey(Loader.self))
        #expect(problem.path.last == ServiceKey(Cache.self))
    }

    @Test func validatingARepresentativeRequestChildWalksTheProblems() {
        // The Testing article's example: a request child with its sample per-request values, and a report read by
        // kind, key and path rather than by its text.
        final class RequestInfo: Sendable {
            let path: String
            init(path: String) { self.path = path }
        }
        final class Handler: Sendable {
            let request: RequestInfo
            let cache: Cache
            init(request: RequestInfo, cache: Cache) {
                self.request = request
                self.cache = cache
            }
        }
        let app = Container()
        app.register(Handler.self) { r in Handler(request: try r.resolve(), cache: try r.resolve()) }
        app.register(Engine.self) { r in
            _ = try r.resolve(Car.self); return Engine()
        }

        let request = app.makeChild()
        request.register(RequestInfo.self, instance: RequestInfo(path: "/notes"))
        var missing: [ServiceKey] = []
        var captives: [ServiceKey] = []
        for problem in request.validate().problems {
            switch problem.kind {
            case .resolutionFailed(let error):
                if case .notRegistered = error.reason { missing.append(error.key) }
                #expect(problem.path.first == problem.key)
            case .captiveDependency(let holder):
                captives.append(holder)
            case .releaseHooksNeverRun:
                Issue.record("no registration here has release hooks: \(problem)")
            }
        }
        #expect(missing == [ServiceKey(Car.self), ServiceKey(Cache.self)])  // Engine's, then Handler's
        #expect(captives.isEmpty)
    }

    /// `onRelease` on a scope whose instances no container holds never runs: the report says so, for each such
    /// registration, and not for the scopes whose containers do run the hooks.
    @Test func releaseHooksThatNeverRunAreAProblem() throws {
        final class Session: Sendable {}
        let strongSession = ObjectScope(name: "session", retention: .strong)
        let weakSession = ObjectScope(name: "weakSession", retention: .weak)
        let app = Container()
        for scope in [ObjectScope.transient, .graph, .weak, weakSession, .permanent, .perContainer, strongSession] {
            app.register(Session.self, name: scope.name) { _ in Session() }.inObjectScope(scope).onRelease { _ in }
        }
        app.register(Engine.self, instance: Engine()).onRelease { _ in }
        app.register(Car.self) { r in Car(engine: try r.resolve()) }  // transient, without hooks

        let report = app.validate()
        let flagged = report.problems.filter {
            if case .releaseHooksNeverRun = $0.kind { return true }
            return false
        }
        #expect(
            flagged.compactMap {
                if case .releaseHooksNeverRun(let scope) = $0.kind { return scope.name } else { return nil }
            }.sorted() == ["graph", "transient", "weak", "weakSession"])
        #expect(
            Set(flagged.map(\.key))
                == Set(["transient", "graph", "weak", "weakSession"].map { ServiceKey(Session.self, name: $0) }))
        #expect(report.problems.count == flagged.count, "each registration resolves")
        let text = try #require(flagged.first { $0.key == ServiceKey(Session.self, name: "graph") }).description
        #expect(text.hasPrefix(#"✗ Session(name: "graph") has onRelease hooks that never run"#))
        #expect(text.contains("which are graph"))
        #expect(text.contains("(.permanent, .perContainer, or one of your own with strong retention)"))
    }

    @Test func aWeakServiceResolvedInAPermanentHookIsCaptiveToo() throws {
        final class Holder: @unchecked Sendable { var cache: Cache? }
        let container = Container()
        container.register(Cache.self) { _ in Cache() }.inObjectScope(.weak)
        container.register(Holder.self) { _ in Holder() }
            .inObjectScope(.permanent)
            .initCompleted { r, holder in holder.cache = try r.resolve() }

        let report = container.validate()
        #expect(
            report.problems.contains { problem in
                if case .captiveDependency(let holder) = problem.kind { return holder == ServiceKey(Holder.self) }
                return false
            })
    }

    @Test func transientAndGraphDependenciesOfAPermanentServiceAreNotCaptives() {
        let container = Container()
        container.register(Cache.self) { _ in Cache() }.inObjectScope(.transient)
        container.register(Engine.self) { _ in Engine() }
        container.register(Loader.self) { r in
            _ = try r.resolve(Engine.self)
            return Loader(cache: try r.resolve())
        }
        .inObjectScope(.permanent)
        #expect(container.validate().isValid)
    }

    @Test func aShortLivedTransientHeldByAPermanentServiceIsReported() throws {
        let container = Container()
        container.register(Cache.self) { _ in Cache() }.inObjectScope(.transient).shortLived()
        container.register(Loader.self) { r in Loader(cache: try r.resolve()) }.inObjectScope(.permanent)
        container.register(Car.self) { _ in Car(engine: Engine()) }.inObjectScope(.transient)

        let report = container.validate()
        #expect(report.problems.count == 1)
        let captive = try #require(report.problems.first)
        guard case .captiveDependency(let holder) = captive.kind else {
            Issue.record("expected a captive dependency, got \(captive.kind)")
            return
        }
        #expect(holder == ServiceKey(Loader.self))
        #expect(captive.path == [ServiceKey(Loader.self), ServiceKey(Cache.self)])
        #expect(report.description.contains("though it is marked short-lived."))
        // Resolving a short-lived service at the top level, or from another transient, is fine.
        container.register(Loader.self) { r in Loader(cache: try r.resolve()) }.inObjectScope(.transient)
        #expect(container.validate().isValid)
    }

    @Test func theDependencyGraphShowsNodesEdgesAndHookEdges() {
        let container = Container()
        container.register(Engine.self) { _ in Engine() }.inObjectScope(.permanent)
        container.register(Car.self, name: "sports") { r in Car(engine: try r.resolve()) }
        container.register(Parent.self) { r in Parent(child: try r.resolve()) }
        container.register(Child.self) { _ in Child() }
            .initCompleted { r, child in child.parent = try r.resolve(Parent.self) }

        let dot = container.dependencyGraphDOT()
        #expect(dot.hasPrefix("digraph Arbor {"))
        #expect(dot.contains(#""Engine" [label="Engine\npermanent"];"#))
        #expect(dot.contains(#""Car(name: \"sports\")" -> "Engine" [label="resolving Car(name: \"sports\")"];"#))
        #expect(dot.contains(#""Parent" -> "Child""#))
        #expect(dot.contains(#""Child" -> "Parent" [style=dashed, label="initCompleted, resolving"#))
        #expect(dot.hasSuffix("}"))
    }

    @Test func aChildIsValidatedWithItsOverrides() {
        let app = Container()
        app.register(Car.self) { r in Car(engine: try r.resolve()) }  // the app forgot Engine
        #expect(!app.validate().isValid)

        let test = app.makeChild()
        test.register(Engine.self) { _ in Engine() }
        #expect(test.validate().isValid)
    }
}
