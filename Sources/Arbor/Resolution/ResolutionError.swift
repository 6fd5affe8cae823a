/// Why a `resolve` call failed, where in the graph, and what to do about it.
///
/// Every `resolve` throws this error and nothing else — but for an `async` resolve whose task was cancelled while it
/// waited for another task's build, which throws `CancellationError`, as Swift's waits do. (A factory that stops
/// because its task was cancelled is a factory that threw: ``Reason/factoryFailed(_:)`` wrapping the
/// `CancellationError`.) Its ``description`` is written for a person:
///
/// ```text
/// Arbor could not resolve Database(name: "primary"): nothing is registered under that key.
///   path: AppModel → Repository → Database(name: "primary")
///   registered for Database: Database, Database(name: "replica")
///   Register it, e.g. container.register(Database.self, name: "primary") { r in ... },
///   or ask for one of the registrations above.
/// ```
///
/// Inspect ``reason`` to react in code:
///
/// ```swift
/// do {
///     let app = try container.resolve(AppModel.self)
/// } catch let error as ResolutionError {
///     if case .notRegistered = error.reason { print("missing:", error.key) }
/// }
/// ```
public struct ResolutionError: Error, CustomStringConvertible {
    /// What went wrong.
    ///
    /// New reasons may be added in a minor release: a `switch` over a reason outside Arbor needs an
    /// `@unknown default` (the compiler asks for it). Matching one reason reads as usual:
    ///
    /// ```swift
    /// if case .factoryFailed(let underlying) = error.reason { log(underlying) }
    /// switch error.reason {
    /// case .notRegistered: registerDefaults()
    /// case .factoryFailed(let underlying): throw underlying
    /// default: throw error
    /// }
    /// ```
    #if compiler(>=6.3)
    @nonexhaustive
    public enum Reason: Sendable, CustomStringConvertible {
        /// Nothing is registered under the key, in the container or any of its ancestors.
        case notRegistered
        /// The service is already being built further up the path, and there is no instance to share yet.
        case circularDependency
        /// The resolution went deeper than the starting container's ``Container/maxResolutionDepth``, or than the
        /// thread's stack allows.
        case depthLimitExceeded
        /// A factory or an `initCompleted` hook threw this error.
        case factoryFailed(any Error)
        /// A registration's instance is not of the type it was asked for.
        case typeMismatch
        /// The container the resolution started in, or an ancestor of it, was closed (``Container/close()``), or
        /// no longer exists.
        case containerClosed
        /// The service can only be built by an `async` resolve, and this one is synchronous: its factory, or one of its
        /// `initCompleted` hooks, is `async`, or its factory runs on the main actor and the resolve does not. Or
        /// another task's `async` resolve is building it, and this synchronous one runs on the main actor or in a
        /// task, where waiting would block a thread that resolve may need. Resolve it with `try await`; the
        /// description says which. (In a synchronous factory or hook that an `async` resolve runs, it only ends that
        /// run: the `async` resolve awaits the build, then runs the factory or hook again.)
        case asyncRequired
    }
    #else
    public enum Reason: Sendable, CustomStringConvertible {
        /// Nothing is registered under the key, in the container or any of its ancestors.
        case notRegistered
        /// The service is already being built further up the path, and there is no instance to share yet.
        case circularDependency
        /// The resolution went deeper than the starting container's ``Container/maxResolutionDepth``, or than the
        /// thread's stack allows.
        case depthLimitExceeded
        /// A factory or an `initCompleted` hook threw this error.
        case factoryFailed(any Error)
        /// A registration's instance is not of the type it was asked for.
        case typeMismatch
        /// The container the resolution started in, or an ancestor of it, was closed (``Container/close()``), or
        /// no longer exists.
        case containerClosed
        /// The service can only be built by an `async` resolve, and this one is synchronous: its factory, or one of its
        /// `initCompleted` hooks, is `async`, or its factory runs on the main actor and the resolve does not. Or
        /// another task's `async` resolve is building it, and this synchronous one runs on the main actor or in a
        /// task, where waiting would block a thread that resolve may need. Resolve it with `try await`; the
        /// description says which. (In a synchronous factory or hook that an `async` resolve runs, it only ends that
        /// run: the `async` resolve awaits the build, then runs the factory or hook again.)
        case asyncRequired
    }
    #endif

