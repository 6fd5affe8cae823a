// A container as a `Resolver`: each `resolve` is a new top-level resolution that starts here.
extension Container {
    /// Resolves the service registered for `serviceType` and `name`, as a new top-level resolution.
    ///
    /// ```swift
    /// let car = try container.resolve(Car.self, name: "sports")
    /// ```
    public func resolve<Service>(_ serviceType: Service.Type, name: String?) throws -> Service {
        try Resolution.resolve(serviceType, name: name, in: self)
    }

    /// Resolves the service registered for `serviceType` and `name` whose factory takes runtime arguments of these
    /// types, as a new top-level resolution.
    ///
    /// ```swift
    /// let greeter = try container.resolve(Greeter.self, name: "formal", arguments: "Ann", 3)
    /// ```
    public func resolve<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        arguments: repeat each Argument
    ) throws -> Service {
        try Resolution.resolve(serviceType, name: name, in: self, arguments: repeat each arguments)
    }

    /// Resolves the service registered for `serviceType` and `name`, as a new top-level `async` resolution: also a
    /// service whose factory is `async` or runs on the main actor.
    ///
    /// ```swift
    /// let database = try await container.resolve(Database.self)
    /// ```
    ///
    /// It has the semantics of the synchronous `resolve` — the same graph sharing, hooks, errors and paths — and
    /// while another task builds a permanent instance it needs, it waits suspended, never blocking its thread.
    public func resolve<Service>(_ serviceType: Service.Type, name: String?) async throws -> Service {
        try await Resolution.resolveAsync(serviceType, name: name, in: self)
    }

    /// Resolves the service whose factory takes runtime arguments of these types, as a new top-level `async`
    /// resolution.
    ///
    /// ```swift
    /// let session = try await container.resolve(Session.self, name: "guest", arguments: user)
    /// ```
    public func resolve<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String?,
        arguments: repeat each Argument
    ) async throws -> Service {
        try await Resolution.resolveAsync(serviceType, name: name, in: self, arguments: repeat each arguments)
    }
}
