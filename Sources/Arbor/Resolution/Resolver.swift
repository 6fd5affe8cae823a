internal import ArborPrimitives

/// Something that resolves services: a ``Container``, or the resolver a factory receives.
///
/// Inside a factory, resolve dependencies through the resolver you are given, so they join the resolution
/// being built: they share its graph-scoped instances, count towards its depth, and are checked for cycles.
///
/// ```swift
/// container.register(Car.self) { r in
///     Car(engine: try r.resolve(), wheels: try r.resolve(Wheels.self, name: "alloy"))
/// }
/// let car = try container.resolve(Car.self)
/// let greeter = try container.resolve(Greeter.self, arguments: "Ann", 3)
/// ```
///
/// Every `resolve` throws a ``ResolutionError`` when it cannot deliver; none of them returns `nil` for a missing
/// service. A resolver captured by a factory and used after its resolution finished still works: it starts a new
/// resolution in the container that began the original one.
///
/// Resolvers are classes (`AnyObject`): a factory receives its resolver as a reference, which costs nothing to
/// pass. A test double that stands in for a resolver is a class too:
///
/// ```swift
/// final class StubResolver: Resolver {
///     let clock = FixedClock()
///
///     func resolve<Service>(_ serviceType: Service.Type, name: String?) throws -> Service {
///         guard let clock = clock as? Service else { throw StubError.notStubbed(serviceType) }
///         return clock
///     }
///
///     func resolve<Service, each Argument>(
///         _ serviceType: Service.Type, name: String?, arguments: repeat each Argument
///     ) throws -> Service {
///         try resolve(serviceType, name: name)
///     }
/// }
/// ```
public protocol Resolver: AnyObject, Sendable {
    /// Resolves the service registered for `serviceType` and `name` with no runtime arguments.
    func resolve<Service>(_ serviceType: Service.Type, name: String?) throws -> Service

    /// Resolves the service registered for `serviceType` and `name` whose factory takes arguments of these types.
    ///
    /// ```swift
    /// let formal = try resolver.resolve(Greeter.self, name: "formal", arguments: "Ann", 3)
    /// ```
    func resolve<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        arguments: repeat each Argument
    ) throws -> Service

    /// Resolves the service registered for `serviceType` and `name`, in `async` code: also a service whose factory is
    /// `async` or runs on the main actor.
    ///
    /// ```swift
    /// let database = try await container.resolve(Database.self, name: "primary")
    /// ```
    ///
    /// A type of your own that conforms to `Resolver` gets an implementation that calls the synchronous `resolve`.
    func resolve<Service>(_ serviceType: Service.Type, name: String?) async throws -> Service

    /// Resolves the service registered for `serviceType` and `name` whose factory takes arguments of these types, in
    /// `async` code.
    func resolve<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        arguments: repeat each Argument
    ) async throws -> Service
}

extension Resolver {
    /// Calls the synchronous `resolve`: what a resolver of your own does in `async` code, unless it implements it.
    public func resolve<Service>(_ serviceType: Service.Type, name: String?) async throws -> Service {
        try resolveSynchronously(serviceType, name: name)
    }

