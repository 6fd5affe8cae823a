import Arbor

/// Arbor, this repository's library, used the way its README shows.
struct ArborAdapter: LibraryAdapter {
    let name = "arbor"

    func transientLeaf() throws -> () throws -> Leaf {
        let container = Container()
        container.register(Leaf.self) { _ in Leaf() }.inObjectScope(.transient)
        return { try container.resolve(Leaf.self) }
    }

    func graph10() throws -> () throws -> AppRoot {
        let container = Container(defaultScope: .graph)
        registerGraph(in: container)
        return { try container.resolve(AppRoot.self) }
    }

    func observedGraph10() throws -> (() throws -> AppRoot)? {
        let container = Container(defaultScope: .graph)
        registerGraph(in: container)
        container.addObserver(IgnoringObserver())
        return { try container.resolve(AppRoot.self) }
    }

    func profiledColdStart(_ types: [any NumberedService.Type]) -> (() throws -> AnyObject)? {
        {
            let container = Container()
            for (index, type) in types.enumerated() {
                let dependencies = treeChildren(of: index, count: types.count).map { types[$0] }
                Self.registerNode(type, dependencies: dependencies, in: container)
            }
            var root: AnyObject?
            let profile = try container.profile {
                root = try Self.resolveOperation(types[0], in: container)()
            }
            guard profile.instanceCount == types.count, !profile.description.isEmpty, let root else {
                throw WiringError(description: "the profile of a cold start missed instances")
            }
            return root
        }
    }

    func autoregisteredGraph10() throws -> (() throws -> AppRoot)? {
        let container = Container(defaultScope: .graph)
        container.autoregister(TokenCache.self, initializer: TokenCache.init)
        container.autoregister(Database.self, initializer: Database.init)
        container.autoregister(Tokenizer.self, initializer: Tokenizer.init)
        container.autoregister(Ranker.self, initializer: Ranker.init)
        container.autoregister(AuthClient.self, initializer: AuthClient.init)
        container.autoregister(Store.self, initializer: Store.init)
        container.autoregister(SearchIndex.self, initializer: SearchIndex.init)
        container.autoregister(Session.self, initializer: Session.init)
        container.autoregister(Catalog.self, initializer: Catalog.init)
        container.autoregister(AppRoot.self, initializer: AppRoot.init)
        return { try container.resolve(AppRoot.self) }
    }

    func singletonHit() throws -> () throws -> Configuration {
        let container = Container()
        container.register(Configuration.self) { _ in Configuration() }.inObjectScope(.permanent)
        _ = try container.resolve(Configuration.self)
        return { try container.resolve(Configuration.self) }
    }

    func arguments2() throws -> () throws -> Greeter {
        let container = Container()
        container.register(Greeter.self) { (_, name: String, times: Int) in
            Greeter(name: name, times: times)
        }
        .inObjectScope(.transient)
        return { try container.resolve(Greeter.self, arguments: "Ann", 3) }
    }

    func childDepth(_ depth: Int) throws -> () throws -> ReportPresenter {
        let root = Container()
        root.register(Renderer.self) { _ in Renderer() }.inObjectScope(.transient)
        root.register(ReportPresenter.self) { resolver in
            ReportPresenter(renderer: try resolver.resolve(Renderer.self))
        }
        .inObjectScope(.transient)
        var deepest = root
        for _ in 0..<depth {
            deepest = deepest.makeChild()
        }
        let container = deepest
        // A child holds its parent strongly, so `container` keeps the whole chain alive.
        return { try container.resolve(ReportPresenter.self) }
    }

    func circularPair() throws -> () throws -> ParentNode {
        let container = Container(defaultScope: .graph)
        container.register(ParentNode.self) { resolver in
            ParentNode(child: try resolver.resolve(ChildNode.self))
        }
        container.register(ChildNode.self) { _ in ChildNode() }
            .initCompleted { resolver, child in
                child.parent = try resolver.resolve(ParentNode.self)
            }
        return { try container.resolve(ParentNode.self) }
    }

    func weakHit() throws -> () throws -> SharedBuffer {
        let container = Container()
        container.register(SharedBuffer.self) { _ in SharedBuffer() }.inObjectScope(.weak)
        return { try container.resolve(SharedBuffer.self) }
    }

    func weakBuild() throws -> () throws -> SharedBuffer {
        let container = Container()
        container.register(SharedBuffer.self) { _ in SharedBuffer() }.inObjectScope(.weak)
        return { try container.resolve(SharedBuffer.self) }
    }

