public import ArborPrimitives

extension Container {
    /// Registers how to build a service.
    ///
    /// The factory receives the resolver of the resolution being built — resolve dependencies through it — and
    /// then the runtime arguments the service needs, if any. It may throw; `resolve` then throws
    /// ``ResolutionError/Reason/factoryFailed(_:)`` with the path.
    ///
    /// ```swift
    /// container.register(Engine.self) { _ in V8() }.inObjectScope(.permanent)
    /// container.register(Car.self) { r in Car(engine: try r.resolve()) }
    /// container.register(Car.self, name: "sports") { r in SportsCar(engine: try r.resolve(Engine.self)) }
    /// container.register(Greeter.self) { (_, name: String, times: Int) in Greeter(name, times) }
    /// ```
    ///
    /// A registration is identified by its ``ServiceKey``: the service type, the name and the argument types.
    /// Registering the same key again replaces the earlier registration in this container, and drops the
    /// instance it held. The scope is the container's ``defaultScope`` until you chain
    /// ``Registration/inObjectScope(_:)``.
    ///
    /// Factories run on whichever thread resolves, so they are `@Sendable`.
    @inlinable
    @discardableResult
    public func register<Service>(
        _ serviceType: Service.Type,
        name: String? = nil,
        factory: consuming @escaping @Sendable (any Resolver) throws -> Service
    ) -> Registration<Service> {
        // Inlinable, so the entry's class is named where `Service` is known (see `register(_:name:entry:factory:)`).
        register(serviceType, name: name, entry: NullaryEntry<Service>.self, factory: factory)
    }

    /// Registers `factory` in the container's default scope. `entry` is `NullaryEntry<Service>.self`, named by the
    /// inlined caller: there the metadata of that generic class is a constant, where this generic body would look it
    /// up in the runtime on every registration (measured: 985 of the 1,840 instructions of registering an instance).
    @usableFromInline
    func register<Service>(
        _ serviceType: Service.Type,
        name: String?,
        entry: NullaryEntry<Service>.Type,
        factory: consuming @escaping @Sendable (any Resolver) throws -> Service
    ) -> Registration<Service> {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        let configuration = EntryConfiguration(
            scope: defaultScope, storage: InstanceStorage.make(for: defaultScope, key: key, in: self))
        return register(key, entry: entry, configuration: configuration, factory: factory)
    }

    /// Registers `factory` in `scope` from the start, without the change of scope `inObjectScope` makes.
    func register<Service>(
        _ serviceType: Service.Type,
        name: String?,
        scope: ObjectScope,
        factory: consuming @escaping @Sendable (any Resolver) throws -> Service
    ) -> Registration<Service> {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        let configuration = EntryConfiguration(
            scope: scope, storage: InstanceStorage.make(for: scope, key: key, in: self))
        return register(key, entry: NullaryEntry<Service>.self, configuration: configuration, factory: factory)
    }

    /// Registers `instance`, a `Service` in its box, permanent, already held: its first resolve finds it like any
    /// later one. `factory` gives it back if the container lets it go (`resetObjectScope(.permanent)`) and it is
    /// resolved again. `entry` as for `register(_:name:entry:factory:)`.
    @usableFromInline
    func register<Service>(
        _ serviceType: Service.Type,
        name: String?,
        holding instance: StoredValue,
        entry: NullaryEntry<Service>.Type,
        factory: consuming @escaping @Sendable (any Resolver) throws -> Service
    ) -> Registration<Service> {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
        let token = RegistrationToken()
        // A child's instance, usually a request's value, is kept as it was given until something needs its entry
        // (``PendingInstance``).
        if !isRoot, name == nil, keepPending(PendingInstance(box: instance, token: token, entryType: entry)) {
            return Registration(container: self, key: key, token: token)
        }
        let configuration = EntryConfiguration(
            scope: .permanent, storage: InstanceStorage(holding: instance, owner: self, key: key, publishes: isRoot))
        add(entry.init(key: key, token: token, configuration: configuration, factory: factory))
        return Registration(container: self, key: key, token: token)
    }

    private func register<Service>(
        _ key: ServiceKey,
        entry: NullaryEntry<Service>.Type,
        configuration: consuming EntryConfiguration,
        factory: consuming @escaping @Sendable (any Resolver) throws -> Service
    ) -> Registration<Service> {
        let token = RegistrationToken()
        // Made through the metatype the caller passed: no look-up of the class's metadata.
        add(entry.init(key: key, token: token, configuration: configuration, factory: factory))
        return Registration(container: self, key: key, token: token)
    }

    /// Registers how to build a service that takes runtime arguments, of any number and types.
    ///
    /// ```swift
    /// container.register(Greeter.self) { (r, name: String, times: Int) in Greeter(name, times) }
    /// let greeter = try container.resolve(Greeter.self, arguments: "Ann", 3)
    /// ```
    ///
    /// The argument types are part of the key: resolve with arguments of exactly these types.
    @inlinable
    @discardableResult
    public func register<Service, FirstArgument, each Argument>(
        _ serviceType: Service.Type,
        name: String? = nil,
        factory: @escaping @Sendable (any Resolver, FirstArgument, repeat each Argument) throws -> Service
    ) -> Registration<Service> {
        // Inlined, so the factory is wrapped where its argument types are known (see `TupleFactory`).
        register(
            serviceType, name: name, argumentsType: (FirstArgument, repeat each Argument).self,
            factory: TupleFactory(factory))
    }

