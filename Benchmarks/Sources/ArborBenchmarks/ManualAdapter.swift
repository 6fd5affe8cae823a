/// The baseline: the object model wired by hand, the way code without a DI library would do it.
struct ManualAdapter: LibraryAdapter {
    let name = "manual"

    func transientLeaf() -> () throws -> Leaf {
        { Leaf() }
    }

    func graph10() -> () throws -> AppRoot {
        { Self.makeAppRoot() }
    }

    /// Hand-written code has nothing to autoregister: the baseline is `graph10`'s.
    func autoregisteredGraph10() throws -> (() throws -> AppRoot)? {
        graph10()
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

    func weakBuild() -> () throws -> SharedBuffer {
        // The same hand-written weak cache; the scenario holds nothing, so it builds on every call.
        weakHit()
    }

    func weakBuildProtocol() -> () throws -> any Buffering {
        let build = weakBuild()
        return { try build() }
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

    func requestScope() -> () throws -> NoteHandler {
        HandWiredRequestScope.operation()
    }

    func requestValues() -> () throws -> AnyObject {
        // Hand-written code needs no child for them: the request's two values, made.
        { RequestValues() }
    }

    func requestValueResolved() -> () throws -> CurrentUser {
        // The handler has the user it made.
        { RequestValues().user }
    }

    func concurrentRequestScope() -> @Sendable () throws -> NoteHandler {
        HandWiredRequestScope.operation()
    }

    func requestScopePerContainer() -> () throws -> NoteHandler {
        // Hand-written code builds the per-request values for each request either way.
        requestScope()
    }

    func coldStart(_ types: [any NumberedService.Type]) -> () throws -> AnyObject {
        { Self.makeNode(0, of: types) }
    }

    func childOfOneParent() -> () throws -> AnyObject {
        // A hand-written child scope: a parent pointer and a table of the child's own instances.
        let app = HandWrittenScope(parent: nil)
        app.instances[ObjectIdentifier(Configuration.self)] = Configuration()
        return {
            let child = HandWrittenScope(parent: app)
            child.instances[ObjectIdentifier(RequestInfo.self)] = RequestInfo(id: 1)
            child.instances[ObjectIdentifier(CurrentUser.self)] = CurrentUser(name: "ann")
            return child
        }
    }

    func concurrentSharedPermanent() -> @Sendable () throws -> ConfigurationPanel {
        let configuration = Configuration()
        return { ConfigurationPanel(configuration: configuration, renderer: Renderer()) }
    }

    func concurrentSharedWeak() -> (holding: AnyObject, operation: @Sendable () throws -> BufferPanel) {
        // A hand-written weak cache that the threads only read: a weak reference loads atomically.
        let buffer = SharedBuffer()
        let cache = SendableWeakReference(buffer)
        return (
            buffer,
            {
                guard let buffer = cache.instance else {
                    throw WiringError(description: "the shared buffer was released")
                }
                return BufferPanel(buffer: buffer, renderer: Renderer())
            }
        )
    }

    func asyncGraph10() -> (@Sendable () async throws -> AppRoot)? {
        {
            let store = await AsyncConstruction.store(database: await AsyncConstruction.database())
            let session = await AsyncConstruction.session(
                auth: await AsyncConstruction.authClient(tokens: await AsyncConstruction.tokenCache()), store: store)
            let search = await AsyncConstruction.searchIndex(
                tokenizer: await AsyncConstruction.tokenizer(), ranker: await AsyncConstruction.ranker())
            return await AsyncConstruction.appRoot(
                session: session, catalog: await AsyncConstruction.catalog(store: store, search: search))
        }
    }

    func asyncResolveOfSync() -> (@Sendable () async throws -> AppRoot)? {
        // The same objects, built by hand in `async` code.
        { Self.makeAppRoot() }
    }

    private static func makeNode(_ index: Int, of types: [any NumberedService.Type]) -> any NumberedService {
        types[index].init(dependencies: treeChildren(of: index, count: types.count).map { makeNode($0, of: types) })
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

/// A weak reference set once, then only read (from any thread).
private final class SendableWeakReference<Instance: AnyObject & Sendable>: Sendable {
    weak let instance: Instance?
    init(_ instance: Instance) { self.instance = instance }
}

/// The smallest hand-written child scope: its parent and its own instances by type.
private final class HandWrittenScope {
    let parent: HandWrittenScope?
    var instances: [ObjectIdentifier: AnyObject] = [:]
    init(parent: HandWrittenScope?) { self.parent = parent }
}

private final class Registry {
    private var factories: [ObjectIdentifier: () -> AnyObject] = [:]

    func add<Service: NumberedService>(_: Service.Type) {
        factories[ObjectIdentifier(Service.self)] = { Service() }
    }
}

/// A request's two values, made, as hand-written code keeps them for the request's handlers.
private final class RequestValues {
    let request = RequestInfo(id: 1)
    let user = CurrentUser(name: "ann")
}
