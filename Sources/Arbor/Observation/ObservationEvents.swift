/// Which top-level resolve an event belongs to: equal for every event of one resolve, different between resolves.
public struct ResolveID: Hashable, Sendable, CustomStringConvertible {
    let resolution: Int
    let serial: Int

    /// The resolve's numbers, for logs: `resolve 3.17`.
    public var description: String { "resolve \(resolution).\(serial)" }
}

/// A top-level `resolve` began.
public struct ResolveStarted: Sendable {
    /// What is being resolved.
    public let key: ServiceKey
    /// The container the resolve started in.
    public let container: Container
    /// Which resolve this is: the same in every event it causes.
    public let resolve: ResolveID
    /// Whether it is an `async` resolve (`try await`).
    public let isAsync: Bool
    /// When it began.
    public let time: ContinuousClock.Instant
}

/// A top-level `resolve` ended.
public struct ResolveFinished: Sendable {
    /// What was resolved: the key of its ``ResolveStarted``.
    public let key: ServiceKey
    /// The container the resolve started in.
    public let container: Container
    /// Which resolve this was: the same as its ``ResolveStarted/resolve``.
    public let resolve: ResolveID
    /// Whether it was an `async` resolve (`try await`).
    public let isAsync: Bool
    /// When it began: the same as its ``ResolveStarted/time``.
    public let started: ContinuousClock.Instant
    /// How long it took, hooks and all.
    public let duration: Duration
    /// What it threw, or `nil` if it returned an instance.
    public let error: (any Error)?
}

/// A factory returned a new instance.
public struct InstanceBuilt: Sendable {
    /// The registration's key: what was resolved, or the target of a forward.
    public let key: ServiceKey
    /// The registration's lifetime.
    public let scope: ObjectScope
    /// The container that keeps the instance — the one holding a permanent or weak registration, or the one a
    /// per-container instance belongs to — or `nil` for a transient or graph-scoped one, which no container keeps.
    public let keeper: Container?
    /// How deep in the resolution: 0 for the service a top-level resolve asked for.
    public let depth: Int
    /// The services being built when this one was, outermost first, ending with its own key.
    public let path: [ServiceKey]
    /// The top-level resolve the instance was built in.
    public let resolve: ResolveID
    /// Whether that resolve is `async` (`try await`).
    public let isAsync: Bool
    /// When the factory was called.
    public let started: ContinuousClock.Instant
    /// How long the factory ran, the resolves it made included (and the time observers took handling their events
    /// meanwhile). A factory's own time is this less the `factoryDuration`s of the instances built one level deeper
    /// in the same resolve.
    public let factoryDuration: Duration
    /// The instance. An observer that keeps it keeps it alive.
    public var instance: Any { boxedInstance.value }
    let boxedInstance: UncheckedSendable<Any>
    /// The storage that keeps a permanent, weak or per-container instance, for ``LeakTracker``.
    let storage: InstanceStorage?
}

/// The `initCompleted` hooks of an instance ran (or one of them threw).
public struct HooksRan: Sendable {
    /// The key of the registration whose instance it is.
    public let key: ServiceKey
    /// The registration's lifetime.
    public let scope: ObjectScope
    /// The depth of the instance; a resolve in one of its hooks goes one deeper.
    public let depth: Int
    /// The top-level resolve the hooks ran in: the one that built the instance.
    public let resolve: ResolveID
    /// Whether that resolve is `async` (`try await`).
    public let isAsync: Bool
    /// When the first of its hooks began.
    public let started: ContinuousClock.Instant
    /// How long the hooks took together, what they resolved included.
    public let duration: Duration
}

/// A resolve took an instance that already existed.
public struct InstanceReused: Sendable {
    /// Who kept it.
    public enum Source: Sendable {
        /// The resolution's graph: a graph-scoped instance built earlier in the same resolve.
        case graph
        /// A container: a permanent, weak or per-container instance, built earlier or by another resolve.
        case container
    }

    /// The registration's key: what was resolved, or the target of a forward.
    public let key: ServiceKey
    /// The registration's lifetime.
    public let scope: ObjectScope
    /// How deep in the resolution: 0 for the service a top-level resolve asked for.
    public let depth: Int
    /// The top-level resolve that took it.
    public let resolve: ResolveID
    /// Whether that resolve is `async` (`try await`).
    public let isAsync: Bool
    /// Who kept it: the resolution's graph or a container.
    public let source: Source
    /// When the resolve took it.
    public let time: ContinuousClock.Instant
}

/// A container stopped keeping an instance: it was closed or deinitialised, its scope reset, or the registration
/// replaced or removed. Weak instances are never released by a container, so they have no such event.
public struct InstanceReleased: Sendable {
    /// The key of the registration whose instance it was.
    public let key: ServiceKey
    /// The instance. Its synchronous `onRelease` hooks have run; `async` ones may still be running.
    public var instance: Any { boxedInstance.value }
    let boxedInstance: UncheckedSendable<Any>
    /// When the container let it go.
    public let time: ContinuousClock.Instant
}