    func weakBuildProtocol() throws -> () throws -> any Buffering {
        let container = Container()
        container.register((any Buffering).self) { _ in SharedBuffer() }.inObjectScope(.weak)
        return { try container.resolve((any Buffering).self) }
    }

    func largeContainer(
        _ types: [any NumberedService.Type], resolving target: any NumberedService.Type
    ) throws -> () throws -> AnyObject {
        let container = Container()
        for type in types {
            Self.register(type, in: container)
        }
        return Self.resolveOperation(target, in: container)
    }

    func registerAll(_ types: [any NumberedService.Type]) -> () throws -> AnyObject {
        {
            let container = Container()
            for type in types {
                Self.register(type, in: container)
            }
            return container
        }
    }

    func concurrentGraph10() throws -> @Sendable () throws -> AppRoot {
        // `Container` is `Sendable`: any number of threads may resolve from it at once.
        let container = Container(defaultScope: .graph)
        registerGraph(in: container)
        return { try container.resolve(AppRoot.self) }
    }

    func requestScope() throws -> () throws -> NoteHandler {
        RequestScopeOperation.operation(in: try RequestScopeOperation.makeApp())
    }

    func requestValues() throws -> () throws -> AnyObject {
        let app = try RequestScopeOperation.makeApp()
        return {
            let child = RequestScopeOperation.requestChild(of: app)
            child.close()
            return child
        }
    }

    func requestValueResolved() throws -> () throws -> CurrentUser {
        let app = try RequestScopeOperation.makeApp()
        return {
            let child = RequestScopeOperation.requestChild(of: app)
            defer { child.close() }
            return try child.resolve(CurrentUser.self)
        }
    }

    func concurrentRequestScope() throws -> @Sendable () throws -> NoteHandler {
        RequestScopeOperation.operation(in: try RequestScopeOperation.makeApp())
    }

    func requestScopePerContainer() throws -> () throws -> NoteHandler {
        let app = try RequestScopeOperation.makeApp()
        // Registered once: each child that resolves them builds its own.
        app.register(RequestInfo.self) { _ in RequestInfo(id: 1) }.inObjectScope(.perContainer)
        app.register(CurrentUser.self) { _ in CurrentUser(name: "ann") }.inObjectScope(.perContainer)
        app.register(UnitOfWork.self) { r in UnitOfWork(pool: try r.resolve(), request: try r.resolve()) }
            .inObjectScope(.perContainer)
        return {
            let child = app.makeChild()
            defer { child.close() }
            return try child.resolve(NoteHandler.self)
        }
    }

    func coldStart(_ types: [any NumberedService.Type]) -> () throws -> AnyObject {
        {
            let container = Container()
            for (index, type) in types.enumerated() {
                let dependencies = treeChildren(of: index, count: types.count).map { types[$0] }
                Self.registerNode(type, dependencies: dependencies, in: container)
            }
            return try Self.resolveOperation(types[0], in: container)()
        }
    }

    func childOfOneParent() -> () throws -> AnyObject {
        let app = Container()
        app.register(Configuration.self) { _ in Configuration() }.inObjectScope(.permanent)
        return {
            let child = app.makeChild()
            child.register(RequestInfo.self, instance: RequestInfo(id: 1))
            child.register(CurrentUser.self, instance: CurrentUser(name: "ann"))
            return child
        }
    }

    func concurrentSharedPermanent() throws -> @Sendable () throws -> ConfigurationPanel {
        let app = Container()
        app.register(Configuration.self) { _ in Configuration() }.inObjectScope(.permanent)
        app.register(Renderer.self) { _ in Renderer() }.inObjectScope(.transient)
        app.register(ConfigurationPanel.self) { r in
            ConfigurationPanel(configuration: try r.resolve(), renderer: try r.resolve())
        }
        .inObjectScope(.transient)
        _ = try app.resolve(Configuration.self)
        let child = app.makeChild()
        return { try child.resolve(ConfigurationPanel.self) }
    }

    func concurrentSharedWeak() throws -> (holding: AnyObject, operation: @Sendable () throws -> BufferPanel) {
        let app = Container()
        app.register(SharedBuffer.self) { _ in SharedBuffer() }.inObjectScope(.weak)
        app.register(Renderer.self) { _ in Renderer() }.inObjectScope(.transient)
        app.register(BufferPanel.self) { r in BufferPanel(buffer: try r.resolve(), renderer: try r.resolve()) }
            .inObjectScope(.transient)
        let child = app.makeChild()
        let buffer = try child.resolve(SharedBuffer.self)
        return (buffer, { try child.resolve(BufferPanel.self) })
    }

