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
