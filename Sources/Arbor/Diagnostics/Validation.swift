internal import ArborPrimitives

/// What ``Container/validate(samples:)`` found.
///
/// ```swift
/// let report = container.validate()
/// if !report.isValid { print(report) }   // or: #expect(report.isValid, "\(report)")
/// ```
public struct ValidationReport: Sendable, CustomStringConvertible {
    /// One thing that is wrong with the registrations.
    public struct Problem: Sendable, CustomStringConvertible {
        /// What kind of problem it is.
        public enum Kind: Sendable {
            /// Resolving the registration threw this error.
            case resolutionFailed(ResolutionError)
            /// A weak-scoped service, or one marked ``Registration/shortLived()``, was resolved while building (or
            /// wiring) a permanent one, `holder`, which then keeps it alive for good; or a
            /// ``ObjectScope/perContainer`` service was resolved while building a permanent or weak one, which then
            /// keeps the instance of whichever container resolved it first.
            case captiveDependency(holder: ServiceKey)
            /// The registration has `onRelease` hooks, and its `scope` is one whose instances no container holds
            /// strongly (transient, graph or weak): the hooks never run.
            case releaseHooksNeverRun(scope: ObjectScope)
        }

        /// The registration whose resolve showed the problem.
        public let key: ServiceKey
        /// What went wrong.
        public let kind: Kind
        /// The services being built when it showed, outermost first.
        public let path: [ServiceKey]
        /// For a captive dependency: why the captive must not be kept.
        var captive = CaptiveKind.perContainer

        /// The problem for a person: what failed and the path, with a hint.
        public var description: String {
            switch kind {
            case .resolutionFailed(let error):
                let indented = error.description.split(separator: "\n", omittingEmptySubsequences: false)
                    .map { "  \($0)" }.joined(separator: "\n")
                return "✗ \(key) does not resolve:\n\(indented)"
            case .captiveDependency(let holder) where captive == .perContainer:
                let captive = path.last.map(\.description) ?? "?"
                return """
                    ✗ \(captive) is captured by \(holder), which every container shares, though \(captive) is \
                    per-container: \(holder) keeps the instance of the first container that resolved it.
                      path: \(ResolutionError.describe(path))
                      Make \(holder) per-container too, or pass \(captive) to \(holder)'s methods from code that \
                    has the container at hand (a request's handler). A Provider<…> that \(holder) keeps resolves where \
                    \(holder) was built, so it hands every container the same one.
                    """
            case .captiveDependency(let holder):
                if case .perContainerWrapper(let service) = captive {
                    let wrapper = path.last.map(\.description) ?? "?"
                    return """
                        ✗ \(wrapper) is kept by \(holder), which every container shares, though \(service) is \
                        per-container: it resolves \(service) where \(holder) was built, so it hands every container \
                        the same one.
                          path: \(ResolutionError.describe(path))
                          Make \(holder) per-container too, or pass \(service) to \(holder)'s methods from code that \
                        has the container at hand (a request's handler).
                        """
                }
                let captiveKey = path.last.map(\.description) ?? "?"
                let why = captive == .weak ? "it is weak-scoped" : "it is marked short-lived"
                return """
                    ✗ \(captiveKey) is captured by the permanent \(holder), which keeps it alive for good, though \
                    \(why).
                      path: \(ResolutionError.describe(path))
                      Let \(holder) take a Provider<…> of it and resolve one when needed, or give \(captiveKey) a \
                    longer-lived scope.
                    """
            case .releaseHooksNeverRun(let scope):
                return """
                    ✗ \(key) has onRelease hooks that never run: no container holds its instances, which are \
                    \(scope.name).
                      A container runs the hooks of instances it holds: give \(key) such a scope (.permanent, \
                    .perContainer, or one of your own with strong retention), or release its instances where they \
                    are used.
                    """
            }
        }
    }

    /// Every problem found, in the order of the registrations checked.
    public let problems: [Problem]
    /// The registrations that were resolved.
    public let checked: [ServiceKey]
    /// The registrations that were not resolved: those that need runtime arguments and had no sample, and those that
    /// need an `async` resolve — an `async` or main-actor factory or hook, theirs or a dependency's — which a
    /// synchronous `validate()` cannot make.
    public let notChecked: [ServiceKey]
    /// Of `notChecked`, those whose factory is `async` or runs on the main actor.
    let needsAsync: Set<ServiceKey>
    let edges: [DependencyEdge]
    let scopes: [ServiceKey: ObjectScope]

