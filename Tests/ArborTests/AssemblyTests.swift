import Arbor
import Testing

// API.md §9: `Assembly` and `Assembler`.

private protocol Client: AnyObject { var name: String { get } }

private final class LiveClient: Client {
    let name = "live"
}

private final class StubClient: Client {
    let name = "stub"
}

private final class FeedAPI {
    let client: any Client
    init(client: any Client) { self.client = client }
}

/// Registers nothing; records `assemble` and `loaded`, and what it could resolve when loaded.
private struct Probe: Assembly {
    let label: String
    let recorder: Recorder

    func assemble(container: Container) {
        recorder.record("assemble \(label)")
    }

    func loaded(resolver: any Resolver) {
        let client = try? resolver.resolve((any Client).self)
        recorder.record("loaded \(label) client=\(client?.name ?? "none")")
    }
}

private struct NetworkAssembly: Assembly {
    func assemble(container: Container) {
        container.register((any Client).self) { _ in LiveClient() }.inObjectScope(.permanent)
    }
}

private struct FeedAssembly: Assembly {
    func assemble(container: Container) {
        container.register(FeedAPI.self) { r in FeedAPI(client: try r.resolve()) }
    }
}

private struct StubNetworkAssembly: Assembly {
    func assemble(container: Container) {
        container.register((any Client).self) { _ in StubClient() }
    }
}

/// Only `assemble`: `loaded(resolver:)` comes from the protocol's default.
private struct Minimal: Assembly {
    let recorder: Recorder
    func assemble(container: Container) { recorder.record("assemble minimal") }
}

@Suite struct AssemblyTests {
    @Test func assembliesRegisterInTheAssemblersContainer() throws {
        let assembler = Assembler([NetworkAssembly(), FeedAssembly()])
        let api = try assembler.resolver.resolve(FeedAPI.self)
        #expect(api.client.name == "live")
        #expect(try assembler.container.resolve((any Client).self) === api.client)
        #expect(assembler.resolver as? Container === assembler.container)
        #expect(assembler.container.parent == nil)
    }

    @Test func assembliesAreAppliedInOrderAndLoadedOnceAfterTheWholeBatch() {
        let recorder = Recorder()
        _ = Assembler([
            Probe(label: "a", recorder: recorder), NetworkAssembly(), Probe(label: "b", recorder: recorder),
        ])
        // Both `loaded` calls come after every `assemble`, so `a` sees the client registered after it.
        #expect(
            recorder.events == [
                "assemble a", "assemble b", "loaded a client=live", "loaded b client=live",
            ])
    }

    @Test func aLaterAssemblyOverridesAnEarlierOne() throws {
        let assembler = Assembler([NetworkAssembly(), FeedAssembly(), StubNetworkAssembly()])
        #expect(try assembler.resolver.resolve(FeedAPI.self).client.name == "stub")
    }

    @Test func applyAssemblyAndApplyAssembliesAddBatches() throws {
        let recorder = Recorder()
        let assembler = Assembler([Probe(label: "first", recorder: recorder)])
        assembler.apply(assembly: NetworkAssembly())
        assembler.apply(assemblies: [FeedAssembly(), Probe(label: "second", recorder: recorder)])
        assembler.apply(assembly: Probe(label: "third", recorder: recorder))

        #expect(
            recorder.events == [
                "assemble first", "loaded first client=none",
                "assemble second", "loaded second client=live",
                "assemble third", "loaded third client=live",
            ])
        #expect(try assembler.resolver.resolve(FeedAPI.self).client.name == "live")
    }

    @Test func loadedIsOptional() {
        let recorder = Recorder()
        _ = Assembler([Minimal(recorder: recorder)])
        #expect(recorder.events == ["assemble minimal"])
    }

    @Test func anEmptyAssemblerHasAnEmptyContainer() {
        let assembler = Assembler()
        #expect(!assembler.container.isRegistered((any Client).self))
    }

    @Test func aChildAssemblerSeesItsParentsRegistrationsAndCanOverrideThem() throws {
        let app = Assembler([NetworkAssembly(), FeedAssembly()])
        let test = Assembler([StubNetworkAssembly()], parent: app)

        #expect(test.container.parent === app.container)
        #expect(try test.resolver.resolve(FeedAPI.self).client.name == "stub")
        #expect(try app.resolver.resolve(FeedAPI.self).client.name == "live")  // the parent is untouched
    }

    @Test func aChildAssemblerInheritsTheParentsDefaultScope() {
        let app = Assembler([], container: Container(defaultScope: .transient))
        let feature = Assembler([], parent: app)
        #expect(feature.container.defaultScope == .transient)
    }

    @Test func anAssemblerCanApplyToAnExistingContainer() throws {
        let container = Container()
        let assembler = Assembler([NetworkAssembly()], container: container)
        #expect(assembler.container === container)
        #expect(try container.resolve((any Client).self).name == "live")
    }

    @Test func anAssemblerIsSendable() async throws {
        let assembler = Assembler([NetworkAssembly(), FeedAssembly()])
        let name = try await Task.detached { try assembler.resolver.resolve(FeedAPI.self).client.name }.value
        #expect(name == "live")
    }
}

// MARK: - Usage example

/// An app's assemblies, and a test's assembler that overrides one of them: how an app uses them. (Getting Started's
/// own snippet, "Group registrations in assemblies", is run by GettingStartedArticleTests.)
private enum ReadmeAssemblies {
    protocol HTTPClient: Sendable {}
    struct LiveClient: HTTPClient {}
    struct StubClient: HTTPClient {}
    final class FeedModel {
        let client: HTTPClient
        init(client: HTTPClient) { self.client = client }
    }

    struct NetworkAssembly: Assembly {
        func assemble(container: Container) {
            container.register(HTTPClient.self) { _ in LiveClient() }.inObjectScope(.permanent)
        }
    }

    struct FeedAssembly: Assembly {
        func assemble(container: Container) {
            container.register(FeedModel.self) { r in FeedModel(client: try r.resolve()) }
        }

        func loaded(resolver: Resolver) {
            // Optional: runs once every assembly of the batch has registered. Check or warm up here.
        }
    }

    struct StubNetworkAssembly: Assembly {
        func assemble(container: Container) {
            container.register(HTTPClient.self) { _ in StubClient() }
        }
    }

    @Suite struct Example {
        @Test func readme() throws {
            let app = Assembler([NetworkAssembly(), FeedAssembly()])
            let model = try app.resolver.resolve(FeedModel.self)

            // A child assembler sees the app's registrations and can override them, e.g. in a test.
            let test = Assembler([StubNetworkAssembly()], parent: app)
            let stubbed = try test.resolver.resolve(FeedModel.self)  // built with StubClient

            #expect(model.client is LiveClient)
            #expect(stubbed.client is StubClient)
        }
    }
}
