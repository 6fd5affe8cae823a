import Arbor
import ArborTestSupport
import Foundation
import Testing

// What users rely on, for every shape of service type (Support/ServiceShapes.swift) crossed with every lifetime and
// both engines: sharing within a graph and across resolves, weak release, `onRelease` and `close()`, leak tracking and
// its report, `resetInstance`, `implements`, `Lazy`/`Provider`/`Optional`, `resolveAll`, and `validate()`'s captive
// check. A class registered as `any SAnimal` must behave as it does registered as itself.

enum ShapeLifetime: String, CaseIterable, Sendable, CustomStringConvertible {
    case transient, graph, weak, permanent, perContainer, custom

    static let session = ObjectScope(name: "session", retention: .strong)

    var scope: ObjectScope {
        switch self {
        case .transient: .transient
        case .graph: .graph
        case .weak: .weak
        case .permanent: .permanent
        case .perContainer: .perContainer
        case .custom: Self.session
        }
    }

    /// Whether the container keeps the instance, releasing it (with `onRelease`) when it closes.
    var isKept: Bool { self == .permanent || self == .perContainer || self == .custom }

    /// Whether two resolves in one graph share an instance of a shape.
    func sharesWithinAGraph(isObject: Bool) -> Bool {
        switch self {
        case .transient: false
        case .weak: isObject  // A value has no identity to share: weak behaves as transient for it.
        case .graph, .permanent, .perContainer, .custom: true
        }
    }

    /// Whether two top-level resolves share an instance (the first one still held).
    func sharesAcrossResolves(isObject: Bool) -> Bool {
        switch self {
        case .transient, .graph: false
        case .weak: isObject
        case .permanent, .perContainer, .custom: true
        }
    }

    var description: String { rawValue }
}

enum ShapeEngine: String, CaseIterable, Sendable, CustomStringConvertible {
    case synchronous, async
    var description: String { rawValue }
}

/// A consumer that resolves the service twice in its factory, within one graph.
final class ShapePair: @unchecked Sendable {
    let first: Any
    let second: Any
    init(_ first: Any, _ second: Any) {
        self.first = first
        self.second = second
    }
}

/// A permanent consumer, for the captive check.
final class ShapeHolder: @unchecked Sendable {
    let held: Any
    init(_ held: Any) { self.held = held }
}

/// One shape, one lifetime, one engine: registers, resolves and checks.
struct ShapeCase<Shape: ServiceShape> {
    typealias Service = Shape.Service
    let lifetime: ShapeLifetime
    let engine: ShapeEngine
    let calls = Counter()
    let releases = Recorder()
    var context: String { "\(Shape.name), \(lifetime), \(engine)" }
    var isObject: Bool { Shape.isObject }

    @discardableResult
    func register(in container: Container, name: String? = nil) -> Registration<Service> {
        let calls = calls
        let releases = releases
        let registration: Registration<Service>
        switch engine {
        case .synchronous:
            registration = container.register(Service.self, name: name) { _ in Shape.make(calls.increment()) }
        case .async:
            registration = container.register(Service.self, name: name) { _ async in Shape.make(calls.increment()) }
        }
        return registration.inObjectScope(lifetime.scope)
            .onRelease { service in releases.record("\(Shape.serial(of: service) ?? -1)") }
    }

    func registerPair(in container: Container) {
        switch engine {
        case .synchronous:
            container.register(ShapePair.self) { r in
                ShapePair(try r.resolve(Service.self) as Any, try r.resolve(Service.self) as Any)
            }
        case .async:
            container.register(ShapePair.self) { r async throws in
                let first: Service = try await r.resolve()
                let second: Service = try await r.resolve()
                return ShapePair(first as Any, second as Any)
            }
        }
    }

    func resolve<Resolved>(_: Resolved.Type, from container: Container, name: String? = nil) async throws -> Resolved {
        switch engine {
        case .synchronous: try resolveSynchronously(Resolved.self, name: name, from: container)
        case .async: try await container.resolve(Resolved.self, name: name)
        }
    }