    /// Whether no problem was found.
    public var isValid: Bool { problems.isEmpty }

    /// The report for a person: a summary line, each problem, and the registrations not checked.
    public var description: String {
        var lines: [String] = []
        let count = problems.isEmpty ? "no problems" : problems.count == 1 ? "1 problem" : "\(problems.count) problems"
        var summary = "Validation found \(count) in the \(checked.count) registration\(checked.count == 1 ? "" : "s")"
        summary += " it checked"
        if !notChecked.isEmpty {
            summary += "; \(notChecked.count) \(notChecked.count == 1 ? "was" : "were") not checked (below)"
        }
        lines.append(summary + ".")
        for problem in problems {
            lines.append("")
            lines.append(problem.description)
        }
        let needingSamples = notChecked.filter { !needsAsync.contains($0) }
        if !needingSamples.isEmpty {
            lines.append("")
            lines.append("Not checked, because they need runtime arguments (pass samples to validate):")
            for key in needingSamples { lines.append("  \(key)") }
        }
        let needingAsync = notChecked.filter { needsAsync.contains($0) }
        if !needingAsync.isEmpty {
            lines.append("")
            lines.append(
                "Not checked, because they need an async resolve (an async or main-actor factory or hook, theirs or a "
                    + "dependency's):")
            for key in needingAsync { lines.append("  \(key)") }
        }
        return lines.joined(separator: "\n")
    }

    /// The dependencies observed while validating, as a Graphviz graph. See ``Container/dependencyGraphDOT()``.
    public func dependencyGraphDOT() -> String {
        func quoted(_ key: ServiceKey) -> String {
            "\"" + key.description.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"") + "\""
        }
        var lines = ["digraph Arbor {", "  rankdir=LR;", "  node [shape=box, fontname=\"Helvetica\"];"]
        for key in scopes.keys.sorted(by: { $0.description < $1.description }) {
            let scope = scopes[key].map(\.description) ?? "?"
            let label = (key.description + "\\n" + scope).replacingAll("\"", with: "\\\"")
            lines.append("  \(quoted(key)) [label=\"\(label)\"];")
        }
        for edge in edges {
            let via = edge.viaHook ? "initCompleted, " : ""
            let style = edge.viaHook ? "style=dashed, " : ""
            let label = "\(via)resolving \(edge.root)".replacingAll("\"", with: "\\\"")
            lines.append("  \(quoted(edge.from)) -> \(quoted(edge.to)) [\(style)label=\"\(label)\"];")
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }
}

/// Sample runtime arguments for ``Container/validate(samples:)``, so that registrations that take arguments are
/// checked too.
///
/// ```swift
/// let report = container.validate { samples in
///     samples.add(Greeter.self, arguments: "Ann", 3)
/// }
/// ```
public struct ValidationSamples {
    var resolvers: [ServiceKey: (Container) throws -> Void] = [:]

    /// Checks the registration of `serviceType` under `name` whose factory takes these arguments by resolving it
    /// with them.
    public mutating func add<Service, FirstArgument, each Argument>(
        _ serviceType: Service.Type,
        name: String? = nil,
        arguments firstArgument: FirstArgument,
        _ argument: repeat each Argument
    ) {
        let key = ServiceKey(
            serviceType: serviceType, name: name, argumentsType: (FirstArgument, repeat each Argument).self)
        resolvers[key] = { container in
            _ = try container.resolve(serviceType, name: name, arguments: firstArgument, repeat each argument)
        }
    }
}

