extension Container {
    /// Drops the instance this container keeps for one service — its permanent or weak instance, or its own
    /// per-container instance — and runs the registration's `onRelease` hooks on it; the next resolve builds a new
    /// one. Every other instance stays, and so does the registration.
    ///
    /// ```swift
    /// container.resetInstance(of: UserSession.self)              // at logout: the next resolve starts a new session
    /// container.resetInstance(of: Database.self, name: "replica")
    /// ```
    ///
    /// It resets the registrations of `serviceType` under `name`, with any argument types, that this container
    /// holds, and — for a per-container service registered here or in an ancestor — this container's own instance of
    /// it. A type forwarded with ``Registration/implements(_:name:)`` resets the registration it forwards to.
    ///
    /// In a child, an ancestor's instance is never touched, also when the child resolves it from there: a test's child
    /// resetting a service leaves the app's instance alone. Call it on the container that holds the registration to
    /// reset what every descendant shares. An instance being built while you reset is kept once it is finished, as
    /// with ``resetObjectScope(_:)``.
    public func resetInstance<Service>(of serviceType: Service.Type, name: String? = nil) {
        let matches = { (key: ServiceKey) in key.serviceType == serviceType && key.name == name }
        var storages: [InstanceStorage] = []
        var perContainerIdentities: Set<Int> = []
        var container: Container? = self
        while let current = container {
            let isSelf = current === self
            current.registry.withLock { registry in
                registry.fileInstances(in: current)
                registry.entries.forEach { entry in
                    guard matches(entry.key) else { return }
                    let target = entry.forwardTarget.flatMap { registry.entries[$0] } ?? entry
                    if target.storageKind == .perContainer {
                        perContainerIdentities.insert(target.identity)
                    } else if isSelf, let storage = target.storage {
                        storages.append(storage)
                    }
                }
            }
            container = current.parent
        }
        if !perContainerIdentities.isEmpty {
            registry.withLock { registry in
                for identity in perContainerIdentities {
                    if let storage = registry.perContainer[identity] { storages.append(storage) }
                }
            }
        }
        ReleasedInstance.run(storages.compactMap { $0.release() })
    }

    /// Closes the container and its descendants: drops the instances they hold, runs the registrations'
    /// ``Registration/onRelease(_:)-21slw`` hooks on them, newest instance first, and makes every later `resolve` from
    /// them throw ``ResolutionError/Reason/containerClosed``. `async` release hooks start in a task of their own, in
    /// the same order, after the synchronous ones; ``closeAndWait()`` awaits them.
    ///
    /// ```swift
    /// let session = app.makeChild()
    /// session.register(Connection.self) { _ in Connection() }
    ///     .inObjectScope(.permanent)
    ///     .onRelease { connection in connection.disconnect() }
    /// // … the user logs out:
    /// session.close()   // disconnects; resolving from `session` now throws
    /// ```
    ///
    /// Closing is for a child with a lifetime of its own — a session, a request, a test. Ancestors are never
    /// touched. Closing twice does nothing more. A resolution that is running while the container closes finishes,
    /// and the permanent or per-container instance whose factory it is running is released at once instead of held;
    /// resolutions waiting for that instance throw ``ResolutionError/Reason/containerClosed``, and no factory of the
    /// container runs again. A resolve that begins after ``isClosed`` returned `true` throws. Registering on a closed
    /// container is allowed but pointless: resolving still throws.
    public func close() {
        var latch: ReleaseLatch?
        var releasing = ReleasingContainers()
        guard let released = closeSubtree(latch: &latch, releasing: &releasing) else { return }
        ReleasedInstance.run(released, then: latch)
        releasing.end()
    }

