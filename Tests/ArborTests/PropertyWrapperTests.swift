import Foundation
import Testing

@testable import Arbor

// API.md §9 and §10.11: `Container.current`, `@Inject` and `@LazyInject`.
//
// The process-wide root container is shared by every test in the process, so tests that use it register only the
// private types of this file, and the suite runs serialized.

private final class Engine: Sendable {
    let label: String
    init(_ label: String) { self.label = label }
}

private struct Greeting: Equatable, Sendable {
    let text: String
}

private final class Unregistered {}

private final class Car {
    @Inject var engine: Engine
    @Inject(name: "spare") var spare: Engine
    @Inject(arguments: "Ann", 2) var greeting: Greeting
}

/// `@unchecked`: the wrappers' backing storage is a `var`, which it never reassigns; `LazyInject` is `Sendable`.
private final class Garage: @unchecked Sendable {
    static let engineLine: UInt = #line + 1
    @LazyInject var engine: Engine
    @LazyInject(name: "spare") var spare: Engine
    @LazyInject(arguments: "Bob", 1) var greeting: Greeting
    @LazyInject var missing: Unregistered

    var engineSite: InjectionSite { _engine.site }
}

/// A struct held in a `let`: the lazy getter must not be mutating.
private struct Dashboard {
    @LazyInject var engine: Engine
}

/// Registers the services the owners above need, with labels that tell containers apart.
private func makeContainer(_ label: String, parent: Container? = nil) -> Container {
    let container = Container(parent: parent)
    container.register(Engine.self) { _ in Engine(label) }.inObjectScope(.transient)
    container.register(Engine.self, name: "spare") { _ in Engine("\(label) spare") }
    container.register(Greeting.self) { (_, name: String, times: Int) in
        Greeting(text: Array(repeating: "\(label): hi \(name)", count: times).joined(separator: ", "))
    }
    return container
}

/// Reassigned by its owner: `@Inject` and `@LazyInject` back a `var`.
private final class Workshop {
    @Inject var engine: Engine
    @LazyInject var spare: Engine
}

/// The process-wide root registers this one itself (`DependencyRegistering`, below).
private final class SelfRegistered: Sendable {}

/// How many times the root's `registerDependencies()` ran.
private let rootRegistrations = Counter()

extension Container: DependencyRegistering {  // In an app, a package of its own: `@retroactive DependencyRegistering`.
    public func registerDependencies() {
        rootRegistrations.increment()
        register(SelfRegistered.self) { _ in SelfRegistered() }.inObjectScope(.permanent)
    }
}

@Suite(.serialized) struct PropertyWrapperTests {
    // MARK: Reassigning, and the root's own registrations

    @Test func anOwnerReassignsAnInjectedProperty() {
        let container = makeContainer("app")
        let workshop = Container.$current.withValue(container) { Workshop() }
        #expect(workshop.engine.label == "app")
        workshop.engine = Engine("replaced")
        #expect(workshop.engine.label == "replaced")
        workshop.spare = Engine("set before first use")
        #expect(workshop.spare.label == "set before first use", "nothing is resolved for a set property")
        workshop.spare = Engine("set again")
        #expect(workshop.spare.label == "set again")
    }

    @Test func theProcessWideRootRegistersItsServicesOnFirstUseOnce() throws {
        let root = Container.current
        #expect(try root.resolve(SelfRegistered.self) === (try root.resolve(SelfRegistered.self)))
        #expect(rootRegistrations.value == 1)
        #expect(!Container().isRegistered(SelfRegistered.self), "only the process-wide root registers itself")
        let child = root.makeChild()
        #expect(child.isRegistered(SelfRegistered.self))
    }

    // MARK: Container.current

    @Test func currentDefaultsToOneProcessWideRootContainer() {
        #expect(Container.current === Container.current)
        #expect(Container.current.parent == nil)
    }

    @Test func withValueSwapsCurrentForTheClosureOnly() {
        let root = Container.current
        let child = root.makeChild()
        Container.$current.withValue(child) {
            #expect(Container.current === child)
        }
        #expect(Container.current === root)
    }

    @Test func theRootIsWhereTheAppRegisters() throws {
        Container.current.register(Engine.self, name: "root-only") { _ in Engine("root") }
        defer { Container.current.unregister(Engine.self, name: "root-only") }

        final class RootUser {
            @Inject(name: "root-only") var engine: Engine
        }
        #expect(RootUser().engine.label == "root")
    }

    // MARK: @Inject

