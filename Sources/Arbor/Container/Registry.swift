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
    /// The container's live children, so that `close()`, a tracker made here and a registration change reach the
    /// whole subtree. A child adds itself when it is made and removes itself in its `deinit`.
    var children = ChildList()
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
