extension Container {
    /// Registers a service built by `initializer`, each of whose parameters is resolved by its type.
    ///
    /// ```swift
    /// container.autoregister(Car.self, initializer: Car.init)
    /// // is the same registration as
    /// container.register(Car.self) { r in Car(engine: try r.resolve(), wheels: try r.resolve()) }
    /// ```
    ///
    /// Any number of parameters, of any types; the initializer may throw (its error reaches `resolve` as
    /// ``ResolutionError/Reason/factoryFailed(_:)``). Each parameter is resolved as `try r.resolve()` would be —
    /// unnamed, without runtime arguments — so a parameter of type `Engine?` gets `nil` when no `Engine` is
    /// registered, and `Lazy<Engine>` a `Lazy`. A parameter nothing is registered for throws
    /// ``ResolutionError/Reason/notRegistered`` with the path, like any factory's. For a named dependency, write the
    /// factory. Scopes, names and hooks are those of ``register(_:name:factory:)-2x2iw``:
    ///
    /// ```swift
    /// container.autoregister(Engine.self, name: "v8", initializer: V8.init).inObjectScope(.permanent)
    /// ```
    ///
    /// Write the initializer out (`Car.init(engine:wheels:)`) when the type has more than one.
    @_alwaysEmitIntoClient
    @discardableResult
    public func autoregister<Service, each Parameter>(
        _ serviceType: Service.Type,
        name: String? = nil,
        initializer: @escaping @Sendable (repeat each Parameter) throws -> Service
    ) -> Registration<Service> {
        register(serviceType, name: name) { r in try initializer(repeat try r.resolve((each Parameter).self)) }
    }

    /// Registers a service whose initializer is `async`, each of its parameters resolved by its type with
    /// `try await`.
    ///
    /// ```swift
    /// container.autoregister(Database.self, initializer: Database.init(config:))   // init(config:) async throws
    /// let database = try await container.resolve(Database.self)
    /// ```
    ///
    /// The registration is an `async` factory's: resolve it with `try await` (see
    /// ``register(_:name:factory:)-9ap7z``).
    @_alwaysEmitIntoClient
    @discardableResult
    public func autoregister<Service, each Parameter>(
        _ serviceType: Service.Type,
        name: String? = nil,
        initializer: @escaping @Sendable (repeat each Parameter) async throws -> Service
    ) -> Registration<Service> {
        register(serviceType, name: name) { r async throws in
            try await initializer(repeat try await r.resolve((each Parameter).self))
        }
    }

    /// Registers a service whose initializer is isolated to the main actor — a `@MainActor` view model — each of its
    /// parameters resolved by its type, on the main actor.
    ///
    /// ```swift
    /// @MainActor final class FeedViewModel {
    ///     init(client: APIClient) { … }
    /// }
    /// container.autoregister(FeedViewModel.self, initializer: FeedViewModel.init)
    /// ```
    ///
    /// The registration is a main-actor factory's, as `register` makes for a `{ @MainActor r in … }` closure: built
    /// where it is resolved on the main actor, or with `try await` from anywhere.
    @_alwaysEmitIntoClient
    @discardableResult
    public func autoregister<Service: Sendable, each Parameter>(
        _ serviceType: Service.Type,
        name: String? = nil,
        initializer: @escaping @MainActor @Sendable (repeat each Parameter) throws -> Service
    ) -> Registration<Service> {
        register(serviceType, name: name) { @MainActor r in
            try initializer(repeat try r.resolve((each Parameter).self))
        }
    }

    /// Registers a service with runtime arguments, built by `initializer`: the parameters of the argument types
    /// named get the arguments of the resolve, the others are resolved by their type.
    ///
    /// ```swift
    /// struct Greeter {
    ///     init(formatter: Formatter, name: String, times: Int) { … }
    /// }
    /// container.autoregister(Greeter.self, arguments: String.self, Int.self, initializer: Greeter.init)
    /// let greeter = try container.resolve(Greeter.self, arguments: "Ann", 3)   // the Formatter is resolved
    /// ```
    ///
    /// Each argument goes to the first parameter, from the left, of exactly its type that has no argument yet; an
    /// `Int` argument does not fill an `Int?` parameter. The arguments are the registration's key, as with
    /// ``register(_:name:factory:)-8wz6i``: resolve with arguments of these types, in this order. An argument type
    /// the initializer has no parameter for is a mistake the compiler cannot see: every resolve of the registration
    /// throws ``ResolutionError/Reason/factoryFailed(_:)`` saying which.
    @_alwaysEmitIntoClient
    @discardableResult
    public func autoregister<Service, FirstArgument, each Argument, each Parameter>(
        _ serviceType: Service.Type,
        name: String? = nil,
        arguments firstArgument: FirstArgument.Type,
        _ argument: repeat (each Argument).Type,
        initializer: @escaping @Sendable (repeat each Parameter) throws -> Service
    ) -> Registration<Service> {
        let plan = ArgumentPlan(
            service: serviceType, arguments: types(FirstArgument.self, repeat (each Argument).self),
            parameters: types(repeat (each Parameter).self))
        @Sendable func factory(
            _ r: any Resolver, _ first: FirstArgument, _ rest: repeat each Argument
        ) throws -> Service {
            var supplied = try plan.start(first, repeat each rest)
            return try initializer(repeat try supplied.next((each Parameter).self, from: r))
        }
        return register(serviceType, name: name, factory: factory)
    }

    /// Registers a service with runtime arguments whose initializer is `async`: the parameters of the argument types
    /// named get the arguments of the resolve, the others are resolved by their type with `try await`.
    ///
    /// ```swift
    /// container.autoregister(Session.self, arguments: User.self, initializer: Session.init(user:api:))
    /// let session = try await container.resolve(Session.self, arguments: user)
    /// ```
    @_alwaysEmitIntoClient
    @discardableResult
    public func autoregister<Service, FirstArgument, each Argument, each Parameter>(
        _ serviceType: Service.Type,
        name: String? = nil,
        arguments firstArgument: FirstArgument.Type,
        _ argument: repeat (each Argument).Type,
        initializer: @escaping @Sendable (repeat each Parameter) async throws -> Service
    ) -> Registration<Service> {
        let plan = ArgumentPlan(
            service: serviceType, arguments: types(FirstArgument.self, repeat (each Argument).self),
            parameters: types(repeat (each Parameter).self))
        @Sendable func factory(
            _ r: any Resolver, _ first: FirstArgument, _ rest: repeat each Argument
        ) async throws -> Service {
            var supplied = try plan.start(first, repeat each rest)
            return try await initializer(repeat try await supplied.next((each Parameter).self, from: r))
        }
        return register(serviceType, name: name, factory: factory)
    }
}

/// The types of a pack, in order.
@usableFromInline
func types<each Element>(_ type: repeat (each Element).Type) -> [Any.Type] {
    var types: [Any.Type] = []
    for type in repeat each type { types.append(type) }
    return types
}