    @Test func injectResolvesFromCurrentWhenTheOwnerIsCreated() {
        let container = makeContainer("app")
        let car = Container.$current.withValue(container) { Car() }
        #expect(car.engine.label == "app")
        #expect(car.spare.label == "app spare")
        #expect(car.greeting == Greeting(text: "app: hi Ann, app: hi Ann"))
    }

    @Test func aChildWithAnOverrideIsSeenInsideWithValueOnly() {
        let app = makeContainer("app")
        let test = app.makeChild()
        test.register(Engine.self) { _ in Engine("test") }

        Container.$current.withValue(app) {
            #expect(Car().engine.label == "app")
            Container.$current.withValue(test) {
                let car = Car()
                #expect(car.engine.label == "test")
                #expect(car.spare.label == "app spare")  // not overridden: the parent's
            }
            #expect(Car().engine.label == "app")
        }
    }

    @Test func theOverrideIsSeenInAsyncCodeAndChildTasks() async {
        let app = makeContainer("app")
        let test = app.makeChild()
        test.register(Engine.self) { _ in Engine("test") }

        await Container.$current.withValue(app) {
            await Container.$current.withValue(test) {
                await Task.yield()
                #expect(Car().engine.label == "test")
                let labels = await withTaskGroup(of: String.self) { group in
                    for _ in 0..<4 {
                        group.addTask { Car().engine.label }
                    }
                    return await group.reduce(into: [String]()) { $0.append($1) }
                }
                #expect(labels == ["test", "test", "test", "test"])
                #expect(await Task { Car().engine.label }.value == "test")  // unstructured tasks inherit it too
            }
            #expect(Car().engine.label == "app")
            #expect(await Task.detached { Container.current === app }.value == false)  // detached ones do not
        }
    }

    // MARK: @LazyInject

    @Test func lazyInjectCapturesCurrentWhenTheOwnerIsCreatedAndResolvesOnFirstAccess() {
        let container = Container()
        let built = Counter()
        container.register(Engine.self) { _ in Engine("engine #\(built.increment())") }.inObjectScope(.transient)
        container.register(Engine.self, name: "spare") { _ in Engine("spare") }
        container.register(Greeting.self) { (_, name: String, times: Int) in
            Greeting(text: "\(name) x\(times)")
        }

        let garage = Container.$current.withValue(container) { Garage() }
        #expect(built.value == 0)
        // Outside `withValue` now: the captured container is used all the same.
        #expect(garage.engine.label == "engine #1")
        #expect(garage.engine.label == "engine #1")  // resolved once
        #expect(built.value == 1)
        #expect(garage.spare.label == "spare")
        #expect(garage.greeting == Greeting(text: "Bob x1"))
    }

    @Test func lazyInjectWorksInAStructHeldInALet() {
        let container = makeContainer("app")
        let dashboard = Container.$current.withValue(container) { Dashboard() }
        let copy = dashboard
        #expect(dashboard.engine.label == "app")
        #expect(copy.engine === dashboard.engine)  // copies share what was resolved
    }

    @Test func lazyInjectGivesEveryThreadTheSameInstance() async {
        let container = makeContainer("app")
        for _ in 0..<20 {
            let garage = Container.$current.withValue(container) { Garage() }
            let engines = await withTaskGroup(of: ObjectIdentifier.self) { group in
                for _ in 0..<8 {
                    group.addTask { ObjectIdentifier(garage.engine) }
                }
                return await group.reduce(into: Set<ObjectIdentifier>()) { $0.insert($1) }
            }
            #expect(engines == [ObjectIdentifier(garage.engine)])
        }
    }

    @Test func theProjectedLazyLetsCodeHandleAFailure() {
        let garage = Container.$current.withValue(makeContainer("app")) { Garage() }
        let error = resolutionError { try garage.$missing.instance }
        #expect(error?.kind == .notRegistered)
        #expect(error?.key == ServiceKey(Unregistered.self))
        #expect(garage.$engine.isResolved == false)
        _ = garage.engine
        #expect(garage.$engine.isResolved)
    }

    // MARK: Failure messages

    @Test func theDeclarationSiteNamesTheOwningType() {
        let garage = Container.$current.withValue(makeContainer("app")) { Garage() }
        #expect(garage.engineSite.owner.description == "Garage")
        #expect(garage.engineSite.file.description == "ArborTests/PropertyWrapperTests.swift")
        #expect(garage.engineSite.line == Garage.engineLine)
    }

