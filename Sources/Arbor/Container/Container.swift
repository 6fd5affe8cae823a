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

    /// The registrations and settings, behind the container's lock. The lock also guards the instances the
    /// container's permanent and weak registrations hold (see ``InstanceStorage``).
    let registry = Protected.make(Registry())

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
        if let parent {
            // Join the parent's subtree: inherit the leak trackers that watch it, and let later ones find us.
            let (diagnostics, isClosed) = parent.registry.withLock { registry in
                registry.children.removeAll { $0.container == nil }
                registry.children.append(WeakContainer(container: self))
                return (registry.diagnostics, registry.isClosed)
            }
            registry.withLock { registry in
                registry.diagnostics = diagnostics.map { Diagnostics(trackers: $0.trackers, observer: nil) }
                registry.isClosed = isClosed
            }
        }
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
        get { registry.withLock { $0.depthLimit } }
        set { registry.withLock { $0.depthLimit = max(0, newValue) } }
    }

    // MARK: Looking up

    /// The look-up a resolve starts with: the entry, the instance its permanent or weak storage holds, and this
    /// container's depth limit, each read under the lock of the container that has it.
    func lookupForResolution(_ key: ServiceKey) -> Lookup {
        var generation = 0
        var lookup = registry.withLock { registry in
            var lookup = Lookup(
                entry: registry.entries[key], owner: self, depthLimit: registry.depthLimit,
                isClosed: registry.isClosed, diagnostics: registry.diagnostics)
            if lookup.entry == nil, let cached = registry.inherited[key] {
                lookup.entry = cached.entry
                lookup.owner = cached.owner
            }
            generation = registry.inheritedGeneration
            return lookup
        }
        if let entry = lookup.entry {
            // Found here, or found earlier in an ancestor: its held instance is read under the owner's lock.
            if lookup.owner !== self, entry.storage != nil {
                lookup.owner.registry.withLock { _ in lookup.readHeld(from: entry) }
            }
            return lookup
        }
        var container = self
        while let parent = container.parent {
            container = parent
            let found = container.registry.withLock { registry in
                let entry = registry.entries[key]
                lookup.readHeld(from: entry)
                return entry
            }
            if let found {
                lookup.entry = found
                lookup.owner = container
                remember(found, in: container, for: key, generation: generation)
                return lookup
            }
        }
        return lookup
    }

    /// The instance a strong registration of this container holds under `key`, if any: a look-up that builds no
    /// `Lookup` (measured: a fifth of a cached permanent resolve).
    private func heldInstance(for key: ServiceKey) -> StoredValue? {
        registry.withLock { registry in
            guard !registry.isClosed, let storage = registry.entries[key]?.storage else { return nil }
            return storage.heldValueLocked()
        }
    }

    /// Caches where an ancestor's registration was found, unless an ancestor's registrations changed meanwhile.
    private func remember(_ entry: ServiceEntry, in owner: Container, for key: ServiceKey, generation: Int) {
        registry.withLock { registry in
            guard registry.inheritedGeneration == generation else { return }
            registry.inherited[key] = InheritedEntry(entry: entry, owner: owner)
        }
    }

    /// Forgets the cached ancestor look-ups of every descendant: called after this container's registrations
    /// changed, since a descendant may have cached one of them, or may now find one of them first.
    func invalidateDescendantCaches() {
        let children = registry.withLock { $0.children.compactMap(\.container) }
        for child in children {
            let dropped = child.registry.withLock { registry in
                registry.inheritedGeneration &+= 1
                defer { registry.inherited = [:] }
                return registry.inherited
            }
            withExtendedLifetime(dropped) {}
            child.invalidateDescendantCaches()
        }
    }

    /// Adds a leak tracker to this container and every descendant, present and future.
    func attach(_ tracker: LeakTracker) {
        let children = registry.withLock { registry in
            let trackers = (registry.diagnostics?.trackers ?? []).filter { $0.tracker != nil }
            registry.diagnostics = Diagnostics(
                trackers: trackers + [WeakTracker(tracker: tracker)], observer: registry.diagnostics?.observer)
            return registry.children.compactMap(\.container)
        }
        for child in children { child.attach(tracker) }
    }

    /// The keys registered for `key`'s service type, here and in the ancestors, nearest first.
    func registrations(of key: ServiceKey) -> [ServiceKey] {
        var found: [ServiceKey] = []
        var container: Container? = self
        while let current = container {
            let keys = current.registry.withLock { registry in
                registry.entries.values.map(\.key).filter { $0.serviceType == key.serviceType }
            }
            for candidate in keys.sorted(by: { $0.description < $1.description }) where !found.contains(candidate) {
                found.append(candidate)
            }
            container = current.parent
        }
        return found
    }

    // MARK: Changing registrations

    // Entries that leave the registry are released after the lock is: releasing one may release the instance
    // it held, and that instance's deinit may well use the container.

    func add(_ entry: ServiceEntry) {
        let (replaced, released, hasChildren) = registry.withLock { registry in
            let replaced = registry.entries.insert(entry)
            return (replaced, replaced?.storage?.releaseLocked(), !registry.children.isEmpty)
        }
        if hasChildren { invalidateDescendantCaches() }
        ReleasedInstance.run(released.map { [$0] } ?? [])
        withExtendedLifetime(replaced) {}
    }

    /// Gives a registration another scope, or one more hook, if the container still holds that registration.
    func reconfigure(
        _ key: ServiceKey,
        token: RegistrationToken,
        scope: ObjectScope? = nil,
        addingHook: InitHook? = nil,
        addingReleaseHook: ReleaseHook? = nil,
        shortLived: Bool? = nil
    ) {
        let (replaced, released): (ServiceEntry?, ReleasedInstance?) = registry.withLock { registry in
            guard let entry = registry.entries[key], entry.token === token else { return (nil, nil) }
            let reconfigured = entry.reconfigured(lock: self.registry) { configuration in
                if let scope { configuration.scope = scope }
                if let addingHook { configuration.hooks.append(addingHook) }
                if let addingReleaseHook { configuration.releaseHooks.append(addingReleaseHook) }
                if let shortLived { configuration.isShortLived = shortLived }
            }
            registry.entries.insert(reconfigured)
            // A new scope gets a new storage: the old one's instance is dropped.
            let dropped = reconfigured.storage !== entry.storage ? entry.storage?.releaseLocked() : nil
            return (entry, dropped)
        }
        if replaced != nil { invalidateDescendantCaches() }
        ReleasedInstance.run(released.map { [$0] } ?? [])
        withExtendedLifetime(replaced) {}
    }

    func entry(_ key: ServiceKey, token: RegistrationToken) -> ServiceEntry? {
        registry.withLock { registry in
            guard let entry = registry.entries[key], entry.token === token else { return nil }
            return entry
        }
    }

    /// This container's entries.
    var entries: [ServiceEntry] {
        registry.withLock { $0.entries.values }
    }

    /// Removes the entries whose keys match.
    func removeEntries(where shouldRemove: (ServiceKey) -> Bool) {
        let (removed, released) = registry.withLock { registry in
            let removed = registry.entries.removeAll(where: shouldRemove)
            return (removed, removed.compactMap { $0.storage?.releaseLocked() })
        }
        if !removed.isEmpty { invalidateDescendantCaches() }
        ReleasedInstance.run(released)
        withExtendedLifetime(removed) {}
    }

    /// Marks this container and its descendants closed, and hands back the instances they held.
    func closeSubtree() -> [ReleasedInstance] {
        let (released, children) = registry.withLock { registry in
            guard !registry.isClosed else { return ([ReleasedInstance](), [Container]()) }
            registry.isClosed = true
            let released = registry.entries.values.compactMap { $0.storage?.releaseLocked() }
            return (released, registry.children.compactMap(\.container))
        }
        return released + children.flatMap { $0.closeSubtree() }
    }

    // MARK: Resolver

    /// Resolves the service registered for `serviceType` and `name`, as a new top-level resolution.
    ///
    /// ```swift
    /// let car = try container.resolve(Car.self, name: "sports")
    /// ```
    public func resolve<Service>(_ serviceType: Service.Type, name: String?) throws -> Service {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        // Fastest path: a permanent instance this container holds itself. A miss probes the table once more in
        // `Resolution.resolve`; measured (callgrind, per resolve): a held permanent 654 → 426 instructions, a
        // transient 1,904 → 2,124. Folding the check into `lookupForResolution` instead cost both (509 and 2,104).
        if let held = heldInstance(for: key) { return held.load(as: Service.self) }
        return try Resolution.resolve(key, in: self) { entry, resolution, depth in
            guard let entry else { return try resolution.derive(Service.self, name: name, depth: depth) }
            return try entry.make(resolution, as: Service.self)
        }
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
        let argumentsType: Any.Type = (repeat each Argument).self
        guard argumentsType != Void.self else { return try resolve(serviceType, name: name) }
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: argumentsType)
        return try Resolution.resolve(key, in: self) { entry, resolution, depth in
            guard let entry else {
                return try resolution.derive(Service.self, name: name, depth: depth, arguments: repeat each arguments)
            }
            return try resolution.make(entry, as: Service.self, arguments: repeat each arguments)
        }
    }
}

