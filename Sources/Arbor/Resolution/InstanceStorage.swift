/// Where a permanent or weak registration keeps its instance, and how that instance gets built exactly once.
///
/// A storage goes `empty → building → holding`. While one resolution builds the instance, others that need it
/// wait; the instance becomes visible to them only when the building resolution has finished, hooks and all.
/// If that resolution fails, the storage goes back to `empty` and one of the waiters builds it instead.
///
/// Reading a held instance takes only the storage's own lock. Every other transition happens under the
/// ``CreationCoordinator``'s lock, which never stays held while a factory or hook runs.
final class InstanceStorage: @unchecked Sendable {
    enum State {
        case empty
        case building(owner: Resolution)
        case holding
    }

    let retention: ObjectScope.Retention
    private let lock = Lock()
    private var state = State.empty
    /// The instance of a strong storage once held; also the instance being built, in either retention.
    private var strongInstance: Any?
    private weak var weakInstance: AnyObject?

    private init(retention: ObjectScope.Retention) {
        self.retention = retention
    }

    static func make(for scope: ObjectScope) -> InstanceStorage? {
        switch scope.storage {
        case .none, .graph: nil
        case .strong: InstanceStorage(retention: .strong)
        case .weak: InstanceStorage(retention: .weak)
        }
    }

    /// The held instance, if there is one. The hot path of a permanent or weak resolve.
    func heldInstance() -> Any? {
        lock.withLock {
            guard case .holding = state else { return nil }
            return retention == .strong ? strongInstance : weakInstance
        }
    }

    /// Drops the held instance (`resetObjectScope`). An instance still being built is left to finish.
    func reset() {
        // The dropped instance is released after the lock, since its deinit may use the container.
        let dropped: Any? = lock.withLock {
            guard case .holding = state else { return nil }
            state = .empty
            defer { strongInstance = nil }
            weakInstance = nil
            return strongInstance
        }
        withExtendedLifetime(dropped) {}
    }

    // MARK: Transitions; called by the coordinator with its lock held

    enum Snapshot {
        case empty
        case building(owner: Resolution, instance: Any?)
        case holding(Any)
    }

    func snapshot() -> Snapshot {
        lock.withLock {
            switch state {
            case .empty:
                return .empty
            case .building(let owner):
                return .building(owner: owner, instance: strongInstance)
            case .holding:
                let instance: Any? = retention == .strong ? strongInstance : weakInstance
                return instance.map { .holding($0) } ?? .empty
            }
        }
    }

    func claim(for owner: Resolution) {
        lock.withLock {
            state = .building(owner: owner)
            strongInstance = nil
            weakInstance = nil
        }
    }

    /// Records the instance the owner's factory returned; the owner's resolution shares it from now on.
    func built(_ instance: Any) {
        lock.withLock { strongInstance = instance }
    }

    func publish() {
        lock.withLock {
            guard case .building = state else { return }
            state = .holding
            if retention == .weak {
                weakInstance = strongInstance.flatMap(asObject)
                strongInstance = nil
            }
        }
    }

    /// Returns the storage to `empty`; hands back the instance it dropped, for the caller to release after its locks.
    func abandon() -> Any? {
        lock.withLock {
            guard case .building = state else { return nil }
            state = .empty
            defer { strongInstance = nil }
            return strongInstance
        }
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
/// Its lock is held only for these short transitions, never while a factory or hook runs.
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

    func acquire(_ storage: InstanceStorage, for resolution: Resolution) -> Acquisition {
        lock.lock()
        defer { lock.unlock() }
        while true {
            switch storage.snapshot() {
            case .holding(let instance):
                return .held(instance)
            case .empty:
                storage.claim(for: resolution)
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
        lock.withLock {
            for storage in storages { storage.publish() }
            lock.broadcast()
        }
    }

    /// Returns storages a failed resolution had claimed to `empty`, and wakes the threads waiting for them.
    func abandon(_ storages: [InstanceStorage]) {
        let dropped = lock.withLock {
            defer { lock.broadcast() }
            return storages.map { $0.abandon() }
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