    @Test func theFailureMessageNamesTheOwnerTheDeclarationAndTheError() throws {
        let container = Container()
        let error = try #require(resolutionError { try container.resolve(Unregistered.self, name: "primary") })
        let site = InjectionSite(
            wrapper: "@Inject", key: ServiceKey(Unregistered.self, name: "primary"), owner: "Garage",
            file: "App/Garage.swift", line: 12)

        let message = site.failureMessage(for: error)
        #expect(
            message.hasPrefix(
                #"@Inject in Garage (App/Garage.swift:12) could not resolve Unregistered(name: "primary")."#))
        #expect(message.contains(error.description))
        #expect(message.contains("nothing is registered under that key"))
        #expect(message.hasSuffix("(`static let shared = Container.current`)."))
    }

    @Test func onlyAMissingRegistrationGetsTheParagraphOnWhereTheWrapperLooks() throws {
        let container = Container()
        container.register(Engine.self) { _ in throw TestFailure("boom") }
        let error = try #require(resolutionError { try container.resolve(Engine.self) })
        let site = InjectionSite(
            wrapper: "@Inject", key: ServiceKey(Engine.self), owner: "Garage", file: "App/Garage.swift", line: 12)
        #expect(!site.failureMessage(for: error).contains("Container.current"))
    }

    /// A wrapper cannot `await`: for a service only an `async` resolve can build, the message says what to do instead
    /// of the `try await` the error alone suggests.
    @Test func aServiceThatNeedsAnAsyncResolveGetsTheParagraphOnWhatAWrapperCannotDo() throws {
        let container = Container()
        container.register(Engine.self) { _ async in Engine("async") }
        let error = try #require(resolutionError { try synchronously { try container.resolve(Engine.self) } })
        let site = InjectionSite(
            wrapper: "@Inject", key: ServiceKey(Engine.self), owner: "Garage", file: "App/Garage.swift", line: 12)
        let message = site.failureMessage(for: error)
        #expect(message.contains("@Inject resolves synchronously, where it is read: it cannot `await`."))
        #expect(message.contains("`try await container.resolve(Engine.self)` in async code and hand it over"))
    }

    @Test func theFailureMessageOfALocalDeclarationStillShowsTheSite() {
        let site = InjectionSite(
            wrapper: "@LazyInject", key: ServiceKey(Engine.self), owner: "", file: "App/main.swift", line: 3)
        let message = site.failureMessage(for: TestFailure("boom"))
        #expect(message == "@LazyInject in App/main.swift:3 could not resolve Engine.\nTestFailure(boom)")
    }

    #if compiler(>=6.2) && (os(macOS) || os(Linux) || os(Windows))
    @Test func aFailedInjectStopsTheProgramWithTheMessage() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Broken {
                @Inject var missing: Unregistered
            }
            _ = Container.$current.withValue(Container()) { Broken() }
        }.map { result in
            let output = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(output.contains("@Inject in Broken (ArborTests/PropertyWrapperTests.swift:"))
            #expect(output.contains("Arbor could not resolve Unregistered: nothing is registered under that key."))
        }
    }
    #endif
}

// MARK: - Usage example

/// Ambient injection as an app and its tests use it. (Getting Started's own snippet, "Inject from an ambient
/// container", is run by GettingStartedArticleTests.)
private enum ReadmeInjection {
    protocol Engine: Sendable {}
    struct V8: Engine {}
    struct TestEngine: Engine {}
    final class Car: Sendable {}
    final class PDFExporter: Sendable {}

    final class CarViewModel {
        @Inject var engine: Engine  // resolved when the model is created
        @Inject(name: "sports") var sportsCar: Car
        @LazyInject var exporter: PDFExporter  // resolved on first access
    }

    @Suite(.serialized) struct Example {
        @Test func readme() throws {
            defer {  // leave the process-wide root as the other tests expect it
                Container.current.unregister(Engine.self)
                Container.current.unregister(Car.self, name: "sports")
                Container.current.unregister(PDFExporter.self)
            }
            // At start-up, register in the process-wide root (or `Assembler([...], container: .current)`).
            Container.current.register(Engine.self) { _ in V8() }
            Container.current.register(Car.self, name: "sports") { _ in Car() }
            Container.current.register(PDFExporter.self) { _ in PDFExporter() }
            let model = CarViewModel()

            // In a test: a child with overrides, for the duration of a closure (sync or async, and child tasks).
            let test = Container.current.makeChild()
            test.register(Engine.self) { _ in TestEngine() }
            let tested = Container.$current.withValue(test) { CarViewModel() }  // tested.engine is a TestEngine

            #expect(model.engine is V8)
            #expect(tested.engine is TestEngine)
            #expect(tested.sportsCar !== model.sportsCar)  // graph scope: one per resolve
            #expect(tested.exporter !== model.exporter)
        }
    }
}
