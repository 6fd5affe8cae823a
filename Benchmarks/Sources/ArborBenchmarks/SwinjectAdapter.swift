import Swinject

/// Swinject 2.10.0, used the way its documentation shows.
struct SwinjectAdapter: LibraryAdapter {
    let name = "swinject"

    func transientLeaf() -> () throws -> Leaf {
        let container = Container()
        container.register(Leaf.self) { _ in Leaf() }.inObjectScope(.transient)
        return { try unwrap(container.resolve(Leaf.self)) }
    }

    func graph10() -> () throws -> AppRoot {
        let container = Container(defaultObjectScope: .graph)
        registerGraph(in: container)
        return { try unwrap(container.resolve(AppRoot.self)) }
    }

    func singletonHit() throws -> () throws -> Configuration {
        let container = Container()
        container.register(Configuration.self) { _ in Configuration() }.inObjectScope(.container)
        _ = try unwrap(container.resolve(Configuration.self))
        return { try unwrap(container.resolve(Configuration.self)) }
    }

    func arguments2() -> () throws -> Greeter {
        let container = Container()
        container.register(Greeter.self) { (_, name: String, times: Int) in
            Greeter(name: name, times: times)
        }
        .inObjectScope(.transient)
        return { try unwrap(container.resolve(Greeter.self, arguments: "Ann", 3)) }
    }

    func childDepth(_ depth: Int) -> () throws -> ReportPresenter {
        let root = Container()
        root.register(Renderer.self) { _ in Renderer() }.inObjectScope(.transient)
        root.register(ReportPresenter.self) { resolver in
            ReportPresenter(renderer: resolver.resolve(Renderer.self)!)
        }
        .inObjectScope(.transient)
        var deepest = root
        for _ in 0..<depth {
            deepest = Container(parent: deepest)
        }
        let container = deepest
        // A child holds its parent strongly, so `container` keeps the whole chain alive.
        return { try unwrap(container.resolve(ReportPresenter.self)) }
    }

    func circularPair() -> () throws -> ParentNode {
        let container = Container(defaultObjectScope: .graph)
        container.register(ParentNode.self) { resolver in
            ParentNode(child: resolver.resolve(ChildNode.self)!)
        }
        container.register(ChildNode.self) { _ in ChildNode() }
            .initCompleted { resolver, child in
                child.parent = resolver.resolve(ParentNode.self)
            }
        return { try unwrap(container.resolve(ParentNode.self)) }
    }

    func weakHit() -> () throws -> SharedBuffer {
        let container = Container()
        container.register(SharedBuffer.self) { _ in SharedBuffer() }.inObjectScope(.weak)
        return { try unwrap(container.resolve(SharedBuffer.self)) }
    }

    func weakBuild() -> () throws -> SharedBuffer {
        let container = Container()
        container.register(SharedBuffer.self) { _ in SharedBuffer() }.inObjectScope(.weak)
        return { try unwrap(container.resolve(SharedBuffer.self)) }
    }

    func weakBuildProtocol() -> () throws -> any Buffering {
        let container = Container()
        container.register((any Buffering).self) { _ in SharedBuffer() }.inObjectScope(.weak)
        return { try unwrap(container.resolve((any Buffering).self)) }
    }