    /// Closes the container and its descendants like ``close()``, and awaits the release hooks: `async` ones too, each
    /// finished before the next begins, newest instance first.
    ///
    /// ```swift
    /// let request = app.makeChild()
    /// defer { Task { await request.closeAndWait() } }   // or, at the end of an async handler:
    /// await request.closeAndWait()                       // every onRelease hook has run
    /// ```
    ///
    /// Use it where the end of a container must wait for its cleanup — a request's transaction rolled back before the
    /// response is sent, a connection returned before shutting down. A synchronous caller has ``close()``, which
    /// starts `async` hooks without waiting for them.
    ///
    /// A container that is closed already — by ``close()``, by an ancestor's close (an app shutting down while a
    /// request awaits its child), or by another `closeAndWait()` — is not closed again: the call waits for the hooks
    /// that close let go from this container, the synchronous ones another thread may still be running and the `async`
    /// ones it started. (Not for an instance whose build was still running when its container closed: its hooks run
    /// when the build ends, on the thread that built it.) Called from one of those hooks, it returns at once: a hook
    /// cannot wait for itself. So a synchronous hook must not block on a task that awaits this call.
    public func closeAndWait() async {
        await closeWithoutSuspending()?.run()
    }

    /// ``closeAndWait()`` for a caller that would rather not suspend when it need not: closes the container and its
    /// descendants, and when none of the instances they let go has an `async` release hook, runs the hooks now and
    /// returns `nil`; otherwise returns the hooks, to `await` with ``PendingReleaseHooks/run()``.
    ///
    /// What it saves a server that ends every request's child: with `closeAndWait()` in Hummingbird's response body,
    /// a `swift_task_switch` a request (1,200 of a request's 249,600 instructions under callgrind on the notes
    /// server); in Vapor, which has no task at that point, the task `closeAndWait()` needed (on the notes server,
    /// 1.19× the requests per second and about 37 µs less CPU a request without it).
    package func closeWithoutSuspending() -> PendingReleaseHooks? {
        var latch: ReleaseLatch?
        var releasing = ReleasingContainers()
        // Closed already: by a close whose hooks may still run, on another thread or in its task.
        guard let released = closeSubtree(latch: &latch, releasing: &releasing) else {
            return earlierClose().map { PendingReleaseHooks(awaiting: $0) }
        }
        // A latch means an `async` hook to await.
        if let latch { return PendingReleaseHooks(released, then: latch, releasing: releasing) }
        ReleasedInstance.run(released)
        releasing.end()
        return nil
    }

    /// Whether ``close()`` was called on this container or an ancestor.
    public var isClosed: Bool {
        registry.withLock { $0.isClosed }
    }
}

/// Carries a value the user hands to the container across threads. The user vouches for it by registering it.
@usableFromInline
struct UncheckedSendable<Value>: @unchecked Sendable {
    @usableFromInline let value: Value
    @inlinable init(_ value: Value) { self.value = value }
}

/// Release hooks that ``Container/closeWithoutSuspending()`` left to await: some are `async`.
package struct PendingReleaseHooks: @unchecked Sendable {
    // Unchecked: the instances are the user's, handed from the closing code to the code that awaits their hooks, as
    // `closeAndWait()` does within itself.
    private let instances: [ReleasedInstance]
    /// Opened once they have run; or, with no instances, what an earlier close is running.
    private let latch: ReleaseLatch
    /// The containers whose release ends once the hooks have run.
    private let releasing: ReleasingContainers

    fileprivate init(_ instances: [ReleasedInstance], then latch: ReleaseLatch, releasing: ReleasingContainers) {
        self.instances = instances
        self.latch = latch
        self.releasing = releasing
    }

    fileprivate init(awaiting latch: ReleaseLatch) {
        self.instances = []
        self.latch = latch
        self.releasing = ReleasingContainers()
    }

    /// Runs every hook, each finished before the next begins, newest instance first; or waits for an earlier
    /// close's.
    package func run() async {
        guard !instances.isEmpty else { return await latch.wait() }
        await latch.runningHooks { await ReleasedInstance.runAwaiting(instances) }
        releasing.end()
        latch.open()
    }
}
