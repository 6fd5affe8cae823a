/// What a container holds: its registrations and settings.
struct Registry {
    /// A new container's `depthLimit`.
    static let defaultDepthLimit = 200

    var entries = ServiceTable()
    var depthLimit = Registry.defaultDepthLimit
    /// Set by `close()`: resolves throw `.containerClosed`.
    var isClosed = false
    /// The observers watching this container (those added to it and to its ancestors), and the validation observer
    /// of a copy made by `validate()`. `nil` when there are neither, which is what resolves check.
    var diagnostics: Diagnostics?

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
