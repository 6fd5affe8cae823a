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
        let configuration = EntryConfiguration(
            scope: defaultScope, storage: InstanceStorage.make(for: defaultScope, lock: registry))
        return register(serviceType, name: name, entry: entry, configuration: configuration, factory: factory)
    }

    /// Registers `factory` in `scope` from the start, without the change of scope `inObjectScope` makes.
    func register<Service>(
        _ serviceType: Service.Type,
        name: String?,
        scope: ObjectScope,
        factory: consuming @escaping @Sendable (any Resolver) throws -> Service
    ) -> Registration<Service> {
        let configuration = EntryConfiguration(
            scope: scope, storage: InstanceStorage.make(for: scope, lock: registry))
        return register(
            serviceType, name: name, entry: NullaryEntry<Service>.self, configuration: configuration, factory: factory)
    }

    /// Registers `instance`, permanent, already held: its first resolve finds it like any later one. `factory`
    /// gives it back if the container lets it go (`resetObjectScope(.permanent)`) and it is resolved again. `entry`
    /// as for `register(_:name:entry:factory:)`.
    @usableFromInline
    func register<Service>(
        _ serviceType: Service.Type,
        name: String?,
        holding instance: Service,
        entry: NullaryEntry<Service>.Type,
        factory: consuming @escaping @Sendable (any Resolver) throws -> Service
    ) -> Registration<Service> {
        let configuration = EntryConfiguration(
            scope: .permanent, storage: InstanceStorage(holding: instance, lock: registry))
        return register(serviceType, name: name, entry: entry, configuration: configuration, factory: factory)
    }

    private func register<Service>(
        _ serviceType: Service.Type,
        name: String?,
        entry: NullaryEntry<Service>.Type,
        configuration: consuming EntryConfiguration,
        factory: consuming @escaping @Sendable (any Resolver) throws -> Service
    ) -> Registration<Service> {
        let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
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
        add(ArgumentsEntry(key: key, token: token, configuration: initialConfiguration, factory: factory))
        return Registration(container: self, key: key, token: token)
    }

    /// A new registration's configuration: the container's default scope, and a storage if it needs one.
    var initialConfiguration: EntryConfiguration {
        EntryConfiguration(scope: defaultScope, storage: InstanceStorage.make(for: defaultScope, lock: registry))
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
        // Inlinable, so the box's type is known where it is made. (Measured, a child with two instances: the
        // runtime look-up of `UncheckedSendable<Service>`'s metadata in a generic body was 920 instructions an
        // instance, and registering it permanent from the start saves the change of scope, 480 more. Held from
        // the start, its first resolve skips building: 5,000 instructions a request that registers it.)
        let box = UncheckedSendable(instance)
        return register(serviceType, name: name, holding: instance, entry: NullaryEntry<Service>.self) { _ in
            box.value
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
}

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
        ReleasedInstance.run(closeSubtree())
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
    public func closeAndWait() async {
        await ReleasedInstance.runAwaiting(closeSubtree())
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