    /// Registers a factory that takes its runtime arguments, of the types `argumentsType` stands for, as a tuple.
    @usableFromInline
    func register<Service>(
        _ serviceType: Service.Type,
        name: String?,
        argumentsType: Any.Type,
        factory: TupleFactory<Service>
    ) -> Registration<Service> {
        if argumentsType == Void.self {
            // A factory whose one argument is `Void` takes none: `resolve(_:)` and `resolve(_:arguments: ())`
            // both find it.
            return register(serviceType, name: name) { resolver in
                try ArgumentsTuple.with(do: { try factory.make(resolver, $0) })
            }
        }
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: argumentsType)
        let token = RegistrationToken()
        add(ArgumentsEntry(key: key, token: token, configuration: initialConfiguration(for: key), factory: factory))
        return Registration(container: self, key: key, token: token)
    }

    /// A new registration's configuration: the container's default scope, and a storage if it needs one.
    func initialConfiguration(for key: ServiceKey) -> EntryConfiguration {
        EntryConfiguration(
            scope: defaultScope, storage: InstanceStorage.make(for: defaultScope, key: key, in: self))
    }

    /// Registers an existing instance, shared like a ``ObjectScope/permanent`` service.
    ///
    /// ```swift
    /// container.register(Clock.self, instance: SystemClock())
    /// ```
    ///
    /// The container hands this same instance to every thread that resolves it.
    @inlinable
    @discardableResult
    public func register<Service>(
        _ serviceType: Service.Type,
        name: String? = nil,
        instance: Service
    ) -> Registration<Service> {
        // The instance is boxed once, here, and held from the start, permanent: its first resolve skips building
        // (5,000 instructions a request that registers it) and no change of scope follows (480 more). The factory,
        // for after a reset, reads that same box back. Inlinable, so that where `Service` is known the closure
        // captures the box alone: a closure whose one capture is a reference to an object has that object for its
        // context. (Measured: a copy of the instance in a context of its own was an allocation, a free and a second
        // copy, 450 of the 1,550 instructions of registering a request's user on the Hummingbird notes server and
        // 800 of tearing it down; in a generic body, looking up the box type's metadata was 920 instructions.)
        let box = UncheckedSendable(StoredValue.make(instance))
        return register(serviceType, name: name, holding: box.value, entry: NullaryEntry<Service>.self) { _ in
            box.value.load(as: Service.self)
        }
    }

    /// Whether `resolve(serviceType, name: name, …)` can find a registration with some argument types, here or in
    /// an ancestor.
    ///
    /// ```swift
    /// if !container.isRegistered(Analytics.self) { container.register(Analytics.self) { _ in NoAnalytics() } }
    /// ```
    public func isRegistered<Service>(_ serviceType: Service.Type, name: String? = nil) -> Bool {
        var container: Container? = self
        while let current = container {
            if current.hasRegistration(serviceType, name: name) { return true }
            container = current.parent
        }
        return false
    }

    private func hasRegistration(_ serviceType: Any.Type, name: String?) -> Bool {
        entries.contains { $0.key.serviceType == serviceType && $0.key.name == name }
    }

    /// Removes the registrations of `serviceType` under `name`, with any argument types, from this container
    /// (never from an ancestor), and drops the instances they held.
    ///
    /// ```swift
    /// child.unregister(HTTPClient.self)   // the child resolves the parent's HTTPClient again
    /// ```
    public func unregister<Service>(_ serviceType: Service.Type, name: String? = nil) {
        removeEntries { $0.serviceType == serviceType && $0.name == name }
    }

    /// Removes every registration of this container, and drops the instances they held. Ancestors keep theirs.
    public func removeAll() {
        removeEntries { _ in true }
    }

    /// Drops the instances this container keeps for a scope; the registrations stay, and the next resolve builds
    /// new instances.
    ///
    /// ```swift
    /// container.resetObjectScope(.permanent)   // or .container
    /// container.resetObjectScope(.weak)
    /// container.resetObjectScope(.session)     // a scope of your own
    /// container.resetObjectScope(.perContainer) // this container's own per-container instances
    /// ```
    ///
    /// `.graph` and `.transient` keep nothing, so resetting them does nothing. Ancestors are never touched, and
    /// neither are descendants: each child keeps its own per-container instances. An
    /// instance being built while you reset is kept once it is finished.
    public func resetObjectScope(_ scope: ObjectScope) {
        if scope == .perContainer {
            let storages = registry.withLock { $0.perContainer.values }
            ReleasedInstance.run(storages.compactMap { $0.release() })
            return
        }
        let storages = entries.filter { $0.scope == scope }.compactMap(\.storage)
        ReleasedInstance.run(storages.compactMap { $0.release() })
    }

    // MARK: async and main-actor factories

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
            asyncFactory: { resolver in try await runOnMainActor(for: resolver) { try factory(resolver) } })
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
                key: key, token: token, configuration: initialConfiguration(for: key), factoryKind: kind,
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
    ///
    /// The factory runs in the resolving task, so its arguments may be of any type. A factory isolated to a global
    /// actor of your own (`{ @DatabaseActor (r, query: Query) async in … }`) receives them on that actor, and Swift
    /// does not check that they may go there: give such a factory `Sendable` arguments.
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
    /// a main-actor factory without arguments: on the main actor, synchronously or with `try await`. The arguments
    /// are `Sendable`: an `async` resolve from another task hands them to the main actor.
    ///
    /// ```swift
    /// container.register(ProfileViewModel.self) { @MainActor (r, user: UserID) in
    ///     ProfileViewModel(user: user, client: try r.resolve())
    /// }
    /// let model = try await container.resolve(ProfileViewModel.self, arguments: user)
    /// ```
    @inlinable
    @discardableResult
    public func register<Service: Sendable, FirstArgument: Sendable, each Argument: Sendable>(
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
                key: key, token: token, configuration: initialConfiguration(for: key), factoryKind: kind,
                synchronousFactory: synchronousFactory, asyncFactory: asyncFactory))
        return Registration(container: self, key: key, token: token)
    }
}
