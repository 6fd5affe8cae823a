extension Container {
    /// Registers how to build a service whose factory is `async`: a database connection, a client that fetches its
    /// configuration, anything that needs `await` to start.
    ///
    /// ```swift
    /// container.register(Database.self) { r async throws in
    ///     try await Database.connect(config: try r.resolve())
    /// }
    /// .inObjectScope(.permanent)
    ///
    /// let database = try await container.resolve(Database.self)
    /// ```
    ///
    /// Resolve it with `try await` — from a container, or from the resolver another `async` factory receives — with
    /// every lifetime, name and runtime argument a synchronous factory has. A synchronous `resolve` cannot build it:
    /// it throws ``ResolutionError/Reason/asyncRequired``, and never waits. So a synchronous factory cannot depend on
    /// it; an `async` one can depend on both kinds.
    ///
    /// A factory isolated to a global actor other than the main actor is an `async` one too:
    /// `{ @DatabaseActor r async in Store(…) }`.
    @inlinable
    @discardableResult
    public func register<Service>(
        _ serviceType: Service.Type,
        name: String? = nil,
        factory: @escaping @Sendable (any Resolver) async throws -> Service
    ) -> Registration<Service> {
        register(
            serviceType, name: name, entry: AsyncNullaryEntry<Service>.self, kind: .async,
            synchronousFactory: { _ in throw AsyncOnly(cause: .asyncFactory) }, asyncFactory: factory)
    }

    /// Registers how to build a service on the main actor: a view model, a controller, anything `@MainActor`.
    ///
    /// ```swift
    /// container.register(FeedViewModel.self) { @MainActor r in
    ///     FeedViewModel(client: try r.resolve())
    /// }
    ///
    /// @MainActor func showFeed() throws {
    ///     let model = try container.resolve(FeedViewModel.self)      // built here, on the main actor
    /// }
    /// func prefetch() async throws {
    ///     let model = try await container.resolve(FeedViewModel.self) // goes to the main actor to build it
    /// }
    /// ```
    ///
    /// Resolved synchronously on the main actor, the factory runs there; resolved with `try await` from anywhere,
    /// Arbor goes to the main actor to run it. Resolved synchronously anywhere else, it throws
    /// ``ResolutionError/Reason/asyncRequired`` saying so: never a crash, never a data race. The service is
    /// `Sendable` (a `@MainActor` class is), because it leaves the main actor when the resolve returns.
    @inlinable
    @discardableResult
    public func register<Service: Sendable>(
        _ serviceType: Service.Type,
        name: String? = nil,
        factory: @escaping @MainActor @Sendable (any Resolver) throws -> Service
    ) -> Registration<Service> {
        register(
            serviceType, name: name, entry: AsyncNullaryEntry<Service>.self, kind: .mainActor,
            synchronousFactory: { resolver in
                guard isOnMainActor() else { throw AsyncOnly(cause: .mainActorFactory) }
                return try MainActor.assumeIsolated { try factory(resolver) }
            },
            asyncFactory: { resolver in try await MainActor.run { try factory(resolver) } })
    }

    /// Registers an entry whose factory is not (only) synchronous. `entry` is `AsyncNullaryEntry<Service>.self`, named
    /// by the inlined caller (see `register(_:name:entry:factory:)`).
    @usableFromInline
    func register<Service>(
        _ serviceType: Service.Type,
        name: String?,
        entry: AsyncNullaryEntry<Service>.Type,
        kind: FactoryKind,
        synchronousFactory: @escaping @Sendable (any Resolver) throws -> Service,
        asyncFactory: @escaping @Sendable (any Resolver) async throws -> Service
    ) -> Registration<Service> {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        let token = RegistrationToken()
        add(
            AsyncNullaryEntry<Service>(
                key: key, token: token, configuration: initialConfiguration, factoryKind: kind,
                synchronousFactory: synchronousFactory, asyncFactory: asyncFactory))
        return Registration(container: self, key: key, token: token)
    }

    /// Registers how to build a service whose factory is `async` and takes runtime arguments.
    ///
    /// ```swift
    /// container.register(Session.self) { (r, user: UserID) async throws in
    ///     try await Session.open(for: user, api: try r.resolve())
    /// }
    /// let session = try await container.resolve(Session.self, arguments: user)
    /// ```
    @inlinable
    @discardableResult
    public func register<Service, FirstArgument, each Argument>(
        _ serviceType: Service.Type,
        name: String? = nil,
        factory: @escaping @Sendable (any Resolver, FirstArgument, repeat each Argument) async throws -> Service
    ) -> Registration<Service> {
        register(
            serviceType, name: name, argumentsType: (FirstArgument, repeat each Argument).self, kind: .async,
            synchronousFactory: TupleFactory(failing: AsyncOnly(cause: .asyncFactory)),
            asyncFactory: AsyncTupleFactory(factory))
    }

    /// Registers how to build, on the main actor, a service whose factory takes runtime arguments. It is resolved like
    /// a main-actor factory without arguments: on the main actor, synchronously or with `try await`.
    ///
    /// ```swift
    /// container.register(ProfileViewModel.self) { @MainActor (r, user: UserID) in
    ///     ProfileViewModel(user: user, client: try r.resolve())
    /// }
    /// let model = try await container.resolve(ProfileViewModel.self, arguments: user)
    /// ```
    @inlinable
    @discardableResult
    public func register<Service: Sendable, FirstArgument, each Argument>(
        _ serviceType: Service.Type,
        name: String? = nil,
        factory: @escaping @MainActor @Sendable (any Resolver, FirstArgument, repeat each Argument) throws -> Service
    ) -> Registration<Service> {
        register(
            serviceType, name: name, argumentsType: (FirstArgument, repeat each Argument).self, kind: .mainActor,
            synchronousFactory: TupleFactory(mainActor: factory),
            asyncFactory: AsyncTupleFactory(mainActor: factory))
    }

    /// Registers an entry with runtime arguments whose factory is not (only) synchronous.
    @usableFromInline
    func register<Service>(
        _ serviceType: Service.Type,
        name: String?,
        argumentsType: Any.Type,
        kind: FactoryKind,
        synchronousFactory: TupleFactory<Service>,
        asyncFactory: AsyncTupleFactory<Service>
    ) -> Registration<Service> {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: argumentsType)
        let token = RegistrationToken()
        add(
            AsyncArgumentsEntry(
                key: key, token: token, configuration: initialConfiguration, factoryKind: kind,
                synchronousFactory: synchronousFactory, asyncFactory: asyncFactory))
        return Registration(container: self, key: key, token: token)
    }
}