    func largeContainer(
        _ types: [any NumberedService.Type], resolving target: any NumberedService.Type
    ) -> () throws -> AnyObject {
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

    func concurrentGraph10() -> @Sendable () throws -> AppRoot {
        let container = Container(defaultObjectScope: .graph)
        registerGraph(in: container)
        // Swinject's documented way to resolve from several threads.
        let resolver = SynchronizedResolver(resolver: container.synchronize())
        return { try unwrap(resolver.resolver.resolve(AppRoot.self)) }
    }

    func requestScope() throws -> () throws -> NoteHandler {
        let app = try Self.requestApp()
        return {
            let child = Self.requestChild(of: app)
            let handler = try unwrap(child.resolve(NoteHandler.self))
            // Swinject has no way to end a child: the child is released when the request drops it.
            return handler
        }
    }

    func requestValues() throws -> () throws -> AnyObject {
        // Swinject has no way to end a child: the child is released when the request drops it.
        let app = try Self.requestApp()
        return { Self.requestChild(of: app) }
    }

    func requestValueResolved() throws -> () throws -> CurrentUser {
        let app = try Self.requestApp()
        return { try unwrap(Self.requestChild(of: app).resolve(CurrentUser.self)) }
    }

    func concurrentRequestScope() throws -> @Sendable () throws -> NoteHandler {
        // Swinject's children are not safe from several threads unless each is synchronized: not compared.
        throw NotSupported()
    }

    func requestScopePerContainer() throws -> () throws -> NoteHandler {
        // Swinject has no lifetime of one instance per child: the child registers them, `.container`.
        let app = try Self.requestApp()
        return {
            let child = Container(parent: app)
            child.register(RequestInfo.self) { _ in RequestInfo(id: 1) }.inObjectScope(.container)
            child.register(CurrentUser.self) { _ in CurrentUser(name: "ann") }.inObjectScope(.container)
            child.register(UnitOfWork.self) { resolver in
                UnitOfWork(pool: resolver.resolve(ConnectionPool.self)!, request: resolver.resolve(RequestInfo.self)!)
            }
            .inObjectScope(.container)
            let handler = try unwrap(child.resolve(NoteHandler.self))
            return handler
        }
    }

    func coldStart(_ types: [any NumberedService.Type]) -> () throws -> AnyObject {
        {
            let container = Container(defaultObjectScope: .graph)
            for (index, type) in types.enumerated() {
                Self.registerNode(
                    type, dependencies: treeChildren(of: index, count: types.count).map { types[$0] }, in: container)
            }
            return try Self.resolveOperation(types[0], in: container)()
        }
    }

    func childOfOneParent() -> () throws -> AnyObject {
        let app = Container()
        app.register(Configuration.self) { _ in Configuration() }.inObjectScope(.container)
        return { Self.requestChild(of: app) }
    }

    func concurrentSharedPermanent() throws -> @Sendable () throws -> ConfigurationPanel {
        let app = Container()
        app.register(Configuration.self) { _ in Configuration() }.inObjectScope(.container)
        app.register(Renderer.self) { _ in Renderer() }.inObjectScope(.transient)
        app.register(ConfigurationPanel.self) { resolver in
            ConfigurationPanel(
                configuration: resolver.resolve(Configuration.self)!, renderer: resolver.resolve(Renderer.self)!)
        }
        .inObjectScope(.transient)
        _ = try unwrap(app.resolve(Configuration.self))
        let resolver = SynchronizedResolver(resolver: Container(parent: app).synchronize())
        return { try unwrap(resolver.resolver.resolve(ConfigurationPanel.self)) }
    }

    func concurrentSharedWeak() throws -> (holding: AnyObject, operation: @Sendable () throws -> BufferPanel) {
        let app = Container()
        app.register(SharedBuffer.self) { _ in SharedBuffer() }.inObjectScope(.weak)
        app.register(Renderer.self) { _ in Renderer() }.inObjectScope(.transient)
        app.register(BufferPanel.self) { resolver in
            BufferPanel(buffer: resolver.resolve(SharedBuffer.self)!, renderer: resolver.resolve(Renderer.self)!)
        }
        .inObjectScope(.transient)
        let child = Container(parent: app)
        let buffer = try unwrap(child.resolve(SharedBuffer.self))
        let resolver = SynchronizedResolver(resolver: child.synchronize())
        return (buffer, { try unwrap(resolver.resolver.resolve(BufferPanel.self)) })
    }

    /// A child of `app` with the request's values registered, the way Swinject registers an instance.
    private static func requestChild(of app: Container) -> Container {
        let child = Container(parent: app)
        let request = RequestInfo(id: 1)
        let user = CurrentUser(name: "ann")
        child.register(RequestInfo.self) { _ in request }
        child.register(CurrentUser.self) { _ in user }
        return child
    }

    /// The app's container of the request model: app-wide services permanent, the rest graph.
    private static func requestApp() throws -> Container {
        let app = Container(defaultObjectScope: .graph)
        app.register(AppSettings.self) { _ in AppSettings() }.inObjectScope(.container)
        app.register(ConnectionPool.self) { _ in ConnectionPool() }.inObjectScope(.container)
        app.register(Metrics.self) { _ in Metrics() }.inObjectScope(.container)
        app.register(UnitOfWork.self) { resolver in
            UnitOfWork(pool: resolver.resolve(ConnectionPool.self)!, request: resolver.resolve(RequestInfo.self)!)
        }
        app.register(NoteRepository.self) { resolver in
            NoteRepository(
                unitOfWork: resolver.resolve(UnitOfWork.self)!, settings: resolver.resolve(AppSettings.self)!)
        }
        app.register(AuditLog.self) { resolver in
            AuditLog(
                user: resolver.resolve(CurrentUser.self)!, metrics: resolver.resolve(Metrics.self)!,
                unitOfWork: resolver.resolve(UnitOfWork.self)!)
        }
        app.register(NoteService.self) { resolver in
            NoteService(
                repository: resolver.resolve(NoteRepository.self)!, audit: resolver.resolve(AuditLog.self)!,
                user: resolver.resolve(CurrentUser.self)!)
        }
        app.register(NoteHandler.self) { resolver in
            NoteHandler(
                service: resolver.resolve(NoteService.self)!, request: resolver.resolve(RequestInfo.self)!,
                settings: resolver.resolve(AppSettings.self)!)
        }
        _ = try unwrap(app.resolve(AppSettings.self))
        _ = try unwrap(app.resolve(ConnectionPool.self))
        _ = try unwrap(app.resolve(Metrics.self))
        return app
    }

    private static func registerNode<Service: NumberedService>(
        _: Service.Type, dependencies: [any NumberedService.Type], in container: Container
    ) {
        container.register(Service.self) { resolver in
            Service(dependencies: dependencies.map { resolveNode($0, from: resolver) })
        }
    }

    private static func resolveNode<Service: NumberedService>(
        _: Service.Type, from resolver: any Resolver
    ) -> any NumberedService {
        resolver.resolve(Service.self)!
    }

    private func registerGraph(in container: Container) {
        container.register(TokenCache.self) { _ in TokenCache() }
        container.register(Database.self) { _ in Database() }
        container.register(Tokenizer.self) { _ in Tokenizer() }
        container.register(Ranker.self) { _ in Ranker() }
        container.register(AuthClient.self) { resolver in
            AuthClient(tokens: resolver.resolve(TokenCache.self)!)
        }
        container.register(Store.self) { resolver in
            Store(database: resolver.resolve(Database.self)!)
        }
        container.register(SearchIndex.self) { resolver in
            SearchIndex(
                tokenizer: resolver.resolve(Tokenizer.self)!, ranker: resolver.resolve(Ranker.self)!)
        }
        container.register(Session.self) { resolver in
            Session(auth: resolver.resolve(AuthClient.self)!, store: resolver.resolve(Store.self)!)
        }
        container.register(Catalog.self) { resolver in
            Catalog(store: resolver.resolve(Store.self)!, search: resolver.resolve(SearchIndex.self)!)
        }
        container.register(AppRoot.self) { resolver in
            AppRoot(session: resolver.resolve(Session.self)!, catalog: resolver.resolve(Catalog.self)!)
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
        { try unwrap(container.resolve(Service.self)) }
    }
}

/// The resolver that `Container.synchronize()` returns serialises every resolve behind the
/// container's lock, which is what makes it safe to share between threads; Swinject does not
/// mark its `Resolver` protocol `Sendable`, so this box states it.
private struct SynchronizedResolver: @unchecked Sendable {
    let resolver: any Resolver
}

/// Swinject returns nil for an unregistered service; the benchmark reports that as an error.
private func unwrap<Service>(_ service: Service?) throws -> Service {
    guard let service else {
        throw WiringError(description: "Swinject could not resolve \(Service.self)")
    }
    return service
}
