/// A property resolved from the ambient ``Container/current`` when its owner is created.
///
/// ```swift
/// final class CarViewModel {
///     @Inject var engine: Engine
///     @Inject(name: "sports") var sportsCar: Car
///     @Inject(arguments: "Ann", 3) var greeter: Greeter
/// }
///
/// Container.current.register(Engine.self) { _ in V8() }
/// let model = CarViewModel()   // resolves engine, sportsCar and greeter now
/// ```
///
/// Each property is its own top-level resolve, so graph-scoped services are not shared between two `@Inject`
/// properties; prefer constructor injection through a factory when objects must share a graph.
///
/// A property wrapper cannot throw: if the service cannot be resolved, the program stops with a message that names
/// the type that declares the property, the file and line of the declaration, and the ``ResolutionError``'s
/// description. Use ``LazyInject`` and its projected `Lazy` to handle a failure yourself.
///
/// The property may be a `var` that its owner — or a test — sets later, like any other stored property:
///
/// ```swift
/// let model = CarViewModel()
/// model.engine = TestEngine()   // the wrapper stores the new value
/// ```
@propertyWrapper
public struct Inject<Service> {
    /// The resolved service, or the value assigned since.
    public var wrappedValue: Service

    /// Resolves the service registered under `name`, with no runtime arguments, from ``Container/current``.
    ///
    /// ```swift
    /// @Inject var engine: Engine
    /// @Inject(name: "sports") var car: Car
    /// ```
    ///
    /// Leave `owner`, `file` and `line` alone: they record the declaration for the failure message.
    public init(
        _ serviceType: Service.Type = Service.self,
        name: String? = nil,
        owner: StaticString = #function,
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        let site = InjectionSite(
            wrapper: "@Inject", key: ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self),
            owner: owner, file: file, line: line)
        let container = Container.current
        wrappedValue = site.resolve { try container.resolve(serviceType, name: name) }
    }

    /// Resolves the service registered under `name` whose factory takes runtime arguments of these types, from
    /// ``Container/current``.
    ///
    /// ```swift
    /// @Inject(arguments: "Ann", 3) var greeter: Greeter
    /// ```
    public init<FirstArgument, each Argument>(
        _ serviceType: Service.Type = Service.self,
        name: String? = nil,
        arguments firstArgument: FirstArgument,
        _ argument: repeat each Argument,
        owner: StaticString = #function,
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        let site = InjectionSite(
            wrapper: "@Inject",
            key: ServiceKey(
                serviceType: serviceType, name: name, argumentsType: (FirstArgument, repeat each Argument).self),
            owner: owner, file: file, line: line)
        let container = Container.current
        wrappedValue = site.resolve {
            try container.resolve(serviceType, name: name, arguments: firstArgument, repeat each argument)
        }
    }
}

extension Inject: Sendable where Service: Sendable {}
