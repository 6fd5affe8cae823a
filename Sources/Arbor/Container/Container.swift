/// A node in a tree of containers: it holds registrations, resolves services, and shares permanent instances
/// with its descendants.
///
/// ```swift
/// let app = Container()
/// app.register(HTTPClient.self) { _ in URLSessionClient() }.inObjectScope(.permanent)
/// app.register(FeedModel.self) { r in FeedModel(client: try r.resolve()) }
///
/// // In a test: a child sees everything the app registered, and can override any of it.
/// let test = app.makeChild()
/// test.register(HTTPClient.self) { _ in StubClient() }
/// let model = try test.resolve(FeedModel.self)   // built with StubClient
/// ```
///
/// A resolution looks a key up in the container it starts in, then in its ancestors, nearest first; the parent
/// never sees its children's registrations. See ``ObjectScope`` for who owns which instances.
///
/// `Container` is `Sendable`: any number of threads or tasks may resolve at once, and register while others
/// resolve. A permanent instance is created exactly once, and no thread sees it before its `initCompleted`
/// hooks have run.
public final class Container: Resolver, @unchecked Sendable {
    /// The container this one inherits registrations from, or `nil` for a root.
    public let parent: Container?
    /// The scope of registrations that do not call ``Registration/inObjectScope(_:)``.
    public let defaultScope: ObjectScope

    private let lock = Lock()
    private var entries: [ServiceKey: ServiceEntry] = [:]  // guarded by lock
    private var depthLimit = 200  // guarded by lock

    /// Makes a container.
    ///
    /// ```swift
    /// let root = Container()                               // registrations default to .graph
    /// let child = Container(parent: root)                  // sees root's registrations
    /// let sessions = Container(defaultScope: .permanent)
    /// ```
    public init(parent: Container? = nil, defaultScope: ObjectScope = .graph) {
        self.parent = parent
        self.defaultScope = defaultScope
    }

    /// Makes a child of this container, with the same default scope.
    ///
    /// The child resolves everything this container can, and its own registrations hide this container's for
    /// resolutions that start in the child: the standard way to swap a dependency in a test.
    public func makeChild() -> Container {
        Container(parent: self, defaultScope: defaultScope)
    }

    /// How deep a resolution that starts in this container may go: a top-level `resolve` has depth 0 and each
    /// nested resolve adds one. Past it, `resolve` throws ``ResolutionError/Reason/depthLimitExceeded`` instead
    /// of overflowing the stack. The default is 200.
    ///
    /// A limit of 0 allows only services without dependencies; negative values count as 0.
    public var maxResolutionDepth: Int {
        get { lock.withLock { depthLimit } }
        set { lock.withLock { depthLimit = max(0, newValue) } }
    }

    // MARK: Looking up

    /// The entry for `key` in this container or its nearest ancestor that has one, and that container.
    func lookup(_ key: ServiceKey) -> (entry: ServiceEntry, owner: Container)? {
        var container = self
        while true {
            if let entry = container.lock.withLock({ container.entries[key] }) {
                return (entry, container)
            }
            guard let parent = container.parent else { return nil }
            container = parent
        }
    }

    /// The keys registered for `key`'s service type, here and in the ancestors, nearest first.
    func registrations(of key: ServiceKey) -> [ServiceKey] {
        var found: [ServiceKey] = []
        var container: Container? = self
        while let current = container {
            let keys = current.lock.withLock { current.entries.keys.filter { $0.serviceType == key.serviceType } }
            for candidate in keys.sorted(by: { $0.description < $1.description }) where !found.contains(candidate) {
                found.append(candidate)
            }
            container = current.parent
        }
        return found
    }

    // MARK: Changing registrations

    // Entries that leave the dictionary are released after the lock is: releasing one may release the instance
    // it held, and that instance's deinit may well use the container.

    func add(_ entry: ServiceEntry) {
        let replaced = lock.withLock { entries.updateValue(entry, forKey: entry.key) }
        withExtendedLifetime(replaced) {}
    }

    /// Replaces the entry of a registration, if the container still holds that registration.
    func reconfigure(_ key: ServiceKey, token: RegistrationToken, _ change: (ServiceEntry) -> ServiceEntry) {
        let replaced: ServiceEntry? = lock.withLock {
            guard let entry = entries[key], entry.token === token else { return nil }
            entries[key] = change(entry)
            return entry
        }
        withExtendedLifetime(replaced) {}
    }

    func withEntries<Result>(_ body: ([ServiceKey: ServiceEntry]) -> Result) -> Result {
        lock.withLock { body(entries) }
    }

    func modifyEntries(_ body: (inout [ServiceKey: ServiceEntry]) -> Void) {
        let previous = lock.withLock {
            let previous = entries
            body(&entries)
            return previous
        }
        withExtendedLifetime(previous) {}
    }

    func entry(_ key: ServiceKey, token: RegistrationToken) -> ServiceEntry? {
        lock.withLock {
            guard let entry = entries[key], entry.token === token else { return nil }
            return entry
        }
    }

    // MARK: Resolver

    /// Resolves the service registered for `serviceType` and `name`, as a new top-level resolution.
    ///
    /// ```swift
    /// let car = try container.resolve(Car.self, name: "sports")
    /// ```
    public func resolve<Service>(_ serviceType: Service.Type, name: String?) throws -> Service {
        try Resolution.resolve(ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self), in: self)
    }

    /// Resolves the service registered for `serviceType` and `name` whose factory takes runtime arguments of these
    /// types, as a new top-level resolution.
    ///
    /// ```swift
    /// let greeter = try container.resolve(Greeter.self, name: "formal", arguments: "Ann", 3)
    /// ```
    public func resolve<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        arguments: repeat each Argument
    ) throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: (repeat each Argument).self)
        return try Resolution.resolve(key, in: self, arguments: repeat each arguments)
    }
}

extension Container: CustomStringConvertible {
    /// Lists the container's own registrations, sorted, with their scopes.
    public var description: String {
        let lines = lock.withLock { entries.values.map { "  \($0.key) [\($0.scope)]" } }.sorted()
        let header =
            "Container (\(lines.count) registration\(lines.count == 1 ? "" : "s")\(parent == nil ? "" : ", with a parent"))"
        return ([header] + lines).joined(separator: "\n")
    }
}
