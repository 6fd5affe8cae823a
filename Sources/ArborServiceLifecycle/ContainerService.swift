#if ServiceLifecycle
public import Arbor
public import ServiceLifecycle

/// A container as a `Service` of a `ServiceGroup`: it runs until the group shuts down gracefully (or is
/// cancelled), then closes the container and awaits its release hooks, newest instance first, `async` ones too.
///
/// Put it first in the group's services: a group shuts its services down in the reverse of their order, so the
/// servers and workers that resolve from the container stop before it closes.
///
/// ```swift
/// let container = Container()
/// container.register(DatabasePool.self) { _ in DatabasePool() }
///     .inObjectScope(.permanent)
///     .onRelease { pool in await pool.close() }   // awaited at shutdown
///
/// let group = ServiceGroup(
///     services: [ContainerService(container), app],   // the container closes after the app has stopped
///     gracefulShutdownSignals: [.sigterm, .sigint],
///     logger: logger)
/// try await group.run()
/// ```
///
/// With Hummingbird, pass it to the application: `Application(router: router, services: [ContainerService(container)])`
/// (Hummingbird's server stops first, then its services, last first).
///
/// The hooks run in a task of their own, so that a cancelled group does not cancel them: a connection pool that is
/// released is closed cleanly however the group ends. `run()` returns once every hook has finished; it throws
/// nothing.
public struct ContainerService: Service, CustomStringConvertible {
    /// The container that closes when the service stops.
    public let container: Container

    /// Makes the service.
    ///
    /// ```swift
    /// let service = ContainerService(container)
    /// ```
    ///
    /// - Parameter container: The container to close at shutdown: usually the app's root, which closes its
    ///   children with it.
    public init(_ container: Container) {
        self.container = container
    }

    /// Waits for the group's graceful shutdown, or for cancellation, then closes the container and awaits its
    /// release hooks.
    public func run() async {
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled: close all the same.
        }
        let container = container
        await Task { await container.closeAndWait() }.value
    }

    /// `ContainerService(…)`, for the group's logs.
    public var description: String { "ContainerService" }
}
#else
/// Needs the package trait `ServiceLifecycle`: depend on Arbor with
/// `.package(url: "…", from: "…", traits: ["ServiceLifecycle"])`.
@available(*, unavailable, message: "Enable Arbor's package trait \"ServiceLifecycle\": traits: [\"ServiceLifecycle\"]")
public struct ContainerService {
    /// Unavailable: enable the trait.
    public init(_ container: Any) {}
}
#endif
