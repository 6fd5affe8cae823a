internal import ArborPrimitives

/// Says that a storage holds no instance now.
struct NotHeld: Error {}

/// Where a permanent or weak registration keeps its instance, and how that instance gets built exactly once.
///
/// A storage goes `empty → building → holding`. While one resolution builds the instance, others that need it
/// wait; the instance becomes visible to them only when the building resolution has finished, hooks and all.
/// If that resolution fails, the storage goes back to `empty` and one of the waiters builds it instead.
///
/// The storage's state is guarded by the lock of the container that holds the registration, so the look-up
/// that finds the registration reads the held instance under the same lock. Transitions other than `reset`
/// happen under the ``CreationCoordinator``'s lock as well, which never stays held while a factory or hook runs.
final class InstanceStorage: @unchecked Sendable {
    private enum State {
        case empty
        case building(owner: Resolution)
        case holding
    }

    let retention: ObjectScope.Retention
    /// The owning container's lock, unretained: the container outlives every use of its storages (a look-up runs
    /// on the container, and a resolution keeps the container it started in, and so its ancestors, alive), a
    /// strong reference would be a cycle through the container's entries, and the read of a held instance must
    /// not retain it.
    private let lockReference: Unmanaged<Protected<Registry>>
    private var lock: Protected<Registry> { lockReference.takeUnretainedValue() }
    private var state = State.empty
    /// The instance being built (both retentions), or held (strong retention). Kept as `Unmanaged`, retained, so
    /// that `loadHeld` reads it under the lock without retaining the box (measured: a tenth of a cached
    /// permanent resolve).
    private var valueReference: Unmanaged<StoredValue>?
    private var value: StoredValue? {
        get { valueReference?.takeUnretainedValue() }
        set {
            let old = valueReference
            valueReference = newValue.map { .passRetained($0) }
            old?.release()
        }
    }
    private weak var weakObject: AnyObject?
    /// Run when the container drops the instance it holds strongly.
    private var releaseHooks: [ReleaseHook]
    /// When the held instance was published, in the order of all publications: release runs newest first.
    private var sequence: UInt64 = 0

    init(retention: ObjectScope.Retention, releaseHooks: [ReleaseHook], lock: Protected<Registry>) {
        self.retention = retention
        self.releaseHooks = releaseHooks
        lockReference = .passUnretained(lock)
    }

    deinit {
        valueReference?.release()
    }

    @inline(__always)
    static func make(
        for scope: ObjectScope,
        releaseHooks: [ReleaseHook] = [],
        lock: Protected<Registry>
    ) -> InstanceStorage? {
        switch scope.storage {
        case .none, .graph: nil
        case .strong: InstanceStorage(retention: .strong, releaseHooks: releaseHooks, lock: lock)
        case .weak: InstanceStorage(retention: .weak, releaseHooks: releaseHooks, lock: lock)
        }
    }

    /// Call with the owning container's lock held.
    func setReleaseHooksLocked(_ hooks: [ReleaseHook]) {
        releaseHooks = hooks
    }

    // MARK: Reading

    /// The instance held, as the registration's `Service`; throws when there is none. Takes the owning container's
    /// lock.
    ///
    /// It throws rather than returning `Service?`: an optional of a generic type in the resolve's unspecialised
    /// code costs a generic-metadata look-up on every call (measured: a third of a transient resolve).
    @inline(__always)
    func loadHeld<Service>(as _: Service.Type) throws(NotHeld) -> Service {
        lockReference._withUnsafeGuaranteedRef { $0.lock() }
        defer { lockReference._withUnsafeGuaranteedRef { $0.unlock() } }
        guard case .holding = state else { throw NotHeld() }
        if retention == .strong, let valueReference {
            return valueReference._withUnsafeGuaranteedRef { $0.load(as: Service.self) }
        }
        // The weak load returns a reference the result takes over. A weakly referenced object keeps its counts in a
        // side table, where a retain and a release cost more than the rest of the resolve, so the reference is moved,
        // never copied (`unsafeBitCast` would copy it).
        var object: AnyObject? = weakObject
        guard let dynamicType = object.map({ type(of: $0) }) else { throw NotHeld() }
        // A class registered as itself: the reference is the `Service`, moved out without a cast (measured: the cast
        // was a third of the resolve).
        if dynamicType == Service.self { return moveReference(out: &object, as: Service.self) }
        return object as! Service  // A protocol or a superclass: the cast moves the reference.
    }