extension Container: CustomStringConvertible {
    /// Lists the container's own registrations, sorted, with their scopes.
    public var description: String {
        let lines = entries.map { "  \($0.key) [\($0.scope)]" }.sorted()
        let header =
            "Container (\(lines.count) registration\(lines.count == 1 ? "" : "s")\(parent == nil ? "" : ", with a parent"))"
        return ([header] + lines).joined(separator: "\n")
    }
}

/// What a container holds: its registrations and settings.
struct Registry {
    var entries = ServiceTable()
    var depthLimit = 200
    /// Set by `close()`: resolves throw `.containerClosed`.
    var isClosed = false
    /// Set on the throwaway copies `validate()` resolves in.
    /// The leak trackers watching this container (those made on it and on its ancestors), and the observer of a
    /// copy made by `validate()`. `nil` when there are neither, which is what resolves check.
    var diagnostics: Diagnostics?
    /// The container's children, so a tracker made here reaches the whole subtree.
    var children: [WeakContainer] = []
    /// Registrations found in ancestors by earlier look-ups, so the next one does not walk the tree again.
    var inherited: [ServiceKey: InheritedEntry] = [:]
    /// Bumped whenever an ancestor's registrations change and `inherited` is cleared.
    var inheritedGeneration = 0
}

/// What watches a container's resolutions: leak trackers, and `validate()`'s observer. Immutable: a change makes a
/// new one, so a resolution can keep the one it started with.
final class Diagnostics: Sendable {
    let trackers: [WeakTracker]
    let observer: ValidationObserver?

