/// Applies ``Assembly`` values to a container, in order, and gives access to what they registered.
///
/// ```swift
/// let app = Assembler([NetworkAssembly(), FeedAssembly()])
/// let feed = try app.resolver.resolve(FeedModel.self)
///
/// // A feature's assemblies in a child: it sees the app's registrations and can override them.
/// let settings = Assembler([SettingsAssembly()], parent: app)
/// ```
///
/// Each batch (the assemblies passed to the initialiser, ``apply(assemblies:)``, or one ``apply(assembly:)``) is
/// applied in order: every assembly's ``Assembly/assemble(container:)``, then every assembly's
/// ``Assembly/loaded(resolver:)``, once each, in the same order. A later assembly's registration of the same key
/// replaces an earlier one's, so an assembly applied last can override.
///
/// `Assembler` is `Sendable`: it holds nothing but its container. Batches applied from several threads at once
/// each run in order, but may interleave with each other; apply assemblies at set-up time.
public final class Assembler: Sendable {
    /// The container the assemblies register in.
    public let container: Container

    /// The container, to resolve from once the assemblies are applied.
    ///
    /// ```swift
    /// let model = try assembler.resolver.resolve(FeedModel.self)
    /// ```
    public var resolver: any Resolver { container }

    /// Makes a container — a child of `parent`'s container, if you give one — and applies `assemblies` to it.
    ///
    /// ```swift
    /// let app = Assembler([NetworkAssembly(), FeedAssembly()])
    /// let feature = Assembler([FeatureAssembly()], parent: app)   // feature.container.parent === app.container
    /// ```
    ///
    /// A child container inherits its parent's default scope.
    public convenience init(_ assemblies: [any Assembly] = [], parent: Assembler? = nil) {
        self.init(assemblies, container: parent?.container.makeChild() ?? Container())
    }

    /// Applies `assemblies` to a container you already have, such as the ambient ``Container/current`` that
    /// `@Inject` resolves from.
    ///
    /// ```swift
    /// let app = Assembler([NetworkAssembly()], container: .current)
    /// ```
    public init(_ assemblies: [any Assembly], container: Container) {
        self.container = container
        apply(assemblies: assemblies)
    }

    /// Applies one assembly: registers its services, then calls its ``Assembly/loaded(resolver:)``.
    ///
    /// ```swift
    /// assembler.apply(assembly: DebugMenuAssembly())
    /// ```
    public func apply(assembly: any Assembly) {
        apply(assemblies: [assembly])
    }

    /// Applies assemblies in order: each one's ``Assembly/assemble(container:)``, then, once all have registered,
    /// each one's ``Assembly/loaded(resolver:)``.
    ///
    /// ```swift
    /// assembler.apply(assemblies: [ProfileAssembly(), SettingsAssembly()])
    /// ```
    public func apply(assemblies: [any Assembly]) {
        for assembly in assemblies {
            assembly.assemble(container: container)
        }
        for assembly in assemblies {
            assembly.loaded(resolver: container)
        }
    }
}
