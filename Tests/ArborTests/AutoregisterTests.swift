import Arbor
import Testing

// `autoregister` registers a factory that resolves each parameter of an initializer by its type: any number of
// parameters, names, scopes, runtime arguments matched to parameters by type, throwing and `async` initializers.

private final class AEngine: Sendable {}
private final class AWheels: Sendable {}
private final class ARadio: Sendable {}

private final class ACar: Sendable {
    let engine: AEngine
    let wheels: AWheels
    let radio: ARadio?
    init(engine: AEngine, wheels: AWheels, radio: ARadio?) {
        self.engine = engine
        self.wheels = wheels
        self.radio = radio
    }
}

private struct AFormatter: Sendable {
    let prefix: String
}

private struct AGreeter: Sendable {
    let formatter: AFormatter
    let name: String
    let times: Int
    let title: String
    init(formatter: AFormatter, name: String, times: Int, title: String) {
        self.formatter = formatter
        self.name = name
        self.times = times
        self.title = title
    }
}

private struct ABrokenEngine: Error {}

private final class AStartedEngine: Sendable {
    let wheels: AWheels
    init(wheels: AWheels, started: Bool) throws {
        guard started else { throw ABrokenEngine() }
        self.wheels = wheels
    }
}

private final class AConnection: Sendable {
    let engine: AEngine
    let user: String
    init(engine: AEngine, user: String) async throws {
        await Task.yield()
        self.engine = engine
        self.user = user
    }
}

private final class AWide: Sendable {
    let engines: [AEngine]
    let wheels: [AWheels]
    let radios: [ARadio]
    // swift-format-ignore
    init(_ a: AEngine, _ b: AWheels, _ c: ARadio, _ d: AEngine, _ e: AWheels, _ f: ARadio, _ g: AEngine,
         _ h: AWheels, _ i: ARadio, _ j: AEngine, _ k: AWheels, _ l: ARadio) {
        engines = [a, d, g, j]
        wheels = [b, e, h, k]
        radios = [c, f, i, l]
    }
}

@MainActor private final class AViewModel {
    let engine: AEngine
    nonisolated let builtOnMainThread: Bool
    init(engine: AEngine) {
        self.engine = engine
        builtOnMainThread = isMainActorRunning()
    }
}

@MainActor private func isMainActorRunning() -> Bool {
    MainActor.assertIsolated()
    return true
}

@Suite struct AutoregisterTests {
    @Test func eachParameterIsResolvedByItsType() throws {
        let container = Container()
        container.autoregister(AEngine.self, initializer: AEngine.init).inObjectScope(.permanent)
        container.autoregister(AWheels.self, initializer: AWheels.init)
        container.autoregister(ACar.self, initializer: ACar.init)

        let car = try container.resolve(ACar.self)
        #expect(car.engine === (try container.resolve(AEngine.self)), "the permanent engine, by its own scope")
        #expect(car.radio == nil, "an Optional parameter is nil when nothing is registered")
        container.autoregister(ARadio.self, initializer: ARadio.init)
        #expect(try container.resolve(ACar.self).radio != nil)
    }

    @Test func aNameAndTheRegistrationItReturns() throws {
        let container = Container()
        let registration = container.autoregister(AEngine.self, name: "v8", initializer: AEngine.init)
            .inObjectScope(.permanent)
        #expect(registration.scope == .permanent)
        #expect(try container.resolve(AEngine.self, name: "v8") === (try container.resolve(AEngine.self, name: "v8")))
        #expect(throws: ResolutionError.self) { try container.resolve(AEngine.self) }
    }

    @Test func twelveParameters() throws {
        let container = Container()
        container.autoregister(AEngine.self, initializer: AEngine.init).inObjectScope(.graph)
        container.autoregister(AWheels.self, initializer: AWheels.init).inObjectScope(.transient)
        container.autoregister(ARadio.self, initializer: ARadio.init)
        container.autoregister(AWide.self, initializer: AWide.init)
        let wide = try container.resolve(AWide.self)
        #expect(wide.engines.allSatisfy { $0 === wide.engines[0] }, "graph scope: one engine within the resolution")
        #expect(Set(wide.wheels.map(ObjectIdentifier.init)).count == 4, "transient: a wheel set each")
    }

