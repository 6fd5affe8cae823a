public import Arbor
import ArborServiceLifecycle
public import Hummingbird
public import NotesCore

/// Makes the notes server on Hummingbird, wired one way or the other.
public enum NotesApplication {
    /// The server wired with Arbor. `root` runs as a service of the application (`ContainerService`): when the
    /// server shuts down gracefully, `root` closes after it and awaits its release hooks.
    ///
    /// - Parameters:
    ///   - root: The container with the notes services; a test passes a child of `NotesAssembly.makeContainer()`
    ///     that overrides some of them.
    ///   - configuration: Where to listen, and the rest of Hummingbird's settings.
    public static func arbor(
        root: Container = NotesAssembly.makeContainer(),
        configuration: ApplicationConfiguration = ApplicationConfiguration()
    ) -> some ApplicationProtocol {
        Application(
            router: ArborWiring.makeRouter(root: root), configuration: configuration,
            services: [ContainerService(root)])
    }

    /// The server wired by hand.
    ///
    /// - Parameters:
    ///   - services: The app-wide services.
    ///   - configuration: Where to listen, and the rest of Hummingbird's settings.
    public static func manual(
        services: ManualServices = ManualServices(),
        configuration: ApplicationConfiguration = ApplicationConfiguration()
    ) -> some ApplicationProtocol {
        Application(router: ManualWiring.makeRouter(services: services), configuration: configuration)
    }

    /// The server, wired as `wiring` says; wired by hand, it uses `services`.
    public static func make(
        wiring: Wiring,
        services: ManualServices = ManualServices(),
        configuration: ApplicationConfiguration = ApplicationConfiguration()
    ) -> any ApplicationProtocol {
        switch wiring {
        case .arbor: arbor(configuration: configuration)
        case .manual: manual(services: services, configuration: configuration)
        }
    }
}