    /// Whether the storage keeps `object` strongly: the instance of a permanent (or other strong) registration.
    func keeps(_ object: AnyObject) -> Bool {
        withLock {
            guard case .holding = state, retention == .strong, let value else { return false }
            return asObject(value.asAny) === object
        }
    }

    // MARK: Changing; what a change drops is released after the locks, since its deinit may use the container

    /// Drops the held instance (`resetObjectScope`, `close`, a replaced or removed registration), and hands it
    /// back with its release hooks, for the caller to run after its locks. An instance still being built is left
    /// to finish.
    func release() -> ReleasedInstance? {
        withLock { releaseLocked() }
    }

    /// `release()`, with the owning container's lock already held.
    func releaseLocked() -> ReleasedInstance? {
        guard case .holding = state else { return nil }
        state = .empty
        weakObject = nil
        defer { value = nil }
        guard retention == .strong, let value else { return nil }
        return ReleasedInstance(value: value, hooks: releaseHooks, sequence: sequence)
    }

    // MARK: Transitions; called by the coordinator with its lock held

    enum Snapshot {
        case empty
        case building(owner: Resolution, instance: Any?)
        case holding(Any)
    }

    func snapshot() -> Snapshot {
        withLock {
            switch state {
            case .empty:
                return .empty
            case .building(let owner):
                return .building(owner: owner, instance: value?.asAny)
            case .holding:
                let instance: Any? = retention == .strong ? value?.asAny : weakObject
                return instance.map { .holding($0) } ?? .empty
            }
        }
    }

    func claim(for owner: Resolution) -> StoredValue? {
        withLock {
            state = .building(owner: owner)
            weakObject = nil
            defer { value = nil }
            return value
        }
    }

    /// Records the instance the owner's factory returned; the owner's resolution shares it from now on.
    func built<Service>(_ instance: Service) {
        let stored = StoredValue(instance)
        let replaced: StoredValue? = withLock {
            defer { value = stored }
            return value
        }
        withExtendedLifetime(replaced) {}
    }

    /// Makes the built instance the held one. Hands back what the storage no longer keeps: a weak storage's
    /// strong reference, or — if the container was closed meanwhile — the instance itself, to release.
    func publish(sequence: UInt64) -> (dropped: StoredValue?, released: ReleasedInstance?) {
        withLock {
            guard case .building = state else { return (nil, nil) }
            state = .holding
            self.sequence = sequence
            if lock.withUnsafeMutablePointerToHeader({ $0.pointee.isClosed }) {
                return (nil, releaseLocked())
            }
            guard retention == .weak, let value else { return (nil, nil) }
            weakObject = asObject(value.asAny)
            self.value = nil
            return (value, nil)
        }
    }

    func abandon() -> StoredValue? {
        withLock {
            guard case .building = state else { return nil }
            state = .empty
            defer { value = nil }
            return value
        }
    }

