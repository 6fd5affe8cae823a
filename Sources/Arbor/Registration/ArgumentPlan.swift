/// Which runtime argument each parameter of an autoregistered initializer gets, worked out once when it is
/// registered (see ``Container/autoregister(_:name:arguments:_:initializer:)-1ek2e``): each argument goes to the first
/// parameter, from the left, of exactly its type that has none yet; the other parameters are resolved.
@usableFromInline
struct ArgumentPlan: Sendable {
    /// For each parameter, the index of the argument it gets, or `nil` to resolve it.
    let sources: [Int?]
    /// What is wrong with the registration, thrown by every resolve of it: an argument no parameter takes.
    let mistake: AutoregistrationMistake?

    @usableFromInline
    init(service: Any.Type, arguments: [Any.Type], parameters: [Any.Type]) {
        var taken = Array(repeating: false, count: arguments.count)
        sources = parameters.map { parameter in
            guard let index = arguments.indices.first(where: { !taken[$0] && arguments[$0] == parameter }) else {
                return nil
            }
            taken[index] = true
            return index
        }
        let unused = arguments.indices.filter { !taken[$0] }.map { arguments[$0] }
        mistake =
            unused.isEmpty
            ? nil : AutoregistrationMistake(service: service, unusedArguments: unused, parameters: parameters)
    }

    /// The arguments of one resolve, ready to hand to the parameters in order.
    @usableFromInline
    func start<each Argument>(_ argument: repeat each Argument) throws -> SuppliedArguments {
        if let mistake { throw mistake }
        var values: [Any] = []
        for value in repeat each argument { values.append(value) }
        return SuppliedArguments(sources: sources, values: values)
    }
}

/// The runtime arguments of one resolve of an autoregistered service, handed out parameter by parameter.
@usableFromInline
struct SuppliedArguments {
    let sources: [Int?]
    let values: [Any]
    var parameter = 0

    init(sources: [Int?], values: [Any]) {
        self.sources = sources
        self.values = values
    }

    /// The next parameter's value: its argument, or else resolved from `resolver`.
    @usableFromInline
    mutating func next<Parameter>(_: Parameter.Type, from resolver: any Resolver) throws -> Parameter {
        defer { parameter += 1 }
        // The plan gave this parameter an argument of exactly its type.
        if let source = sources[parameter] { return values[source] as! Parameter }
        return try resolver.resolve(Parameter.self, name: nil)
    }

    /// The next parameter's value, in an `async` factory: its argument, or else resolved with `try await`.
    @usableFromInline
    mutating func next<Parameter>(_: Parameter.Type, from resolver: any Resolver) async throws -> Parameter {
        defer { parameter += 1 }
        if let source = sources[parameter] { return values[source] as! Parameter }
        return try await resolver.resolve(Parameter.self, name: nil)
    }
}

/// An autoregistration with a runtime argument its initializer has no parameter for.
struct AutoregistrationMistake: Error, CustomStringConvertible {
    let service: Any.Type
    let unusedArguments: [Any.Type]
    let parameters: [Any.Type]

    var description: String {
        let unused = unusedArguments.map { String(describing: $0) }.joined(separator: ", ")
        let taken = parameters.map { String(describing: $0) }.joined(separator: ", ")
        return """
            \(service) was autoregistered with the runtime argument type \(unused), but its initializer takes no \
            parameter of exactly that type that another argument does not fill (it takes \(taken.isEmpty ? "none" : taken)). \
            Name only argument types the initializer takes, or register it with a factory.
            """
    }
}
