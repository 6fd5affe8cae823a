internal import ArborPrimitives

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
    /// How far below the root of its tree this container is: 0 for a root, 1 for a root's child, and so on.
    ///
    /// ```swift
    /// let request = root.makeChild()
    /// print(request.treeDepth)  // 1
    /// ```
    public var treeDepth: Int {
        var depth = 0
        var ancestor = parent
        while let current = ancestor {
            depth += 1
            ancestor = current.parent
        }
        return depth
    }
    /// The scope of registrations that do not call ``Registration/inObjectScope(_:)``.
    public let defaultScope: ObjectScope

    /// The registrations and settings, behind the container's lock. The lock also guards the instances the
    /// container's permanent and weak registrations hold (see ``InstanceStorage``). Its allocation holds the
    /// container's four atomic words too (`version` and the three after it): one allocation where two were
    /// (measured: a malloc and a free fewer a child; request_scope 15,179 → 14,962 instructions, make_child_10_siblings
    /// 6,332 → 6,113).
    let registry = Protected.make(with: { Registry() }, words: (UniqueNumber.next(), 0, 0, 0))

    /// Changes, to a number no container had before, whenever what a look-up starting here finds may have
    /// changed: this container's registrations or settings, or an ancestor's registrations. Threads validate
    /// their cached look-ups against it (``LookupCache``). Lives in `registry`'s allocation.
    @inline(__always)
    var version: AtomicWord { registry.words }
    /// Which service types this container has registrations of, besides ``firstRegisteredType``, as a set of bits
    /// (``typeBit(of:)``): one is set when a registration of another type is added, and never cleared. A nested
    /// look-up of a type that is neither the first nor has its bit set needs nothing of this container, and takes the
    /// parent's answer from the thread's cache without this container's lock (`Resolution.find(_:in:)`). The top
    /// bit, ``ownSettingsBit``, is set once the container's settings are its own (``markSettings(of:)``): until then a
    /// top-level look-up needs nothing of it either (`defersToParent`). Shares `registry`'s allocation.
    var registeredTypes: AtomicWord { version.second }
    /// The first service type this container registered, exactly (``typeWord(of:)``), or 0 before its first
    /// registration; set once, never changed. A request's child registers one type, as a rule (the request's user),
    /// and with one bit a type, every other type whose bit it shared looked the child up under its lock on every
    /// request — a lottery of where the binary's type metadata lie, which changes with every start of a program
    /// (address space randomisation). Measured on the Hummingbird notes server under callgrind: a build before this
    /// word and the look-up cache's rule for the same key (`LookupCache.store`) looked the child up 2.08 times a
    /// request, builds with them once (the user's own look-up, which needs the child). Shares `registry`'s allocation.
    var firstRegisteredType: AtomicWord { version.fourth }
    /// Identifies the tree: a number the root got when it was made, which threads resolving in the tree publish
    /// (``Reclamation``). Never 0 or 1.
    let root: Int
    /// `parent`, unretained, for the look-ups that read it while the container, and so its parent, is alive.
    let unretainedParent: Unretained<Container>?
    /// Whether the container has no parent: its permanent instances are read without its lock (``PublishedValue``).
    var isRoot: Bool { unretainedParent == nil }
    /// This container's neighbours among its parent's children (``ChildList``), and which of the parent's lists it is
    /// in. Guarded by that list's lock, which already makes accesses exclusive.
    @exclusivity(unchecked) var siblings = SiblingLinks()
    /// The address of this container's children (``ChildStripes``), made with its first child, retained by hand, or 0
    /// before. Shares `registry`'s allocation.
    private var childStripesWord: AtomicWord { version.third }

    /// Where this container's children's lists are, `nil` until its first child: the one reading of
    /// `childStripesWord`.
    @inline(__always)
    var childStripesAddress: UnsafeRawPointer? { UnsafeRawPointer(bitPattern: childStripesWord.load()) }

    /// Makes a container.
    ///
    /// ```swift
    /// let root = Container()                               // registrations default to .graph
    /// let child = Container(parent: root)                  // sees root's registrations
    /// let sessions = Container(defaultScope: .permanent)
    /// ```
    public init(parent: Container? = nil, defaultScope: ObjectScope = .graph) {
        self.parent = parent
        unretainedParent = parent.map { Unretained($0, retainedInChecks: false) }
        self.defaultScope = defaultScope
        root = parent?.root ?? UniqueNumber.next()
        if let parent {
            // Join the parent's subtree: inherit whether it is closed and the observers that watch it, and let
            // later ones find us. One critical section of the parent's list of children this thread joins (the
            // child's lock nested in it, the only place the two nest: the list first): a `close()` or an observer
            // added to an ancestor either happened before, and is inherited here, or comes after, and finds the
            // child among the children (``ChildStripes``).
            //
            // No `changed()`: no thread can have looked anything up in this container yet, and its version is a
            // number no container had before.
            siblings.stripe = parent.withChildStripes { stripes in
                stripes.insert(self) { isClosed, diagnostics in
                    // Usually nothing to inherit: a new registry is open and unwatched already, and its lock is left
                    // alone (a lock and an unlock of every request's child).
                    if !isClosed, case .none = diagnostics { return }
                    registry.withLock { registry in
                        if let diagnostics { registry.diagnostics = diagnostics.inherited }
                        registry.isClosed = isClosed
                        markSettings(of: registry)
                    }
                }
            }
        }
    }

    deinit {
        // Leave the parent's children, so that making a child costs the same however many siblings it has.
        // (Measured: the parent's list of children, swept of dead ones on every `makeChild()`, made a child cost
        // 0.66 ms with 10,000 live siblings.) The parent is alive: `self.parent` still holds it.
        // Borrowed, the parent and its stripes: neither retained nor released (two of each, a request's child).
        unretainedParent?.withObject { parent in
            parent.withExistingChildStripes { $0.remove(self, stripe: siblings.stripe) }
        }
        // Per-container instances go with their container, with their `onRelease` hooks: a request's unit of work
        // is rolled back even when the request's container is dropped without `close()`.
        // Without the lock: nothing else can reach the registry now. The container has left its parent's list,
        // every resolution, child and creation group that could use it holds it, and its storages' locks are this
        // one.
        let released = registry.withValueAssumingLocked { registry -> [ReleasedInstance] in
            guard !registry.perContainer.isEmpty else { return [] }
            var released: [ReleasedInstance] = []
            registry.perContainer.releaseLocked(into: &released)
            return released
        }
        ReleasedInstance.run(released)
        if let pointer = childStripesAddress {
            Unmanaged<ChildStripes>.fromOpaque(pointer).release()
        }
    }

    /// Runs `body` with this container's children, made with the first one, borrowed rather than retained: the
    /// container keeps them until its deinit.
    @inline(__always)
    func withChildStripes<Result>(_ body: (ChildStripes) -> Result) -> Result {
        if let result = withExistingChildStripes(body) { return result }
        makeChildStripes()
        return withExistingChildStripes(body)!
    }

    /// Makes this container's children's lists, unless another thread just did.
    @inline(never)
    private func makeChildStripes() {
        registry.withLock { registry in
            guard childStripesAddress == nil else { return }
            // Under the lock that `close()` and `changeObservers` take to change what the stripes hand down.
            let stripes = ChildStripes(isClosed: registry.isClosed, diagnostics: registry.diagnostics)
            childStripesWord.store(Int(bitPattern: Unmanaged.passRetained(stripes).toOpaque()))
        }
    }

    /// Runs `body` with this container's children, borrowed rather than retained; `nil` if it has had none.
    @inline(__always)
    func withExistingChildStripes<Result>(_ body: (ChildStripes) -> Result) -> Result? {
        guard let pointer = childStripesAddress else { return nil }
        return Unretained<ChildStripes>(fromOpaque: pointer).withObject(body)
    }

    /// How many children are linked in this container's lists: for tests.
    var linkedChildCount: Int {
        withExistingChildStripes { $0.count } ?? 0
    }

    /// The children whose deinit has not begun.
    var liveChildren: [Container] {
        withExistingChildStripes { $0.live() } ?? []
    }

    /// The storage of `entry`'s per-container instance in this container, made on first use; unretained: the container
    /// keeps its per-container storages until it is deinitialised, and a resolve that reads one keeps the container
    /// alive. `isNew` when this call made it: it holds nothing yet. Given a `member` that builds solo, a storage made
    /// here is claimed for it in the same critical section (`claimed`), as `InstanceStorage.claimSolo` would: nothing
    /// else can have seen it yet.
    @inline(__always)
    func perContainerStorageReference(
        for entry: Unretained<ServiceEntry>, claimingFor member: CreationCoordinator.Member? = nil
    ) -> (storage: Unretained<InstanceStorage>, isNew: Bool, claimed: Bool) {
        registry.withLock { registry in
            let identity = entry.withObject { $0.identity }
            if let storage = registry.perContainer.reference(for: identity) { return (storage, false, false) }
            let storage = entry.withObject { entry in
                InstanceStorage(
                    retention: .strong, releaseHooks: entry.releaseHooks, owner: self, key: entry.key)
            }
            registry.perContainer.add(storage, for: identity)
            var claimed = false
            if let member, case .claimed = storage.claimSoloLocked(by: member) { claimed = true }
            return (Unretained(storage, retainedInChecks: false), true, claimed)
        }
    }

    /// The storage of `entry`'s per-container instance in this container, made on first use.
    func perContainerStorage(for entry: ServiceEntry) -> InstanceStorage {
        perContainerStorageReference(for: Unretained(entry, retainedInChecks: false)).storage.object
    }

    /// Invalidates every thread's cached look-ups that start in this container. Call after the change.
    func changed() {
        version.storeInTotalOrder(UniqueNumber.next())
    }

    /// Frees an entry that left the registry once no thread can still be resolving with it, and keeps it until
    /// then (``Reclamation``). Call after `changed()` and `invalidateDescendantCaches()`, without the lock:
    /// freeing an entry frees what its factory captured, whose deinit may use the container.
    ///
    /// An entry no look-up ever found (`isPublished` false) is in no cache and in no resolve: it is freed at once.
    /// With `promptly` false (a reconfigured copy replaced the entry: the factory and what it captured live on in
    /// the copy), a published entry waits for the next prompt retirement, or for 64 others, so that a
    /// reconfiguration does not look at every thread.
    func retire(_ entry: ServiceEntry, promptly: Bool) {
        let waiting = registry.withLock { registry -> [ServiceEntry] in
            guard entry.isPublished else { return [] }
            registry.retired.append(entry)
            guard promptly || registry.retired.count >= 64 else { return [] }
            defer { registry.retired = [] }
            return registry.retired
        }
        guard !waiting.isEmpty else { return }
        if Reclamation.shared.isQuiescent(root) {
            withExtendedLifetime(waiting) {}
        } else {
            registry.withLock { $0.retired += waiting }
        }
    }

    /// Keeps a resolution that user code kept only `weak` or `unowned` after it finished (``Resolution/detach(keptWeakly:)``),
    /// so that the resolver stays usable as long as this container lives. Those whose weak and unowned references
    /// are all gone are dropped as the list grows.
    func keep(_ resolution: Resolution) {
        let dropped = registry.withLock { registry -> [Resolution] in
            registry.keptResolutions.append(resolution)
            guard registry.keptResolutions.count >= registry.pruneKeptResolutionsAt else { return [] }
            var dropped: [Resolution] = []
            registry.keptResolutions.removeAll { kept in
                let references = ReferenceCountProbe.references(of: kept)
                guard references.unowned <= 1, references.weak <= 1 else { return false }
                dropped.append(kept)
                return true
            }
            registry.pruneKeptResolutionsAt = max(16, registry.keptResolutions.count * 2)
            return dropped
        }
        withExtendedLifetime(dropped) {}  // Released after the lock.
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
        set {
            registry.withLock { registry in
                registry.depthLimit = max(0, newValue)
                markSettings(of: registry)
            }
            changed()
        }
    }

    // MARK: Looking up

    /// The look-up a resolve makes when its thread's ``LookupCache`` has nothing valid: this container's settings
    /// and its own registration of `key`, read under its lock, and otherwise what the parent's look-up finds —
    /// from `cache`, when the thread looked the key up from the parent lately (no lock of the parent's), or else
    /// the same way one level up, and then cached for the parent too. `version` is read first, so a change racing
    /// with the look-up leaves what it finds stale, never wrong: a parent's change gives its descendants new
    /// versions after it (`invalidateDescendantCaches()`).
    ///
    /// Measured: a request child's first look-ups took the root's lock, one for each key, and two threads making
    /// request children slowed each other down on it; with the root's look-ups in the thread's cache they take
    /// none. `cache` is `nil` for a look-up that must read every registry under its lock (`findUncached`).
    func lookupForResolution(_ key: ServiceKey, cache: LookupCache?) -> Lookup {
        let version = self.version.loadInTotalOrder()
        var lookup = registry.withLock { registry in
            let found = registry.lookUp(key, in: self)
            registry.isLookedUp = true
            var lookup = Lookup(
                version: version, depthLimit: registry.depthLimit, isClosed: registry.isClosed,
                diagnostics: registry.diagnostics)
            if let entry = found {
                entry.withObject { $0.isPublished = true }
                lookup.found = Found(entry: entry, owner: self)
            }
            return lookup
        }
        if lookup.found == nil, let parent = unretainedParent {
            lookup.found = parent.withObject { $0.find(key, cache: cache) }
        }
        return lookup
    }

    /// Where a look-up that starts in this container finds `key`: from `cache` if it holds a valid answer, or
    /// else under the registries' locks, and then cached.
    func find(_ key: ServiceKey, cache: LookupCache?) -> Found? {
        guard let cache else { return lookupForResolution(key, cache: nil).found }
        if let hit = cache.hit(key, in: self) { return hit.found }
        return lookUpAndRemember(key, in: cache).found
    }

    /// `lookupForResolution`, whose answer `cache` then holds for this container. With `uncached`, no level's
    /// answer is read from the cache: after a change the cache may not have seen yet (`findUncached`).
    @inline(__always)
    func lookUpAndRemember(_ key: ServiceKey, in cache: LookupCache, uncached: Bool = false) -> Lookup {
        let lookup = lookupForResolution(key, cache: uncached ? nil : cache)
        if let found = lookup.found {
            cache.store(key, in: self, version: lookup.version, found: found, lookup: lookup)
        }
        return lookup
    }

    /// Invalidates every thread's cached look-ups that start in a descendant: called after this container's
    /// registrations changed, since a descendant may have cached one of them, or may now find one of them first.
    func invalidateDescendantCaches() {
        for child in liveChildren {
            child.changed()
            child.invalidateDescendantCaches()
        }
    }

    /// Adds or removes an observer in this container and every descendant, present and future.
    func changeObservers(adding added: (any ResolutionObserver)?, removing removed: (any ResolutionObserver)?) {
        let children = registry.withLock { registry in
            registry.diagnostics = Diagnostics.changing(registry.diagnostics, adding: added, removing: removed)
            markSettings(of: registry)
            return withExistingChildStripes { $0.setDiagnostics(registry.diagnostics) } ?? []
        }
        changed()
        for child in children { child.changeObservers(adding: added, removing: removed) }
    }

    /// The keys registered for `key`'s service type, here and in the ancestors, nearest first.
    func registrations(of key: ServiceKey) -> [ServiceKey] {
        var found: [ServiceKey] = []
        var seen: Set<ServiceKey> = []
        var container: Container? = self
        while let current = container {
            let keys = current.registry.withLock { registry in
                registry.fileInstances(in: current)
                return registry.entries.values.map(\.key).filter { $0.serviceType == key.serviceType }
            }
            // Each key described once: a type registered under thousands of names sorts in milliseconds.
            let sorted = keys.map { ($0.description, $0) }.sorted { $0.0 < $1.0 }.map(\.1)
            for candidate in sorted where seen.insert(candidate).inserted {
                found.append(candidate)
            }
            container = current.parent
        }
        return found
    }

    // MARK: Changing registrations

    // An entry that leaves the registry is retired: freed once no thread can be resolving with it from its
    // look-up cache (see `retire`). The instance it held is released at once, after the lock: that instance's
    // deinit may well use the container.

    /// Adds `entry`, replacing the one under its key. With `requiring`, only while the container holds that
    /// registration (a forward of a registration that was replaced or removed is not added).
    func add(_ entry: ServiceEntry, requiring: (key: ServiceKey, token: RegistrationToken)? = nil) {
        let (replaced, retirement, lookedUp) = registry.withLock { registry -> (ServiceEntry?, Retirement, Bool) in
            registry.fileInstances(in: self)
            if let requiring, registry.entries[requiring.key]?.token != requiring.token {
                return (nil, Retirement(nil), false)
            }
            // The lock orders this with other registrations; threads that look without it read the words.
            recordRegistration(of: entry.key.serviceType)
            let replaced = registry.entries.insert(entry)
            if let replaced {
                // A name registered again keeps its place in `resolveAll`'s order.
                registry.firstRegistered[entry.key] = registry.firstRegistered[entry.key] ?? replaced.identity
            }
            return (
                replaced, Retirement(replaced?.storage), registry.isLookedUp
            )
        }
        // After the registration is in: a child made from now on finds it; one made before is among the children.
        let hasChildren = childStripesAddress != nil
        // A look-up cached here may have found an ancestor's registration under this key, which this one hides.
        if lookedUp { changed() }
        if hasChildren { invalidateDescendantCaches() }
        retirement.finish()
        if let replaced { retire(replaced, promptly: true) }
    }

    /// Gives a registration another scope, if the container still holds that registration.
    @usableFromInline
    func setScope(_ scope: ObjectScope, of key: ServiceKey, token: RegistrationToken) {
        // The usual `register(…).inObjectScope(…)`: the entry no look-up has found yet changes in place, without
        // the general reconfiguration's copies of its configuration.
        let (changed, replacedStorage) = registry.withLock { registry -> (Bool, InstanceStorage?) in
            registry.fileInstances(in: self)
            guard let found = registry.entries.unretainedEntry(for: key) else { return (false, nil) }
            return found.withObject { entry in
                guard entry.token == token, !entry.isPublished else { return (false, nil) }
                return (true, entry.setScopeInPlace(scope, in: self))
            }
        }
        // Released after the lock. No instance, and nothing builds one: no look-up found the entry.
        withExtendedLifetime(replacedStorage) {}
        if !changed { reconfigure(key, token: token, scope: scope) }
    }

    /// Marks a registration short-lived, if the container still holds that registration.
    @usableFromInline
    func markShortLived(_ key: ServiceKey, token: RegistrationToken) {
        reconfigure(key, token: token, shortLived: true)
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
        func change(_ configuration: inout EntryConfiguration) {
            if let scope { configuration.scope = scope }
            if let addingHook { configuration.hooks.append(addingHook) }
            if let addingReleaseHook { configuration.releaseHooks.append(addingReleaseHook) }
            if let shortLived { configuration.isShortLived = shortLived }
        }
        let (replaced, retirement, unpublished) = registry.withLock {
            registry -> (ServiceEntry?, Retirement, EntryConfiguration?) in
            registry.fileInstances(in: self)
            guard let entry = registry.entries[key], entry.token == token else { return (nil, Retirement(nil), nil) }
            let storage = entry.storage
            guard entry.isPublished || addingHook != nil else {
                // No look-up found it, so no thread holds it: change it in place.
                let old = entry.reconfigureInPlace(in: self, change)
                return (nil, Retirement(entry.storage !== storage ? storage : nil), old)
            }
            let reconfigured = entry.reconfigured(in: self, change)
            registry.entries.insert(reconfigured)
            // A new scope gets a new storage: the old one retires, and its instance is dropped.
            return (entry, Retirement(reconfigured.storage !== storage ? storage : nil), nil)
        }
        withExtendedLifetime(unpublished) {}  // Released after the lock: it may hold a storage.
        retirement.finish()
        // An entry no look-up found is in no thread's cache: nothing to invalidate, and it is freed at once.
        guard let replaced, replaced.isPublished else { return }
        changed()
        invalidateDescendantCaches()
        retire(replaced, promptly: false)
    }

    /// The scope of the registration a handle refers to, read under the lock (an unpublished entry may change).
    func scope(_ key: ServiceKey, token: RegistrationToken) -> ObjectScope? {
        registry.withLock { registry in
            registry.fileInstances(in: self)
            guard let entry = registry.entries[key], entry.token == token else { return nil }
            return entry.scope
        }
    }

    /// This container's entries. They leave the lock, so they count as found: they will not be changed in place
    /// any more.
    var entries: [ServiceEntry] {
        registry.withLock { registry in
            registry.fileInstances(in: self)
            let entries = registry.entries.values
            for entry in entries { entry.isPublished = true }
            return entries
        }
    }

    /// Removes the entries whose keys match.
    func removeEntries(where shouldRemove: (ServiceKey) -> Bool) {
        let (removed, retirement) = registry.withLock { registry in
            registry.fileInstances(in: self)
            let removed = registry.entries.removeAll(where: shouldRemove)
            for entry in removed { registry.firstRegistered[entry.key] = nil }
            return (removed, Retirement(removed.compactMap(\.storage)))
        }
        guard !removed.isEmpty else { return }
        changed()
        invalidateDescendantCaches()
        retirement.finish()
        for entry in removed { retire(entry, promptly: true) }
    }

    /// Marks this container and its descendants closed, and hands back the instances they held; `nil` when this
    /// container was closed already. A container that lets an instance with hooks or observers go joins `releasing`,
    /// and one that lets an `async` hook go files `latch`: the caller ends both once the hooks have run.
    func closeSubtree(latch: inout ReleaseLatch?, releasing: inout ReleasingContainers) -> [ReleasedInstance]? {
        let closed = registry.withLock { registry -> (released: [ReleasedInstance], children: [Container])? in
            guard !registry.isClosed else { return nil }
            registry.isClosed = true
            markSettings(of: registry)
            // Under the lock, with the flag: a thread that reads `isClosed` afterwards (under this lock) then finds its
            // cached look-ups stale, and its resolve throws instead of using them.
            changed()
            // Pending instances have no hooks, and nothing watches them: they stay as they are, released with the
            // container, as their factories would keep them if filed. Watched, they are filed, and released here.
            if registry.diagnostics != nil { registry.fileInstances(in: self) }
            var released: [ReleasedInstance] = []
            registry.releaseEntriesLocked(into: &released)
            registry.perContainer.releaseLocked(into: &released)
            // Under the lock, with the flag: a `closeAndWait()` that finds the container closed finds these too.
            if released.contains(where: \.isWatched) {
                registry.isReleasing = true
                releasing.append(self)
                if !ReleasedInstance.haveOnlySynchronousHooks(released) {
                    if latch == nil { latch = ReleaseLatch() }
                    latch?.file(under: self)
                }
            }
            let children = withExistingChildStripes { $0.close() } ?? []
            return (released, children)
        }
        guard let closed else { return nil }
        var released = closed.released
        for child in closed.children { released += child.closeSubtree(latch: &latch, releasing: &releasing) ?? [] }
        return released
    }
}