extension Container {
    /// Resolves every registration this container can see, in throwaway copies of it and its ancestors, and
    /// reports every failure instead of stopping at the first.
    ///
    /// ```swift
    /// @Test func theAppIsWiredCorrectly() {
    ///     let report = AppContainer.make().validate()
    ///     #expect(report.isValid, "\(report)")
    /// }
    /// ```
    ///
    /// No permanent or weak instance of the real containers is created or changed: the copies have storages of
    /// their own, and are dropped afterwards (their `onRelease` hooks do not run). Factories and hooks do run, so
    /// keep them free of side effects you would not want in a test. Registrations that need runtime arguments are
    /// listed as not checked, unless `samples` supplies arguments for them.
    ///
    /// Besides resolution errors, the report lists captive dependencies: a permanent instance whose construction
    /// or `initCompleted` hooks resolved a weak-scoped one, or one marked ``Registration/shortLived()``. The
    /// permanent instance keeps it alive for good, which defeats the weak scope, or serves a stale short-lived
    /// object forever. Other transient and graph-scoped dependencies of a permanent service are not reported: they
    /// are built for it, and owning them is what it is expected to do. A permanent registered in a child (a request's
    /// or a session's) is not reported for what it keeps: it lives only as long as that child. A per-container
    /// service captured by anything containers share is always reported. So are `onRelease` hooks that never run:
    /// those of a transient, graph-scoped or weak registration, whose instances no container holds.
    ///
    /// To check the containers a request makes, validate a representative child, with sample per-request values:
    ///
    /// ```swift
    /// let request = app.makeChild()
    /// request.register(RequestInfo.self, instance: RequestInfo(path: "/notes"))
    /// for problem in request.validate().problems {
    ///     switch problem.kind {
    ///     case .resolutionFailed(let error): Issue.record("\(problem.key): \(error.reason)")
    ///     case .captiveDependency(let holder): Issue.record("\(holder) captures \(problem.path.last!)")
    ///     case .releaseHooksNeverRun: Issue.record("\(problem)")
    ///     }
    /// }
    /// ```
    public func validate(samples: (inout ValidationSamples) -> Void = { _ in }) -> ValidationReport {
        var provided = ValidationSamples()
        samples(&provided)
        let observer = ValidationObserver()
        let shadow = throwawayCopy(observedBy: observer)

        var problems: [ValidationReport.Problem] = []
        var checked: [ServiceKey] = []
        var notChecked: [ServiceKey] = []
        var needsAsync: Set<ServiceKey> = []
        for (key, entry) in visibleEntries() {
            if !entry.releaseHooks.isEmpty, entry.scope.storage != .strong, entry.scope.storage != .perContainer {
                problems.append(.init(key: key, kind: .releaseHooksNeverRun(scope: entry.scope), path: [key]))
            }
            let check: (Container) throws -> Void
            if key.hasArguments {
                guard let sample = provided.resolvers[key] else {
                    notChecked.append(key)
                    continue
                }
                check = sample
            } else {
                check = entry.validate
            }
            checked.append(key)
            observer.begin(key)
            do {
                try check(shadow)
            } catch let error as ResolutionError {
                if case .asyncRequired = error.reason, error.path == [key] {
                    // Its own factory is `async` or runs on the main actor: a synchronous validation cannot build it.
                    checked.removeLast()
                    notChecked.append(key)
                    needsAsync.insert(key)
                    continue
                }
                problems.append(.init(key: key, kind: .resolutionFailed(error), path: error.path))
            } catch is AsyncOnly {
                checked.removeLast()
                notChecked.append(key)
                needsAsync.insert(key)
                continue
            } catch {
                // Resolves throw only ResolutionError.
                let wrapped = ResolutionError(.factoryFailed(error), key: key, path: [key])
                problems.append(.init(key: key, kind: .resolutionFailed(wrapped), path: [key]))
            }
            for captive in observer.takeCaptives() {
                // A permanent registered in a child lives as long as that child (a request, a session), not for
                // good: what it keeps alive goes with the child.
                if captive.kind.keptForGood, registeredInAChild(captive.holder) { continue }
                var problem = ValidationReport.Problem(
                    key: key, kind: .captiveDependency(holder: captive.holder), path: captive.path)
                problem.captive = captive.kind
                problems.append(problem)
            }
        }
        let (edges, scopes) = observer.graph()
        return ValidationReport(
            problems: problems, checked: checked, notChecked: notChecked, needsAsync: needsAsync, edges: edges,
            scopes: scopes)
    }

    /// The dependency graph of every registration this container can see, as Graphviz DOT: one node per service
    /// (its key and scope), one edge per dependency observed while resolving it, labelled with the top-level
    /// resolve that found it; edges made in `initCompleted` hooks are dashed.
    ///
    /// ```swift
    /// try container.dependencyGraphDOT().write(toFile: "graph.dot", atomically: true, encoding: .utf8)
    /// // dot -Tsvg graph.dot -o graph.svg
    /// ```
    ///
    /// It runs ``validate(samples:)`` to observe the graph, so the same notes apply.
    public func dependencyGraphDOT() -> String {
        validate().dependencyGraphDOT()
    }

