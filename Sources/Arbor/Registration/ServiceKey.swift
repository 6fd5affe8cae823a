/// What identifies a registration: the service type, an optional name, and the types of the runtime arguments.
///
/// Two registrations with the same key cannot live in one container: the second replaces the first.
/// Registrations that differ only in their argument types are separate services:
///
/// ```swift
/// container.register(Greeter.self) { _ in Greeter("Hello") }                  // Greeter
/// container.register(Greeter.self) { (_, word: String) in Greeter(word) }     // Greeter(arguments: String)
/// container.register(Greeter.self, name: "formal") { _ in Greeter("Good day") } // Greeter(name: "formal")
/// ```
///
/// Keys appear in every ``ResolutionError``: its ``ResolutionError/key`` and ``ResolutionError/path``.
public struct ServiceKey: Hashable, Sendable, CustomStringConvertible {
    /// The type a registration provides and a `resolve` call asks for.
    public let serviceType: Any.Type
    /// The registration's name, or `nil` for the unnamed one.
    public let name: String?
    /// The types of the runtime arguments, as one type: `Void` for none, the type itself for one,
    /// and a tuple such as `(String, Int)` for several.
    public let argumentsType: Any.Type

    /// Makes the key of a service with runtime arguments of the types `Argument...`.
    ///
    /// ```swift
    /// let key = ServiceKey(Greeter.self, name: "formal", arguments: String.self, Int.self)
    /// print(key) // Greeter(name: "formal", arguments: String, Int)
    /// ```
    public init<Service, each Argument>(
        _ serviceType: Service.Type,
        name: String? = nil,
        arguments: repeat (each Argument).Type
    ) {
        self.init(serviceType: serviceType, name: name, argumentsType: (repeat each Argument).self)
    }

    init(serviceType: Any.Type, name: String?, argumentsType: Any.Type) {
        self.serviceType = serviceType
        self.name = name
        self.argumentsType = argumentsType
    }

    /// Whether the service takes runtime arguments.
    public var hasArguments: Bool { argumentsType != Void.self }

    /// Whether two keys name the same service type, name and argument types.
    public static func == (lhs: ServiceKey, rhs: ServiceKey) -> Bool {
        guard lhs.serviceType == rhs.serviceType, lhs.argumentsType == rhs.argumentsType else { return false }
        switch (lhs.name, rhs.name) {
        case (nil, nil): return true
        case (let left?, let right?): return left == right
        default: return false
        }
    }

    /// Hashes the service type, the argument types and the name.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(serviceType))
        hasher.combine(ObjectIdentifier(argumentsType))
        hasher.combine(name)
    }

    /// Reads like `Greeter`, `Greeter(name: "formal")` or `Greeter(name: "formal", arguments: String, Int)`.
    public var description: String {
        var details: [String] = []
        if let name { details.append("name: \(String(reflecting: name))") }
        if hasArguments { details.append("arguments: \(argumentList)") }
        let type =
            (serviceType as? any DescribedInErrors.Type)?.descriptionInErrors ?? String(describing: serviceType)
        return details.isEmpty ? type : "\(type)(\(details.joined(separator: ", ")))"
    }

    /// The argument types as a comma-separated list, without the parentheses of the tuple that holds them.
    var argumentList: String {
        let text = String(describing: argumentsType)
        guard text.hasPrefix("("), text.hasSuffix(")") else { return text }
        return String(text.dropFirst().dropLast())
    }
}

/// A service type Arbor resolves for one of its own calls, which a key describes in the words of that call rather
/// than by the type's name.
protocol DescribedInErrors {
    static var descriptionInErrors: String { get }
}