    @inline(__always)
    private func withLock<Result>(_ body: () -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}

/// Moves the reference out of `object` as a `Service`, and leaves `nil` behind. `Service` must be the object's own
/// class: the same single reference, reinterpreted.
@inline(__always)
private func moveReference<Service>(out object: inout AnyObject?, as _: Service.Type) -> Service {
    withUnsafeMutablePointer(to: &object) { pointer in
        let raw = UnsafeMutableRawPointer(pointer)
        let service = raw.assumingMemoryBound(to: Service.self).move()
        raw.initializeMemory(as: AnyObject?.self, repeating: nil, count: 1)
        return service
    }
}

/// The reference inside `value` when it holds a class instance; `nil` for value types.
func asObject(_ value: Any) -> AnyObject? {
    type(of: value) is AnyClass ? value as AnyObject : nil
}

/// Coordinates the creation of permanent and weak instances across all containers and threads.
///
/// It is process-wide because the waits it coordinates are: a resolution on one thread may wait for an instance
/// that a resolution on another thread is building, in any container. Keeping the waits in one place is what
/// lets a resolution see that waiting would close a cycle (thread A waits for B, which waits for A: two threads
/// entering a cycle of permanent services from opposite ends) and back off instead of deadlocking.
/// Its lock is held only for these short transitions, never while a factory or hook runs. Lock order: the
/// coordinator's lock, then a container's.
final class CreationCoordinator: @unchecked Sendable {
    static let shared = CreationCoordinator()

    enum Acquisition {
        /// Another resolution finished building it.
        case held(Any)
        /// The caller now builds it, and must `publish` or `abandon` it.
        case claimed
        /// The caller's own resolution is building it; `nil` while its factory has not returned yet.
        case ownBuild(Any?)
        /// Another resolution on the caller's thread, further down its stack, is building it: waiting would never end.
        case sameThread
        /// Waiting would close a cycle of threads waiting for each other: the caller must back off and retry.
        case deadlock
    }

    private let lock = Lock()
    /// Which resolution each waiting thread waits for.
    private var waits: [ThreadID: Resolution] = [:]
    /// How many instances have been published: the creation order of held instances.
    private var publications: UInt64 = 0

    func acquire(_ storage: InstanceStorage, for resolution: Resolution) -> Acquisition {
        var stale: StoredValue?
        defer { withExtendedLifetime(stale) {} }
        lock.lock()
        defer { lock.unlock() }
        while true {
            switch storage.snapshot() {
            case .holding(let instance):
                return .held(instance)
            case .empty:
                stale = storage.claim(for: resolution)
                return .claimed
            case .building(let owner, let instance):
                if owner === resolution { return .ownBuild(instance) }
                if owner.thread == resolution.thread { return .sameThread }
                if waitWouldDeadlock(resolution.thread, waitingFor: owner) { return .deadlock }
                waits[resolution.thread] = owner
                lock.wait()
                waits[resolution.thread] = nil
            }
        }
    }

    /// Makes the instances a resolution built visible to everyone, and wakes the threads waiting for them.
    func publish(_ storages: [InstanceStorage]) {
        let results = lock.withLock {
            defer { lock.broadcast() }
            return storages.map { storage in
                publications += 1
                return storage.publish(sequence: publications)
            }
        }
        ReleasedInstance.run(results.compactMap(\.released))
        withExtendedLifetime(results) {}
    }

    /// Returns storages a failed resolution had claimed to `empty`, and wakes the threads waiting for them.
    func abandon(_ storages: [InstanceStorage]) {
        let dropped = lock.withLock {
            defer { lock.broadcast() }
            return storages.compactMap { $0.abandon() }
        }
        withExtendedLifetime(dropped) {}
    }

    /// Follows the chain "owner's thread waits for …" and reports whether it leads back to `thread`.
    private func waitWouldDeadlock(_ thread: ThreadID, waitingFor owner: Resolution) -> Bool {
        var next: Resolution? = owner
        var steps = 0
        while let current = next, steps <= waits.count {
            if current.thread == thread { return true }
            next = waits[current.thread]
            steps += 1
        }
        return false
    }
}

/// An instance a container stopped holding, with the `onRelease` hooks to run on it.
struct ReleasedInstance {
    let value: StoredValue
    let hooks: [ReleaseHook]
    let sequence: UInt64

    /// Runs the hooks of `instances`, newest instance first. Call with no lock held: hooks are user code.
    static func run(_ instances: [ReleasedInstance]) {
        for released in instances.sorted(by: { $0.sequence > $1.sequence }) {
            let instance = released.value.asAny
            for hook in released.hooks { hook.run(instance) }
        }
    }
}
