import Arbor

/// Helpers for testing code that uses Arbor.
///
/// ```swift
/// import ArborTesting
///
/// let test = ArborTesting.overriding(appContainer) { child in
///     child.register(HTTPClient.self) { _ in StubClient() }
/// }
/// ```
public enum ArborTesting {
    /// Makes a child of `container` for one test, and lets `overrides` register the test's replacements in it.
    ///
    /// The child sees every registration of `container` and hides those that `overrides` registers again,
    /// so the test's stubs reach every transient and graph-scoped service it resolves from the child, while
    /// `container` itself and its permanent instances stay untouched.
    public static func overriding(
        _ container: Container,
        _ overrides: (Container) throws -> Void = { _ in }
    ) rethrows -> Container {
        let child = container.makeChild()
        try overrides(child)
        return child
    }
}