    func serial(_ service: Service) -> Int? { Shape.serial(of: service) }

    /// Whether `a` and `b` are the same instance, as far as the shape can tell.
    func same(_ a: Service, _ b: Service) -> Bool? {
        if let objectA = Shape.object(of: a), let objectB = Shape.object(of: b) { return objectA === objectB }
        guard let serialA = serial(a), let serialB = serial(b) else { return nil }
        return serialA == serialB
    }

    func run() async throws {
        let root = Container()
        let child = root.makeChild()
        // A per-container registration lives in the root and is built in each container that resolves it; the
        // others live in the child, which holds (and on close releases) their instances.
        let home = lifetime == .perContainer ? root : child
        register(in: home).implements(Any.self, name: "forwarded")
        register(in: home, name: "a")
        registerPair(in: child)

        // Sharing within one graph.
        var before = calls.value
        let pair = try await resolve(ShapePair.self, from: child)
        let shareInGraph = lifetime.sharesWithinAGraph(isObject: isObject)
        #expect(calls.value - before == (shareInGraph ? 1 : 2), "\(context): factory runs for one graph")
        if let same = same(pair.first as! Service, pair.second as! Service) {
            #expect(same == shareInGraph, "\(context): one graph shares (\(shareInGraph))")
        }

        // Sharing across top-level resolves, the first instance still held.
        let first: Service = try await resolve(Service.self, from: child)
        before = calls.value
        let second: Service = try await resolve(Service.self, from: child)
        let shareAcross = lifetime.sharesAcrossResolves(isObject: isObject)
        #expect(calls.value - before == (shareAcross ? 0 : 1), "\(context): factory runs for a second resolve")
        if let same = same(first, second) { #expect(same == shareAcross, "\(context): resolves share") }

        // `implements`, `Optional`, `Lazy`, `Provider` and `resolveAll` see the same instance where it is shared.
        let forwarded = try await resolve(Any.self, from: child, name: "forwarded") as! Service
        let optional = try await resolve(Service?.self, from: child)
        #expect(optional != nil, "\(context): an Optional of a registered service is not nil")
        let all: [Service] =
            engine == .async
            ? try await child.resolveAll(Service.self) : try resolveAllSynchronously(Service.self, from: child)
        // Registered as `Any`, the forward to `Any` is one of the registrations too.
        let registrations = Service.self == Any.self ? 3 : 2
        #expect(all.count == registrations, "\(context): resolveAll found \(all.count) registrations")
        var derived: [(String, Service)] = [("implements", forwarded), ("resolveAll", all[0])]
        if let optional { derived.append(("Optional", optional)) }
        if engine == .synchronous {
            derived.append(("Lazy", try resolveSynchronously(Lazy<Service>.self, from: child).instance))
            derived.append(("Provider", try resolveSynchronously(Provider<Service>.self, from: child).instance))
        }
        for (via, instance) in derived {
            if let same = same(first, instance) { #expect(same == shareAcross, "\(context): \(via) shares") }
        }
        if let serialA = serial(all[0]), let serialB = serial(all[registrations - 1]) {
            #expect(serialA != serialB, "\(context): resolveAll resolves each registration")
        }

        // `resetInstance` drops what the container keeps (and, for weak, what it would share), nothing else.
        if lifetime.isKept || (lifetime == .weak && isObject) {
            let released = releases.events.count
            child.resetInstance(of: Service.self)
            before = calls.value
            let afterReset: Service = try await resolve(Service.self, from: child)
            #expect(calls.value - before == 1, "\(context): a reset instance is built again")
            if let same = same(first, afterReset) { #expect(!same, "\(context): reset gives a new instance") }
            if lifetime.isKept {
                #expect(releases.events.count == released + 1, "\(context): reset releases the kept instance")
            }
        }
        withExtendedLifetime((pair, first, second, forwarded, optional, all, derived)) {}

        // `close()` releases every kept instance once, and nothing else; then nothing resolves.
        let built = calls.value
        let releasedBeforeClose = releases.events.count
        child.close()
        if lifetime.isKept {
            #expect(releases.events.count > releasedBeforeClose, "\(context): close releases what the child keeps")
            #expect(releases.events.count <= built, "\(context): each instance is released once at most")
        } else {
            #expect(releases.events.isEmpty, "\(context): \(lifetime) instances are not the container's to release")
        }
        #expect(throws: ResolutionError.self) { try resolveSynchronously(Service.self, from: child) }
    }

    /// A weak instance is shared while someone holds it, and built anew once the last holder lets go.
    func runWeakRelease() async throws {
        guard lifetime == .weak else { return }
        let container = Container()
        register(in: container)
        var held: Service? = try await resolve(Service.self, from: container)
        weak let object = held.flatMap { Shape.object(of: $0) }
        let heldSerial = held.flatMap(serial)
        let before = calls.value
        var again: Service? = try await resolve(Service.self, from: container)
        #expect(calls.value - before == (isObject ? 0 : 1), "\(context): shared while held")
        again = nil
        held = nil
        withExtendedLifetime((again, held)) {}
        if isObject { #expect(object == nil, "\(context): nothing but the holder kept the weak instance") }
        let fresh: Service = try await resolve(Service.self, from: container)
        #expect(calls.value - before == (isObject ? 1 : 2), "\(context): built again once released")
        if let heldSerial, let freshSerial = serial(fresh) { #expect(heldSerial != freshSerial) }
    }

    /// A leak tracker reports an instance that keeps itself alive, unless its container keeps it; values are not
    /// tracked.
    func runLeakTracking() async throws {
        let root = Container()
        let child = root.makeChild()
        register(in: lifetime == .perContainer ? root : child)
        let tracker = LeakTracker(child)
        do {
            let leaked: Service = try await resolve(Service.self, from: child)
            Shape.makeLeak(leaked)
        }
        let report = tracker.check()
        let reported = report.leaks.contains { $0.key.serviceType == Service.self }
        #expect(reported == (isObject && !lifetime.isKept), "\(context): leak reported: \(report)")
        if isObject, !lifetime.isKept {
            #expect(report.description.contains("\(Service.self)"), "\(context): the report names the type")
        }
        if !isObject { #expect(report.trackedCount == 0, "\(context): values are not tracked") }
        // Break the cycle: the instances are the tracker's only to look at.
        if let leak = report.leaks.first(where: { $0.key.serviceType == Service.self }) { _ = leak }
        for instance in [try await resolve(Service.self, from: child)] { Shape.breakLeak(instance) }
        child.close()
    }

    /// `validate()` calls a weak or per-container service captured by a permanent one a captive dependency.
    func runCaptiveCheck() {
        guard engine == .synchronous else { return }  // validate() resolves synchronously.
        let root = Container()
        register(in: root)
        root.register(ShapeHolder.self) { r in ShapeHolder(try r.resolve(Service.self) as Any) }
            .inObjectScope(.permanent)
        let report = root.validate()
        let captive = report.problems.contains { problem in
            guard case .captiveDependency = problem.kind else { return false }
            return problem.path.last?.serviceType == Service.self
        }
        let expected = lifetime == .weak || lifetime == .perContainer
        #expect(captive == expected, "\(context): captive reported: \(report)")
    }
}

@Suite struct ServiceShapeMatrixTests {
    @Test(arguments: Shapes.names, ShapeLifetime.allCases)
    func everyShapeKeepsItsLifetimesRules(shape: String, lifetime: ShapeLifetime) async throws {
        func run<Shape: ServiceShape>(_: Shape.Type) async throws {
            for engine in ShapeEngine.allCases {
                let shapeCase = ShapeCase<Shape>(lifetime: lifetime, engine: engine)
                try await shapeCase.run()
                try await ShapeCase<Shape>(lifetime: lifetime, engine: engine).runWeakRelease()
                try await ShapeCase<Shape>(lifetime: lifetime, engine: engine).runLeakTracking()
                ShapeCase<Shape>(lifetime: lifetime, engine: engine).runCaptiveCheck()
            }
        }
        try await run(Shapes.named(shape))
    }
}
