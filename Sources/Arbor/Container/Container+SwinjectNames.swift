// Swinject's names that Arbor has no member for, each unavailable with what to use instead: code moved over from
// Swinject gets the compiler's error with that advice, rather than "has no member". None of them can be called, and
// the documentation leaves them out (the migration article lists them).

extension Container {
    /// Swinject's thread-safe view of a container. Arbor's containers are safe to use from any thread as they are.
    @_documentation(visibility: internal)
    @available(
        *, unavailable,
        message: "Arbor's containers are safe to use from any thread and task as they are: use the container itself"
    )
    public func synchronize() -> Container { self }

    /// Swinject's question whether anything is registered for a type.
    @_documentation(visibility: internal)
    @available(*, unavailable, renamed: "isRegistered(_:name:)")
    public func hasAnyRegistration<Service>(of serviceType: Service.Type, name: String? = nil) -> Bool { false }

    /// Swinject's reset of one service's instance in a scope.
    @_documentation(visibility: internal)
    @available(
        *, unavailable,
        message: "use resetInstance(of:name:), which drops the instance the registration holds, whatever its scope"
    )
    public func resetObjectScope<Service>(_ scope: ObjectScope, serviceType: Service.Type, name: String? = nil) {}

    /// Swinject's forward of another type to a registration.
    @_documentation(visibility: internal)
    @available(
        *, unavailable, message: "call implements(_:name:) on the registration: registration.implements(Other.self)"
    )
    public func forward<Other, Service>(_ type: Other.Type, name: String? = nil, to registration: Registration<Service>)
    {}

    /// Swinject's initialiser that runs a closure of registrations.
    @_documentation(visibility: internal)
    @available(
        *, unavailable,
        message: "make the container, then register: let container = Container(); container.register(…) { … }"
    )
    public convenience init(
        parent: Container? = nil, defaultScope: ObjectScope = .graph, registeringClosure: (Container) -> Void
    ) {
        self.init(parent: parent, defaultScope: defaultScope)
    }

    /// Swinject's log of resolution problems.
    @_documentation(visibility: internal)
    @available(
        *, unavailable,
        message: """
            Arbor throws a ResolutionError that says what went wrong; to watch resolutions, add a \
            ResolutionObserver (container.addObserver)
            """
    )
    public static var loggingFunction: ((String) -> Void)? {
        get { nil }
        set {}  // swift-format-ignore: NoEmptySetter
    }
}
