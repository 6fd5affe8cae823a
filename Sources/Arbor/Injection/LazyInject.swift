/// A property resolved on first access, from the ``Container/current`` that was in effect when its owner was
/// created.
///
/// ```swift
/// final class ReportScreen {
///     @LazyInject var exporter: PDFExporter   // captured now, resolved on first use
///
///     func export() -> Data { exporter.render() }
/// }
/// ```
///
/// The first access resolves the service as a new top-level resolve in the captured container; later accesses
/// return the same instance. The getter does not mutate, so `@LazyInject` works in classes, in structs held in a
/// `let`, and from several threads at once: all of them get the same instance (see ``Lazy`` for how a race on the
/// very first access is settled). In a `Sendable` class, whose stored properties must be `let`, the wrapper (a
/// `var`, as every property wrapper is) does not compile; keep a ``Lazy`` in a `let` instead, resolved in the
/// factory: `let exporter: Lazy<PDFExporter>` with `exporter: try r.resolve()`, read as `exporter.instance`.
///
/// A property wrapper cannot throw: if the service cannot be resolved, the first access stops the program with a
/// message that names the type that declares the property, the file and line of the declaration, and the
/// ``ResolutionError``'s description. To handle the error instead, read the projected value, a ``Lazy``:
///
/// ```swift
/// if let exporter = try? $exporter.instance { … }
/// ```
///
/// A `var` can be set, like any stored property: the value assigned replaces the service, resolved or not, and
/// nothing is resolved for it any more.
///
/// ```swift
/// let screen = ReportScreen()
/// screen.exporter = TestExporter()   // the captured container is never asked
/// ```
@propertyWrapper
public struct LazyInject<Service>: Sendable {
    private var lazy: Lazy<Service>
    /// Where it was declared, for the failure message.
    let site: InjectionSite

    /// Captures ``Container/current`` to resolve the service registered under `name` on first access.
    ///
    /// ```swift
    /// @LazyInject var exporter: PDFExporter
    /// @LazyInject(name: "compact") var layout: Layout
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
        let container = Container.current
        lazy = Lazy { try container.resolve(serviceType, name: name) }
        site = InjectionSite(
            wrapper: "@LazyInject", key: ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self),
            owner: owner, file: file, line: line)
    }

    /// Captures ``Container/current`` and the arguments, to resolve the service registered under `name` whose
    /// factory takes runtime arguments of these types on first access.
    ///
    /// ```swift
    /// @LazyInject(arguments: "Ann", 3) var greeter: Greeter
    /// ```
    ///
    /// The arguments are kept until the first access and passed to the factory on the thread that makes it.
    public init<FirstArgument, each Argument>(
        _ serviceType: Service.Type = Service.self,
        name: String? = nil,
        arguments firstArgument: FirstArgument,
        _ argument: repeat each Argument,
        owner: StaticString = #function,
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        let container = Container.current
        lazy = Lazy { try container.resolve(serviceType, name: name, arguments: firstArgument, repeat each argument) }
        site = InjectionSite(
            wrapper: "@LazyInject",
            key: ServiceKey(
                serviceType: serviceType, name: name, argumentsType: (FirstArgument, repeat each Argument).self),
            owner: owner, file: file, line: line)
    }

    /// The service, resolved on the first access.
    public var wrappedValue: Service {
        get { site.resolve { try lazy.instance } }
        set { lazy = Lazy(holding: newValue) }
    }

    /// The ``Lazy`` behind the property: read `try $property.instance` to handle a failure instead of stopping.
    public var projectedValue: Lazy<Service> { lazy }
}
