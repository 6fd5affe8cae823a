internal import ArborPrimitives

/// What a container holds: its registrations and settings.
struct Registry {
    /// A new container's `depthLimit`.
    static let defaultDepthLimit = 200

    /// The registrations, by key. Read and changed only after ``fileInstances(in:)``: an instance registration kept
    /// pending is not among them yet. Internal checks assert it, through accessors; a release build reads the stored
    /// table directly (measured: with the accessors, `register_1000` took 91 instructions more a registration, most
    /// of them retains and releases of the table's entries).
    #if ARBOR_INTERNAL_CHECKS
    var entries: ServiceTable {
        _read {
            internalInvariant(pending.isEmpty, "the registrations read with instances still pending")
            yield table
        }
        _modify {
            internalInvariant(pending.isEmpty, "the registrations changed with instances still pending")
            yield &table
        }
    }
    private var table = ServiceTable()
    #else
    var entries = ServiceTable()
    #endif
    /// Instance registrations kept as they were given, not yet in `entries` (``PendingInstance``).
    var pending = PendingInstances()
    var depthLimit = Registry.defaultDepthLimit
    /// Set by `close()`: resolves throw `.containerClosed`.
    var isClosed = false
    /// Set by the close that let an instance with release hooks or observers go from this container, until it has
    /// run their synchronous hooks: a `closeAndWait()` that finds the container closed meanwhile waits for them
    /// (``ReleasingContainers``).
    var isReleasing = false
    /// Set by such a `closeAndWait()`, which filed a ``ReleaseLatch`` under the container for that close to open.
    var hasReleaseWaiter = false
    /// The observers watching this container (those added to it and to its ancestors), and the validation observer
    /// of a copy made by `validate()`. `nil` when there are neither, which is what resolves check.
    var diagnostics: Diagnostics?

    /// Whether a resolve may read the instances kept pending as they are (``PendingInstance``): the container is open
    /// and nothing watches it. Otherwise the resolve goes the usual way, which files them.
    var mayReadPending: Bool {
        guard !isClosed, case .none = diagnostics else { return false }
        return true
    }

    /// Whether the settings are a new container's: open, unwatched, with the default depth limit. A critical
    /// section that changes one tells the container (`Container.markSettings(of:)`).
    var hasDefaultSettings: Bool {
        guard !isClosed, depthLimit == Registry.defaultDepthLimit, case .none = diagnostics else { return false }
        return true
    }
    /// Set by the first look-up that starts here: until then no thread has cached anything for this container, so
    /// a registration need not change its version.
    var isLookedUp = false
    /// Entries that left `entries` while threads were resolving, which may still use them from their look-up
    /// caches: freed at a later change when no thread resolves, or with the container (see `Container.retire`).
    /// Their instances were released when they left.
    var retired: [ServiceEntry] = []
    /// Resolutions that user code keeps only `weak` or `unowned` (see `Container.keep`).
    var keptResolutions: [Resolution] = []
    /// The storages of the per-container instances this container keeps, by registration identity
    /// (``ObjectScope/perContainer``).
    var perContainer = PerContainerStorages()
    var pruneKeptResolutionsAt = 16
    /// The identity of the first registration under a key registered again since, which `resolveAll` orders it by;
    /// a key registered once is ordered by its registration's identity.
    var firstRegistered: [ServiceKey: Int] = [:]

    // The three readers below take the entries whether or not instances are pending, and leave those as they are: a
    // look-up of another key, `close()`, and a new pending instance's check. In a release build they read the stored
    // `entries` directly: through a computed property or an accessor, a look-up took two retains and two releases
    // more (`cold_start_200` +2.1%).

    /// The entry under `key`, for a look-up: files the pending instances first if `key` is one of them, and leaves
    /// them as they are for any other key, whose entry is where it was.
    @inline(__always)
    mutating func lookUp(_ key: ServiceKey, in owner: Container) -> Unretained<ServiceEntry>? {
        if pending.contains(key) { fileInstances(in: owner) }
        #if ARBOR_INTERNAL_CHECKS
        return table.unretainedEntry(for: key)
        #else
        return entries.unretainedEntry(for: key)
        #endif
    }

    /// Whether a registration other than a pending instance has `key`.
    func hasEntry(for key: ServiceKey) -> Bool {
        #if ARBOR_INTERNAL_CHECKS
        table.unretainedEntry(for: key) != nil
        #else
        entries.unretainedEntry(for: key) != nil
        #endif
    }

    /// The instances the entries hold, released for `close()`, into `released`: pending instances stay as they are.
    /// Inlined into the close, as it was before it moved here (out of line: 66 instructions and two copies of an
    /// index through the runtime's value witnesses a close).
    @inline(__always)
    func releaseEntriesLocked(into released: inout [ReleasedInstance]) {
        #if ARBOR_INTERNAL_CHECKS
        let entries = table
        #endif
        released.reserveCapacity(entries.count + perContainer.count)
        entries.forEach { entry in
            if let instance = entry.storage?.releaseLocked() { released.append(instance) }
        }
    }

    /// Files the instance registrations kept pending as the entries they would have had: call, with the lock held,
    /// before reading or changing `entries`. A container closed since keeps no instance in them, as a close would
    /// have released it.
    @inline(__always)
    mutating func fileInstances(in owner: Container) {
        guard !pending.isEmpty else { return }
        fileInstancesSlowly(in: owner)
    }

    @inline(never)
    private mutating func fileInstancesSlowly(in owner: Container) {
        for instance in pending.removeAll() {
            let key = instance.key
            let storage =
                isClosed
                ? InstanceStorage.make(for: .permanent, key: key, in: owner)
                : InstanceStorage(
                    holding: instance.box, owner: owner, key: key, publishes: owner.isRoot,
                    sequence: instance.sequence)
            let entry = instance.entryType.filed(
                key: key, token: instance.token,
                configuration: EntryConfiguration(scope: .permanent, storage: storage), box: instance.box)
            let replaced = entries.insert(entry)
            internalInvariant(replaced == nil, "a pending instance's key among the registrations")
        }
        owner.pendingInstancesFiled()
    }
}

/// What watches a container's resolutions: the observers added to it and its ancestors (``ResolutionObserver``; a
/// ``LeakTracker`` is one), and the validation observer of a copy made by `validate()`. Immutable: a change makes a
/// new one, so a resolution keeps the one it started with.
final class Diagnostics: Sendable {
    let observers: [any ResolutionObserver]
    let validation: ValidationObserver?

    init(observers: [any ResolutionObserver], validation: ValidationObserver?) {
        self.observers = observers
        self.validation = validation
    }

    /// `self` with `observer` added, or removed (compared by identity); `nil` when nothing watches any more.
    static func changing(
        _ diagnostics: Diagnostics?, adding added: (any ResolutionObserver)? = nil,
        removing removed: (any ResolutionObserver)? = nil
    ) -> Diagnostics? {
        var observers = diagnostics?.observers ?? []
        if let removed { observers.removeAll { $0 === removed } }
        if let added, !observers.contains(where: { $0 === added }) { observers.append(added) }
        let validation = diagnostics?.validation
        if observers.isEmpty, validation == nil { return nil }
        return Diagnostics(observers: observers, validation: validation)
    }

    /// What a new child inherits: the observers, not validation.
    var inherited: Diagnostics? {
        observers.isEmpty ? nil : Diagnostics(observers: observers, validation: nil)
    }
}