    init(trackers: [WeakTracker], observer: ValidationObserver?) {
        self.trackers = trackers
        self.observer = observer
    }
}

/// An ancestor's registration, as a descendant caches it.
struct InheritedEntry {
    let entry: ServiceEntry
    /// `unowned(unsafe)`: an ancestor outlives its descendants' registries.
    unowned(unsafe) let owner: Container
}

struct WeakContainer {
    weak var container: Container?
}

/// What a look-up found: the registration, the container that holds it, and the instance it holds, if any.
struct Lookup: ~Copyable {
    var entry: ServiceEntry?
    /// `unowned(unsafe)`: the container is the one the look-up started in or one of its ancestors, which the
    /// caller keeps alive. (Measured: the retain and release were a tenth of a look-up.)
    unowned(unsafe) var owner: Container
    /// A strong storage's instance.
    var heldValue: StoredValue?
    /// A weak storage's instance.
    var heldObject: AnyObject?
    /// The depth limit of the container the look-up started in.
    let depthLimit: Int
    /// What watches the container the look-up started in: usually nothing.
    let diagnostics: Diagnostics?
    /// Whether the container the look-up started in was closed.
    let isClosed: Bool

    init(
        entry: ServiceEntry?,
        owner: Container,
        depthLimit: Int,
        isClosed: Bool,
        diagnostics: Diagnostics?
    ) {
        self.entry = entry
        self.owner = owner
        self.depthLimit = depthLimit
        self.isClosed = isClosed
        self.diagnostics = diagnostics
        readHeld(from: entry)
    }

    /// Reads the instance `entry`'s storage holds. Call with the owning container's lock held.
    mutating func readHeld(from entry: ServiceEntry?) {
        guard let storage = entry?.storage else { return }
        heldValue = storage.heldValueLocked()
        heldObject = storage.heldObjectLocked()
    }
}