    /// What went wrong.
    public var reason: Reason
    /// The service that could not be resolved.
    public var key: ServiceKey
    /// The services being built when it failed, outermost first, ending with ``key``.
    public var path: [ServiceKey]
    /// For ``Reason/notRegistered``: the registrations of the same service type that do exist, under other names
    /// or argument types, nearest container first. Empty for the other reasons.
    public var registeredAlternatives: [ServiceKey]
    /// Extra sentences for the description (the depth limit in force, the thread that was building, …).
    var detail: String?
    /// For ``Reason/asyncRequired``: what to do where the synchronous resolve was made, after the detail (in
    /// top-level code; through a `Lazy` or `Provider`).
    var hint = ""
    /// For ``Reason/depthLimitExceeded``: the limit was the thread's stack, not `maxResolutionDepth`.
    var isStackLimit = false
    /// For ``Reason/containerClosed``: the container closed is the root of its tree, which has no parent to make a
    /// new child of.
    var isRootClosed = false

    init(
        _ reason: Reason,
        key: ServiceKey,
        path: [ServiceKey],
        registeredAlternatives: [ServiceKey] = [],
        detail: String? = nil
    ) {
        self.reason = reason
        self.key = key
        self.path = path
        self.registeredAlternatives = registeredAlternatives
        self.detail = detail
    }

    /// What failed, the path, and what to do about it, written for a person. See the type's documentation.
    public var description: String {
        var lines: [String] = []
        switch reason {
        case .notRegistered:
            lines.append("Arbor could not resolve \(key): nothing is registered under that key.")
            lines.append("  path: \(Self.describe(path))")
            if detail != nil {
                // Registered where the resolve started, not where a shared service further up is built: the detail
                // says so, and the advice below would be wrong.
            } else if registeredAlternatives.isEmpty {
                lines.append("  \(typeName) has no registration at all in this container or its ancestors.")
                lines.append("  Register it, e.g. \(registrationExample).")
            } else {
                // The first few: a type registered under thousands of names would give a text of megabytes.
                let shown = registeredAlternatives.prefix(Self.alternativesShown).map(\.description)
                let more = registeredAlternatives.count - shown.count
                let list = shown.joined(separator: ", ") + (more > 0 ? ", and \(more) more" : "")
                lines.append("  registered for \(typeName): \(list)")
                if let (near, difference) = suggestion {
                    lines.append("  Did you mean \(near)? \(difference)")
                }
                lines.append("  Register it, e.g. \(registrationExample),")
                lines.append("  or ask for one of the registrations above (same name, same argument types).")
                if key.hasArguments, registeredAlternatives.contains(where: { $0.hasArguments && $0.name == key.name })
                {
                    lines.append("  Arguments match by the types they are passed as, not by the types of their values:")
                    lines.append("  to pass one as a protocol or an optional a registration takes, say so,")
                    lines.append("  e.g. arguments: client as any HTTPClient, or title as String?.")
                }
            }
            if let array = key.serviceType as? any ArrayOfServices.Type, !key.hasArguments {
                lines.append(
                    "  For every registration of \(array.elementType), call resolveAll(\(array.elementType).self).")
            }
        case .circularDependency where detail != nil:
            // Not a cycle of factories an initCompleted hook would break: the detail says what it is, and what to do.
            lines.append("Arbor could not resolve \(key): circular dependency \(Self.describe(cycle)).")
            lines.append("  path: \(Self.describe(path))")
        case .circularDependency:
            lines.append("Arbor could not resolve \(key): circular dependency \(Self.describe(cycle)).")
            lines.append("  path: \(Self.describe(path))")
            lines.append("  Each factory in the cycle asks for the next one, so none of them can be built first.")
            lines.append("  Break the cycle: let one side receive the other in an initCompleted hook, which runs")
            lines.append("  after the factories have returned, and keep that back reference weak, e.g.")
            lines.append("    container.register(Child.self) { _ in Child() }")
            lines.append("        .initCompleted { r, child in child.parent = try r.resolve(Parent.self) }")
            if key.hasArguments {
                lines.append("  \(key) takes runtime arguments, and a cycle is the same key again,")
                lines.append("  whatever the values: a factory that resolves its own service with other arguments,")
                lines.append("  to build a recursive structure, is one too. Build the structure in a function of your")
                lines.append("  own that one factory calls, and resolve from the container what the whole structure")
                lines.append("  needs.")
            }
        case .depthLimitExceeded where isStackLimit:
            lines.append("Arbor could not resolve \(key): the thread's stack is nearly used up.")
            lines.append("  path: \(Self.describe(path))")
        case .depthLimitExceeded:
            lines.append("Arbor could not resolve \(key): the resolution is \(path.count - 1) levels deep.")
            lines.append("  path: \(Self.describe(path))")
            lines.append("  If the graph really is this deep, raise the container's maxResolutionDepth.")
            lines.append("  If initCompleted hooks keep resolving new transient instances whose hooks do the same,")
            lines.append("  give those services a shared scope (.graph or .permanent) so the chain ends.")
        case .factoryFailed(let error):
            lines.append("Arbor could not resolve \(key): \(detail ?? "its factory threw an error"): \(error)")
            lines.append("  path: \(Self.describe(path))")
        case .typeMismatch:
            lines.append("Arbor could not resolve \(key): the instance is not of that type.")
            lines.append("  path: \(Self.describe(path))")
        case .asyncRequired:
            let detail = detail ?? "it needs an async resolve."
            lines.append("Arbor could not resolve \(key) synchronously: \(detail)\(hint)")
            lines.append("  path: \(Self.describe(path))")
        case .containerClosed where isRootClosed:
            lines.append("Arbor could not resolve \(key): the container was closed.")
            lines.append("  The container closed is the root of its tree; a closed root's children resolve nothing.")
            lines.append("  An app's shutdown closes the root it was given (ContainerService, useRequestContainers):")
            lines.append("  make a new root for each app that runs; in a test, give the app a child of the shared")
            lines.append("  root, ArborTesting.overriding(root), which its shutdown closes instead.")
        case .containerClosed:
            lines.append("Arbor could not resolve \(key): the container was closed.")
            lines.append("  A closed container (or one whose ancestor was closed) resolves nothing.")
            lines.append("  Resolve from a container that is still open, e.g. a new child of the closed one's parent.")
        }
        if let detail, !isFactoryFailure, !isAsyncRequired {
            lines.append("  \(detail)")
        }
        return lines.joined(separator: "\n")
    }

