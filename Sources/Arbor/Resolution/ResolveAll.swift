extension Resolver {
    /// Resolves every registration of `serviceType` without runtime arguments that this resolver sees: the unnamed
    /// one and every named one.
    ///
    /// Register plugins, middleware or validators under names, then ask for all of them:
    ///
    /// ```swift
    /// container.register(Plugin.self, name: "spelling") { _ in SpellingPlugin() }
    /// container.register(Plugin.self, name: "grammar") { _ in GrammarPlugin() }
    /// container.register(Editor.self) { r in Editor(plugins: try r.resolveAll(Plugin.self)) }
    ///
    /// let plugins = try container.resolveAll(Plugin.self)   // [SpellingPlugin, GrammarPlugin]
    /// ```
    ///
    /// - Order: each name in the order it was first registered, the root's names first, then each child's new
    ///   ones. Registering a name again keeps its place.
    /// - The tree: a name registered in a child hides the same name in its ancestors, in that place.
    ///   Registrations with runtime arguments are left out.
    /// - Lifetimes: each element is resolved by its own registration's scope. From a factory's resolver the
    ///   elements join that resolution: they share its graph, count towards its depth and are checked for cycles.
    /// - Nothing registered: an empty array. An element that fails to resolve throws its ``ResolutionError``, with
    ///   its path. A registration another thread removes while the collection is being resolved is left out.
    ///
    /// `Lazy` and `Provider` wrap one registration; for a lazily resolved collection, register the array:
    ///
    /// ```swift
    /// container.register([Plugin].self) { r in try r.resolveAll(Plugin.self) }
    /// container.register(Menu.self) { r in Menu(plugins: try r.resolve(Lazy<[Plugin]>.self)) }
    /// ```
    public func resolveAll<Service>(_ serviceType: Service.Type) throws -> [Service] {
        try resolve(AllRegistrations<Service>.self, name: nil).elements
    }

    /// Resolves every registration of `serviceType` without runtime arguments that this resolver sees, in `async`
    /// code: the same collection as the synchronous ``Resolver/resolveAll(_:)-9w5z1``, whose elements' factories may be `async`.
    ///
    /// ```swift
    /// let checks = try await container.resolveAll(HealthCheck.self)
    /// ```
    public func resolveAll<Service>(_ serviceType: Service.Type) async throws -> [Service] {
        try await resolve(AllRegistrations<Service>.self, name: nil).elements
    }
}

/// Every registration of `Element` without runtime arguments that a container sees, resolved: what
/// ``Resolver/resolveAll(_:)-9w5z1`` resolves.
///
/// It is a derived service (see ``DerivedService``), so it joins the resolution that asks for it: each element is
/// built by its own registration's rules, within that resolution, at the depth the collection was asked for. An
/// array, `[Element]`, is not derived this way: a missing registration of an array still throws.
struct AllRegistrations<Element> {
    var elements: [Element]
}

extension AllRegistrations: DescribedInErrors {
    /// "all Plugin registrations", in an error of `resolveAll(Plugin.self)` (a closed container, say).
    static var descriptionInErrors: String { "all \(Element.self) registrations" }
}

extension AllRegistrations: DerivedService {
    static func derive<each Argument>(_ at: Derivation, arguments: repeat each Argument) throws -> Self {
        guard at.name == nil, (repeat each Argument).self == Void.self else { throw NotDerivable() }
        var all = Self(elements: [])
        for name in names(seenBy: at.resolution) {
            do {
                all.elements.append(try at.resolution.resolve(Element.self, name: name, depth: at.depth))
            } catch let error as ResolutionError where wasRemoved(name, error) {}
        }
        return all
    }
}

extension AllRegistrations {
    /// The names of the registrations of `Element` without runtime arguments that `resolution` sees now, in order.
    static func names(seenBy resolution: Resolution) -> [String?] {
        resolution.currentContext.namesForResolveAll(of: Element.self)
    }

    /// Whether `error` says that the registration under `name` is gone: unregistered on another thread after the
    /// names were read. The collection is then the one seen a moment later, without it. (A dependency of the element
    /// that is not registered is another key, and still throws.)
    static func wasRemoved(_ name: String?, _ error: ResolutionError) -> Bool {
        guard case .notRegistered = error.reason else { return false }
        return error.key == ServiceKey(serviceType: Element.self, name: name, argumentsType: Void.self)
    }
}

extension AllRegistrations: AsyncDerivedService {
    static func deriveAsync(
        in resolution: Resolution, key: ServiceKey, depth: Int, arguments: AsyncArgumentsBox?
    ) async throws -> Self {
        guard key.name == nil, arguments == nil else { throw resolution.notRegisteredError(key) }
        var all = Self(elements: [])
        for name in names(seenBy: resolution) {
            let elementKey = ServiceKey(serviceType: Element.self, name: name, argumentsType: Void.self)
            let found = resolution.find(elementKey, in: resolution.context)
            do {
                all.elements.append(
                    try await resolution.resolveAsync(elementKey, found: found, depth: depth, arguments: nil))
            } catch let error as ResolutionError where wasRemoved(name, error) {}
        }
        return all
    }
}

/// An array type, whose `.notRegistered` error points at `resolveAll`: a user who asks for `[Plugin]` may mean
/// every `Plugin`.
protocol ArrayOfServices {
    static var elementType: Any.Type { get }
}

extension Array: ArrayOfServices {
    static var elementType: Any.Type { Element.self }
}

extension Container {
    /// The names of the registrations of `serviceType` without runtime arguments seen from here: the unnamed one
    /// (`nil`) and every named one, each once, in the order each name was first registered, from the root down.
    func namesForResolveAll(of serviceType: Any.Type) -> [String?] {
        var chain: [Container] = []
        var container: Container? = self
        while let current = container {
            chain.append(current)
            container = current.parent
        }
        var names: [String?] = []
        var seen: Set<String?> = []
        for current in chain.reversed() {
            let registered = current.registry.withLock { registry in
                registry.fileInstances(in: current)
                return registry.entries.values.compactMap { entry -> (order: Int, name: String?)? in
                    let key = entry.key
                    guard key.serviceType == serviceType, !key.hasArguments else { return nil }
                    return (registry.firstRegistered[key] ?? entry.identity, key.name)
                }
            }
            for (_, name) in registered.sorted(by: { $0.order < $1.order }) where seen.insert(name).inserted {
                names.append(name)
            }
        }
        return names
    }
}