    /// Calls the synchronous `resolve`: what a resolver of your own does in `async` code, unless it implements it.
    public func resolve<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        arguments: repeat each Argument
    ) async throws -> Service {
        try resolveSynchronously(serviceType, name: name, arguments: repeat each arguments)
    }

    /// The synchronous requirement, named apart: in `async` code, `resolve` means the `async` one.
    private func resolveSynchronously<Service>(_ serviceType: Service.Type, name: String?) throws -> Service {
        try resolve(serviceType, name: name)
    }

    private func resolveSynchronously<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        arguments: repeat each Argument
    ) throws -> Service {
        try resolve(serviceType, name: name, arguments: repeat each arguments)
    }

    /// Resolves the unnamed service of a type, which can be inferred, in `async` code.
    ///
    /// ```swift
    /// let database = try await container.resolve(Database.self)
    /// let client: APIClient = try await r.resolve()   // in an async factory
    /// ```
    @inlinable
    @inline(__always)
    public func resolve<Service>(_ serviceType: Service.Type = Service.self) async throws -> Service {
        try await resolveInline(serviceType, name: nil)
    }

    /// Resolves the service registered under `name`, of a type that can be inferred, in `async` code.
    @inlinable
    @inline(__always)
    public func resolve<Service>(name: String) async throws -> Service {
        try await resolveInline(Service.self, name: name)
    }

    /// The `async` requirement, with the plain path's factory awaited here, in the frame of the factory that calls
    /// this: for the resolver an `async` factory receives, a dependency built by an `async` factory costs that
    /// factory's frame and no other (measured: `async_graph_10`, 26,400 instructions through the requirement, 20,300
    /// here). Anything else, and any other resolver, takes the requirement. See AsyncPlainPath.swift.
    @inlinable
    @inline(__always)
    func resolveInline<Service>(_ serviceType: Service.Type, name: String?) async throws -> Service {
        switch try beginAsyncPlainResolve(self, serviceType, name: name) {
        case .inGraph(let position):
            return asyncPlainGraphInstance(self, at: position, as: serviceType)
        case .build(let build):
            return try await awaitAsyncPlainBuild(self, build, as: serviceType)
        case .general:
            return try await resolve(serviceType, name: name)
        }
    }

    /// Resolves the unnamed service whose factory takes runtime arguments of these types, in `async` code.
    ///
    /// ```swift
    /// let session = try await container.resolve(Session.self, arguments: user)
    /// ```
    public func resolve<Service, FirstArgument, each Argument>(
        _ serviceType: Service.Type = Service.self,
        arguments firstArgument: FirstArgument,
        _ argument: repeat each Argument
    ) async throws -> Service {
        try await AsyncArgumentsCall(serviceType, name: nil, firstArgument, repeat each argument).resolve(from: self)
    }

    /// Resolves the service registered under `name` whose factory takes runtime arguments of these types, in `async`
    /// code.
    public func resolve<Service, FirstArgument, each Argument>(
        _ serviceType: Service.Type = Service.self,
        name: String,
        arguments firstArgument: FirstArgument,
        _ argument: repeat each Argument
    ) async throws -> Service {
        try await AsyncArgumentsCall(serviceType, name: name, firstArgument, repeat each argument).resolve(from: self)
    }
}

extension Resolver {
    /// Resolves the unnamed service of a type, which can be inferred.
    ///
    /// ```swift
    /// let engine = try container.resolve(Engine.self)
    /// let car: Car = try container.resolve()
    /// ```
    public func resolve<Service>(_ serviceType: Service.Type = Service.self) throws -> Service {
        try resolve(serviceType, name: nil)
    }

    /// Resolves the service registered under `name`, of a type that can be inferred.
    ///
    /// ```swift
    /// let sports: Car = try container.resolve(name: "sports")
    /// ```
    public func resolve<Service>(name: String) throws -> Service {
        try resolve(Service.self, name: name)
    }

    /// Resolves the unnamed service whose factory takes runtime arguments of these types.
    ///
    /// ```swift
    /// container.register(Greeter.self) { (_, name: String, times: Int) in Greeter(name, times) }
    /// let greeter = try container.resolve(Greeter.self, arguments: "Ann", 3)
    /// ```
    ///
    /// The argument types must match the factory's exactly: `3` is an `Int`, so a factory that takes a `Double`
    /// needs `3.0`. A mismatch throws ``ResolutionError/Reason/notRegistered`` listing the shapes that exist.
    @inlinable
    public func resolve<Service, FirstArgument, each Argument>(
        _ serviceType: Service.Type = Service.self,
        arguments firstArgument: FirstArgument,
        _ argument: repeat each Argument
    ) throws -> Service {
        try resolveWithArguments(serviceType, name: nil, firstArgument, repeat each argument)
    }