    private var isFactoryFailure: Bool {
        if case .factoryFailed = reason { return true }
        return false
    }

    var isAsyncRequired: Bool {
        if case .asyncRequired = reason { return true }
        return false
    }

    private var typeName: String { String(describing: key.serviceType) }

    private var registrationExample: String {
        let name = key.name.map { ", name: \(String(reflecting: $0))" } ?? ""
        var parameters = "r"
        if key.hasArguments {
            let types = key.argumentList.split(separator: ", ")
            let labelled = types.enumerated().map { "arg\($0.offset + 1): \($0.element)" }
            parameters = "(r, \(labelled.joined(separator: ", ")))"
        }
        return "container.register(\(typeName).self\(name)) { \(parameters) in ... }"
    }

    /// The part of the path from the first occurrence of the repeated key to the end.
    var cycle: [ServiceKey] {
        guard let start = path.dropLast().lastIndex(of: key) else { return path }
        return Array(path[start...])
    }

    /// `.containerClosed` for a top-level resolve of `key` in `container`, which is closed, or an ancestor of it is.
    /// Out of line: the look-ups that throw it are on every resolve's path.
    @inline(never)
    static func closed(_ key: ServiceKey, resolvingIn container: Container) -> ResolutionError {
        var error = ResolutionError(.containerClosed, key: key, path: [key])
        let closedAncestors = sequence(first: container, next: \.parent).filter(\.isClosed)
        error.isRootClosed = closedAncestors.last?.parent == nil
        return error
    }

    /// How many of ``registeredAlternatives`` the description lists.
    static let alternativesShown = 20

    /// `A → B → C`; long paths keep their first three and last six keys.
    static func describe(_ path: [ServiceKey]) -> String {
        guard path.count > 12 else { return path.map(\.description).joined(separator: " → ") }
        let head = path.prefix(3).map(\.description)
        let tail = path.suffix(6).map(\.description)
        return (head + ["… \(path.count - 9) more …"] + tail).joined(separator: " → ")
    }
}

extension ResolutionError.Reason {
    /// The reason's name, such as `notRegistered`; `factoryFailed` includes the underlying error.
    public var description: String {
        switch self {
        case .notRegistered: "notRegistered"
        case .circularDependency: "circularDependency"
        case .depthLimitExceeded: "depthLimitExceeded"
        case .factoryFailed(let error): "factoryFailed(\(error))"
        case .typeMismatch: "typeMismatch"
        case .containerClosed: "containerClosed"
        case .asyncRequired: "asyncRequired"
        }
    }

    /// The error a factory or hook threw, for ``factoryFailed(_:)``; `nil` for every other reason.
    ///
    /// ```swift
    /// if let underlying = error.reason.underlyingError as? DatabaseError { … }
    /// ```
    public var underlyingError: (any Error)? {
        if case .factoryFailed(let error) = self { return error }
        return nil
    }
}