    @Test func anUnresolvableParameterFailsWithThePath() throws {
        let container = Container()
        container.autoregister(AEngine.self, initializer: AEngine.init)
        container.autoregister(ACar.self, initializer: ACar.init)
        let error = #expect(throws: ResolutionError.self) { try container.resolve(ACar.self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.key == ServiceKey(AWheels.self))
        #expect(error?.path == [ServiceKey(ACar.self), ServiceKey(AWheels.self)])
    }

    @Test func aThrowingInitializer() throws {
        let container = Container()
        container.autoregister(AWheels.self, initializer: AWheels.init)
        container.register(Bool.self) { _ in false }
        container.autoregister(AStartedEngine.self, initializer: AStartedEngine.init)
        let error = #expect(throws: ResolutionError.self) { try container.resolve(AStartedEngine.self) }
        #expect(error?.underlying is ABrokenEngine)
        container.register(Bool.self) { _ in true }
        #expect(throws: Never.self) { try container.resolve(AStartedEngine.self) }
    }

    @Test func runtimeArgumentsFillTheParametersOfTheirTypes() throws {
        let container = Container()
        container.register(AFormatter.self) { _ in AFormatter(prefix: ">") }
        container.register(String.self) { _ in "Dr" }
        // String goes to `name`, the first String parameter; `title`, a String too, is resolved.
        container.autoregister(AGreeter.self, arguments: String.self, Int.self, initializer: AGreeter.init)
        let greeter = try container.resolve(AGreeter.self, arguments: "Ann", 3)
        #expect(greeter.formatter.prefix == ">")
        #expect(greeter.name == "Ann")
        #expect(greeter.times == 3)
        #expect(greeter.title == "Dr")
        #expect(throws: ResolutionError.self, "the arguments are the key, in their order") {
            try container.resolve(AGreeter.self, arguments: 3, "Ann")
        }

        container.autoregister(
            AGreeter.self, name: "all given", arguments: Int.self, String.self, String.self, initializer: AGreeter.init)
        let given = try container.resolve(AGreeter.self, name: "all given", arguments: 2, "Bo", "Prof")
        #expect((given.name, given.times, given.title) == ("Bo", 2, "Prof"))
    }

    @Test func anArgumentNoParameterTakesThrowsSayingSo() throws {
        let container = Container()
        container.autoregister(AEngine.self, arguments: Int.self, initializer: AEngine.init)
        let error = #expect(throws: ResolutionError.self) { try container.resolve(AEngine.self, arguments: 1) }
        let text = error?.underlying.map(String.init(describing:)) ?? ""
        #expect(text.contains("AEngine was autoregistered with the runtime argument type Int"))
        #expect(text.contains("register it with a factory"))
    }

    @Test func asyncInitializers() async throws {
        let container = Container()
        container.autoregister(AEngine.self, initializer: AEngine.init).inObjectScope(.permanent)
        container.register(String.self) { _ in "system" }
        container.autoregister(AConnection.self, initializer: AConnection.init)
        container.autoregister(AConnection.self, name: "as", arguments: String.self, initializer: AConnection.init)

        let connection = try await container.resolve(AConnection.self)
        #expect(connection.user == "system")
        #expect(connection.engine === (try await container.resolve(AEngine.self)))
        #expect(try await container.resolve(AConnection.self, name: "as", arguments: "ann").user == "ann")
        let error = synchronously {
            #expect(throws: ResolutionError.self) { try container.resolve(AConnection.self) }
        }
        #expect(error?.kind == .asyncRequired, "an async initializer is an async factory: resolve it with try await")
    }

    @Test func aMainActorInitializerIsAnAsyncFactoryThatGoesToTheMainActor() async throws {
        let container = Container()
        container.autoregister(AEngine.self, initializer: AEngine.init)
        container.autoregister(AViewModel.self, initializer: AViewModel.init)
        let model = try await container.resolve(AViewModel.self)
        #expect(model.builtOnMainThread)
        let onMain = try await MainActor.run { try container.resolve(AViewModel.self).builtOnMainThread }
        #expect(onMain, "resolved synchronously on the main actor, built there")
        let error = synchronously {
            #expect(throws: ResolutionError.self) { try container.resolve(AViewModel.self) }
        }
        #expect(error?.kind == .asyncRequired, "off the main actor, a synchronous resolve says to await")
    }
}