    private static func registerNode<Service: NumberedService>(
        _: Service.Type, dependencies: [any NumberedService.Type], in container: Container
    ) {
        container.register(Service.self) { resolver in
            Service(dependencies: try dependencies.map { try resolveNode($0, from: resolver) })
        }
    }

    private static func resolveNode<Service: NumberedService>(
        _: Service.Type, from resolver: any Resolver
    ) throws -> any NumberedService {
        try resolver.resolve(Service.self)
    }

    func asyncGraph10() throws -> (@Sendable () async throws -> AppRoot)? {
        let container = Container(defaultScope: .graph)
        container.register(TokenCache.self) { _ async in await AsyncConstruction.tokenCache() }
        container.register(Database.self) { _ async in await AsyncConstruction.database() }
        container.register(Tokenizer.self) { _ async in await AsyncConstruction.tokenizer() }
        container.register(Ranker.self) { _ async in await AsyncConstruction.ranker() }
        container.register(AuthClient.self) { r async throws in
            await AsyncConstruction.authClient(tokens: try await r.resolve(TokenCache.self))
        }
        container.register(Store.self) { r async throws in
            await AsyncConstruction.store(database: try await r.resolve(Database.self))
        }
        container.register(SearchIndex.self) { r async throws in
            await AsyncConstruction.searchIndex(
                tokenizer: try await r.resolve(Tokenizer.self), ranker: try await r.resolve(Ranker.self))
        }
        container.register(Session.self) { r async throws in
            await AsyncConstruction.session(
                auth: try await r.resolve(AuthClient.self), store: try await r.resolve(Store.self))
        }
        container.register(Catalog.self) { r async throws in
            await AsyncConstruction.catalog(
                store: try await r.resolve(Store.self), search: try await r.resolve(SearchIndex.self))
        }
        container.register(AppRoot.self) { r async throws in
            await AsyncConstruction.appRoot(
                session: try await r.resolve(Session.self), catalog: try await r.resolve(Catalog.self))
        }
        return { try await container.resolve(AppRoot.self) }
    }

    func asyncResolveOfSync() throws -> (@Sendable () async throws -> AppRoot)? {
        let container = Container(defaultScope: .graph)
        registerGraph(in: container)
        return { try await container.resolve(AppRoot.self) }
    }

    private func registerGraph(in container: Container) {
        container.register(TokenCache.self) { _ in TokenCache() }
        container.register(Database.self) { _ in Database() }
        container.register(Tokenizer.self) { _ in Tokenizer() }
        container.register(Ranker.self) { _ in Ranker() }
        container.register(AuthClient.self) { resolver in
            AuthClient(tokens: try resolver.resolve(TokenCache.self))
        }
        container.register(Store.self) { resolver in
            Store(database: try resolver.resolve(Database.self))
        }
        container.register(SearchIndex.self) { resolver in
            SearchIndex(
                tokenizer: try resolver.resolve(Tokenizer.self),
                ranker: try resolver.resolve(Ranker.self))
        }
        container.register(Session.self) { resolver in
            Session(
                auth: try resolver.resolve(AuthClient.self),
                store: try resolver.resolve(Store.self))
        }
        container.register(Catalog.self) { resolver in
            Catalog(
                store: try resolver.resolve(Store.self),
                search: try resolver.resolve(SearchIndex.self))
        }
        container.register(AppRoot.self) { resolver in
            AppRoot(
                session: try resolver.resolve(Session.self),
                catalog: try resolver.resolve(Catalog.self))
        }
    }

    private static func register<Service: NumberedService>(
        _: Service.Type, in container: Container
    ) {
        container.register(Service.self) { _ in Service() }.inObjectScope(.transient)
    }

    private static func resolveOperation<Service: NumberedService>(
        _: Service.Type, in container: Container
    ) -> () throws -> AnyObject {
        { try container.resolve(Service.self) }
    }
}

/// An observer that implements every event and does nothing with them: what the seam costs by itself.
final class IgnoringObserver: ResolutionObserver {
    func resolveStarted(_ event: ResolveStarted) {}
    func resolveFinished(_ event: ResolveFinished) {}
    func instanceBuilt(_ event: InstanceBuilt) {}
    func hooksRan(_ event: HooksRan) {}
    func instanceReused(_ event: InstanceReused) {}
    func instanceReleased(_ event: InstanceReleased) {}
}
