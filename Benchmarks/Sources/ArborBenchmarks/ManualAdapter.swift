/// The baseline: the object model wired by hand, the way code without a DI library would do it.
struct ManualAdapter: LibraryAdapter {
    let name = "manual"

    func transientLeaf() -> () throws -> Leaf {
        { Leaf() }
    }

    func graph10() -> () throws -> AppRoot {
        { Self.makeAppRoot() }
    }

    func singletonHit() -> () throws -> Configuration {
        let configuration = Configuration()
        return { configuration }
    }

    func arguments2() -> () throws -> Greeter {
        { Greeter(name: "Ann", times: 3) }
    }

    func childDepth(_ depth: Int) -> () throws -> ReportPresenter {
        // Hand-written code has no container tree: the depth changes nothing.
        { ReportPresenter(renderer: Renderer()) }
    }

    func circularPair() -> () throws -> ParentNode {
        {
            let parent = ParentNode(child: ChildNode())
            parent.child.parent = parent
            return parent
        }
    }

    func weakHit() -> () throws -> SharedBuffer {
        // A hand-written weak cache.
        let cache = WeakCache<SharedBuffer>()
        return {
            if let buffer = cache.instance { return buffer }
            let buffer = SharedBuffer()
            cache.instance = buffer
            return buffer
        }
    }

    func largeContainer(
        _ types: [any NumberedService.Type], resolving target: any NumberedService.Type
    ) -> () throws -> AnyObject {
        // Hand-written code calls the initialiser; there is nothing to look up.
        Self.makeInitialiser(target)
    }

    func registerAll(_ types: [any NumberedService.Type]) -> () throws -> AnyObject {
        // Hand-written registration: a table of factories keyed by type.
        {
            let registry = Registry()
            for type in types {
                registry.add(type)
            }
            return registry
        }
    }

    func concurrentGraph10() -> @Sendable () throws -> AppRoot {
        { Self.makeAppRoot() }
    }

    private static func makeAppRoot() -> AppRoot {
        let store = Store(database: Database())
        return AppRoot(
            session: Session(auth: AuthClient(tokens: TokenCache()), store: store),
            catalog: Catalog(store: store, search: SearchIndex(tokenizer: Tokenizer(), ranker: Ranker())))
    }

    private static func makeInitialiser<Service: NumberedService>(
        _: Service.Type
    ) -> () throws -> AnyObject {
        { Service() }
    }
}

private final class WeakCache<Instance: AnyObject> {
    weak var instance: Instance?
}

private final class Registry {
    private var factories: [ObjectIdentifier: () -> AnyObject] = [:]

    func add<Service: NumberedService>(_: Service.Type) {
        factories[ObjectIdentifier(Service.self)] = { Service() }
    }
}