    /// Whether the registration a resolve from this container finds for `key` is held by a container with a parent.
    private func registeredInAChild(_ key: ServiceKey) -> Bool {
        var container: Container? = self
        while let current = container {
            if current.entries.contains(where: { $0.key == key }) { return current.parent != nil }
            container = current.parent
        }
        return false
    }

    /// Every entry this container's resolves can find, nearest first, by key, sorted for a stable report.
    private func visibleEntries() -> [(ServiceKey, ServiceEntry)] {
        var found: [ServiceKey: ServiceEntry] = [:]
        var container: Container? = self
        while let current = container {
            for entry in current.entries where found[entry.key] == nil { found[entry.key] = entry }
            container = current.parent
        }
        return found.sorted { $0.key.description < $1.key.description }
    }

    /// A copy of this container and its ancestors, with the same registrations and empty storages.
    private func throwawayCopy(observedBy observer: ValidationObserver) -> Container {
        var chain: [Container] = []
        var container: Container? = self
        while let current = container {
            chain.append(current)
            container = current.parent
        }
        var copy: Container?
        for original in chain.reversed() {
            let shadow = Container(parent: copy, defaultScope: original.defaultScope)
            let depthLimit = original.maxResolutionDepth
            shadow.registry.withLock { registry in
                registry.diagnostics = Diagnostics(observers: [], validation: observer)
                registry.depthLimit = depthLimit
                shadow.markSettings(of: registry)
            }
            shadow.changed()
            for entry in original.entries { shadow.add(entry.copy(for: shadow)) }
            copy = shadow
        }
        return copy!  // The chain holds at least `self`.
    }
}

/// A dependency observed while validating.
struct DependencyEdge: Hashable, Sendable {
    let from: ServiceKey
    let to: ServiceKey
    let viaHook: Bool
    /// The registration whose validation resolve observed it.
    let root: ServiceKey
}

/// Collects what the resolutions in `validate()`'s throwaway containers observe.
final class ValidationObserver: @unchecked Sendable {
    struct Captive {
        let holder: ServiceKey
        let path: [ServiceKey]
        let kind: CaptiveKind
    }

    private struct State {
        var root: ServiceKey?
        var edges: [DependencyEdge] = []
        var seenEdges: Set<[ServiceKey]> = []
        var scopes: [ServiceKey: ObjectScope] = [:]
        var captives: [Captive] = []
        var seenCaptives: Set<[ServiceKey]> = []
    }

    private let state = Protected.make(State())

    func begin(_ root: ServiceKey) {
        state.withLock { $0.root = root }
    }

    func recordEdge(from: ServiceKey?, to: ServiceKey, scope: ObjectScope, viaHook: Bool) {
        state.withLock { state in
            if state.scopes[to] == nil { state.scopes[to] = scope }
            guard let from, let root = state.root else { return }
            guard state.seenEdges.insert([from, to, viaHook ? from : to]).inserted else { return }
            state.edges.append(DependencyEdge(from: from, to: to, viaHook: viaHook, root: root))
        }
    }

    func recordCaptive(_ key: ServiceKey, heldBy holder: ServiceKey, path: [ServiceKey], kind: CaptiveKind) {
        state.withLock { state in
            guard state.seenCaptives.insert([holder, key]).inserted else { return }
            state.captives.append(Captive(holder: holder, path: path, kind: kind))
        }
    }

    func takeCaptives() -> [Captive] {
        state.withLock { state in
            defer { state.captives = [] }
            return state.captives
        }
    }

    func graph() -> ([DependencyEdge], [ServiceKey: ObjectScope]) {
        state.withLock { ($0.edges, $0.scopes) }
    }
}

extension String {
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

/// Why a captive dependency must not be kept by its holder.
enum CaptiveKind: Sendable, Equatable {
    /// Per-container: its holder, shared by every container, keeps the first container's.
    case perContainer
    /// Weak-scoped: a permanent holder keeps it alive for good.
    case weak
    /// Marked ``Registration/shortLived()``: a permanent holder keeps it alive for good.
    case shortLived
    /// A `Lazy` or `Provider` of a per-container service, kept by a holder every container shares: it resolves the
    /// service where the holder was built, the same instance for every container.
    case perContainerWrapper(ServiceKey)
}

extension CaptiveKind {
    /// Whether the problem is that the holder keeps it for good (weak-scoped, short-lived), rather than that every
    /// container shares it: a holder registered in a child lives only as long as the child.
    var keptForGood: Bool { self == .weak || self == .shortLived }
}