    /// Resolves the service registered under `name` whose factory takes runtime arguments of these types.
    ///
    /// ```swift
    /// let formal = try container.resolve(Greeter.self, name: "formal", arguments: "Ann", 3)
    /// ```
    @inlinable
    public func resolve<Service, FirstArgument, each Argument>(
        _ serviceType: Service.Type = Service.self,
        name: String,
        arguments firstArgument: FirstArgument,
        _ argument: repeat each Argument
    ) throws -> Service {
        try resolveWithArguments(serviceType, name: name, firstArgument, repeat each argument)
    }

    /// Resolves with runtime arguments. Inlined into the caller, where the argument types are known: it hands the
    /// arguments on as one tuple in memory, and a plain registration that the thread's cache knows is resolved
    /// without any code that is generic over the arguments (see ``TupleFactory``). Anything else takes the
    /// protocol requirement.
    @inlinable
    func resolveWithArguments<Service, FirstArgument, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        _ firstArgument: FirstArgument,
        _ argument: repeat each Argument
    ) throws -> Service {
        var arguments = (firstArgument, repeat each argument)
        return try ResultSlot.with(Service.self) { result in
            let resolved = try ArgumentsTuple.with(tuple: &arguments) { arguments in
                try resolveQuickly(
                    self, serviceType, name: name, argumentsType: (FirstArgument, repeat each Argument).self,
                    arguments: arguments, into: result)
            }
            if resolved { return result.take() }
            return try resolve(serviceType, name: name, arguments: firstArgument, repeat each argument)
        }
    }
}

/// Resolves from `resolver` a plain registration with runtime arguments that its thread's look-up cache knows, and
/// writes the instance to `result`; `false`, having done nothing, for anything else. `arguments` is a tuple of the
/// types `argumentsType` stands for.
@usableFromInline
func resolveQuickly<Service>(
    _ resolver: any Resolver,
    _ serviceType: Service.Type,
    name: String?,
    argumentsType: Any.Type,
    arguments: ArgumentsTuple,
    into result: ResultSlot<Service>
) throws -> Bool {
    // One argument of type `Void` is no argument: the general path resolves the key without arguments.
    guard argumentsType != Void.self else { return false }
    let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: argumentsType)
    // Both classes are final: comparing the type is the whole check, and the downcast borrows the reference
    // (measured: a conditional cast retained and released it).
    if type(of: resolver) == Container.self {
        return try Resolution.resolveQuickly(
            key, in: knownDowncast(resolver, to: Container.self), arguments: arguments, into: result)
    }
    if type(of: resolver) == Resolution.self {
        return try knownDowncast(resolver, to: Resolution.self).resolveQuickly(key, arguments: arguments, into: result)
    }
    return false
}

/// An `async` resolve with runtime arguments given as a first argument and a pack of the rest: the arguments boxed
/// as one tuple, and the synchronous call, both made here, in synchronous code. (In `async` code, handing a value and
/// a pack on together as one pack crashed this compiler: it freed the pack's memory out of order.)
@usableFromInline
struct AsyncArgumentsCall<Service>: @unchecked Sendable {
    let key: ServiceKey
    let box: AsyncArgumentsBox
    /// The same resolve, synchronous, for what has no registration (a `Lazy` or `Provider` with arguments) and for
    /// resolvers of your own.
    let synchronous: (any Resolver) throws -> Service

    @usableFromInline
    init<FirstArgument, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        _ firstArgument: FirstArgument,
        _ argument: repeat each Argument
    ) {
        key = ServiceKey(
            serviceType: serviceType, name: name, argumentsType: (FirstArgument, repeat each Argument).self)
        box = TupleBox((firstArgument, repeat each argument))
        synchronous = { resolver in
            try resolver.resolve(serviceType, name: name, arguments: firstArgument, repeat each argument)
        }
    }

    func resolve(from resolver: any Resolver) async throws -> Service {
        if let container = resolver as? Container {
            return try await Resolution.resolveAsync(key, box: box, in: container, synchronous: synchronous)
        }
        if let resolution = resolver as? Resolution {
            return try await resolution.resolveJoiningAsync(key, box: box, synchronous: synchronous)
        }
        return try synchronous(resolver)
    }
}
