public import Arbor
public import Hummingbird

/// How the server gets its services.
public enum Wiring: String, CaseIterable, Sendable {
    /// Registered once in an Arbor container; each request resolves from a child of it.
    case arbor
    /// Built by hand, with the same lifetimes.
    case manual
}

/// Makes the notes server, wired one way or the other.
public enum NotesApplication {
    /// The server wired with Arbor.
    ///
    /// - Parameters:
    ///   - root: The container with the notes services; a test passes a child of ``ArborWiring/makeContainer()``
    ///     that overrides some of them.
    ///   - configuration: Where to listen, and the rest of Hummingbird's settings.
    public static func arbor(
        root: Container = ArborWiring.makeContainer(),
        configuration: ApplicationConfiguration = ApplicationConfiguration()
    ) -> some ApplicationProtocol {
        Application(router: ArborWiring.makeRouter(root: root), configuration: configuration)
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

    /// The server, wired as `wiring` says.
    public static func make(
        wiring: Wiring,
        configuration: ApplicationConfiguration = ApplicationConfiguration()
    ) -> any ApplicationProtocol {
        switch wiring {
        case .arbor: arbor(configuration: configuration)
        case .manual: manual(configuration: configuration)
        }
    }
}
