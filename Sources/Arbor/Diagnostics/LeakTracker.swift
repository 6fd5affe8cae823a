internal import ArborPrimitives

/// Finds the objects a test resolved that are still alive when they should be gone — typically a retain cycle.
///
/// ```swift
/// let tracker = LeakTracker(container)      // from now on, records what factories create
/// do {
///     let screen = try container.resolve(FeedScreen.self)
///     screen.show()
/// }                                         // the test's references are gone
/// let report = tracker.check()
/// #expect(report.isClean, "\(report)")
/// ```
///
/// A tracker records every class instance that factories create in resolutions that start in its container or in a
/// descendant, from the moment it is made, on any thread, including instances created in `initCompleted` hooks.
/// ``check()`` lists the recorded instances that are still alive, apart from those a container holds for good (see
/// ``check()``), and for each one the stored properties that point at other leaked instances, so a strong parent ↔
/// child cycle reads as `Parent.child → Child` and `Child.parent → Parent`. Reflection cannot tell a `weak` property
/// from a strong one, so a weak back reference to a leaked instance is listed too: the report is a map of who points at
/// whom, and the strong edges among them hold the cycle.
///
/// A tracker made on a child sees only the child's subtree; several trackers can watch the same container.
/// A tracker is a ``ResolutionObserver`` of the container (it sees ``ResolutionObserver/instanceBuilt(_:)``), added
/// when it is made and removed when it is deinitialised. ArborTesting wraps this in one-line assertions.
public final class LeakTracker: @unchecked Sendable {
    /// The container whose subtree the tracker watches.
    public let container: Container
    private let records = Protected.make(Records())
    /// What the container holds: a weak reference back, so dropping the tracker stops the tracking.
    private let recorder: Recorder

    /// How many of the last records a new one is compared with (``append(_:)``).
    private static let lookBack = 4096

    private struct Records {
        var all: [Record] = []
        /// Every record ever made, including those pruned since.
        var total = 0
        /// Records are pruned of dead instances when their count reaches this.
        var pruneAt = 256
    }

    struct Record {
        weak var object: AnyObject?
        let key: ServiceKey
        let scope: ObjectScope
        let path: [ServiceKey]
        let resolve: ResolveID
        /// The registration that holds the instance, if it is one whose instances are not a leak while it holds them.
        let holder: Holder?
        /// The nearest instance above it in the same resolve's path that such a registration holds: it was built for
        /// that one, which keeps it (a permanent service's graph-scoped dependencies, say).
        var builtFor: Holder?
    }

    /// A registration's hold on an instance, checked when the tracker checks.
    struct Holder {
        weak var object: AnyObject?
        weak var storage: InstanceStorage?
        /// The container that owns `storage`: checking the storage needs its lock, which lives as long as it.
        weak var owner: Container?

        var holds: Bool {
            guard let object, let storage, let owner else { return false }
            return withExtendedLifetime(owner) { storage.holds(object) }
        }
    }

    /// Starts recording what factories create in resolutions that start in `container` or a descendant.
    public init(_ container: Container) {
        self.container = container
        recorder = Recorder()
        recorder.tracker = self
        container.addObserver(recorder)
    }

    deinit {
        container.removeObserver(recorder)
    }

    /// The observer the container holds for a tracker.
    private final class Recorder: ResolutionObserver, @unchecked Sendable {
        weak var tracker: LeakTracker?

        func instanceBuilt(_ event: InstanceBuilt) {
            tracker?.record(event)
        }
    }

    /// How many class instances the tracker has recorded that are still alive.
    public var liveInstanceCount: Int {
        records.withLock { $0.all.reduce(0) { $0 + ($1.object == nil ? 0 : 1) } }
    }

    /// Lists the recorded instances that are still alive, apart from those a container holds for good.
    ///
    /// Call it after the code under test has dropped its references. Not leaks, while their container holds them:
    /// - the instances of permanent (and other strong) registrations, and per-container ones;
    /// - what such an instance was built with: the graph-scoped dependencies its factory resolved, and what its
    ///   `initCompleted` hooks resolved, which it keeps, whichever resolve built it first;
    /// - the instances of a weak registration of a container outside the tracked one's subtree (the app's), which
    ///   others — another test, running in parallel — share.
    ///
    /// An instance that its registration no longer keeps (after `resetObjectScope`, or once its container closed)
    /// but that is still alive is a leak, and so is what it was built with.
    public func check() -> LeakReport {
        let (snapshot, total) = records.withLock { ($0.all, $0.total) }
        var alive: [(record: Record, object: AnyObject)] = []
        for record in snapshot {
            guard let object = record.object else { continue }
            if record.holder?.holds == true || record.builtFor?.holds == true { continue }
            alive.append((record, object))
        }
        var leakedKeys: [ObjectIdentifier: Int] = [:]
        for (position, item) in alive.enumerated() where leakedKeys[ObjectIdentifier(item.object)] == nil {
            leakedKeys[ObjectIdentifier(item.object)] = position
        }
        var leaks: [Leak] = []
        for (position, item) in alive.enumerated() where leakedKeys[ObjectIdentifier(item.object)] == position {
            let references = Self.references(from: item.object).compactMap { property, target -> Leak.Reference? in
                guard let index = leakedKeys[ObjectIdentifier(target)] else { return nil }
                return Leak.Reference(
                    property: property, targetKey: alive[index].record.key,
                    targetTypeName: String(describing: type(of: target)))
            }
            leaks.append(
                Leak(
                    key: item.record.key, scope: item.record.scope, path: item.record.path,
                    typeName: String(describing: type(of: item.object)), references: references,
                    closureProperties: Self.closureProperties(of: item.object)))
        }
        return LeakReport(leaks: leaks, trackedCount: total)
    }

    /// Forgets everything recorded so far; recording goes on.
    public func reset() {
        records.withLock { $0 = Records() }
    }

    // MARK: Recording; called by resolutions

    private func record(_ event: InstanceBuilt) {
        guard let resolved = object(in: event.instance) else { return }
        var holder: Holder?
        if let storage = event.storage, let keeper = event.keeper {
            // A permanent (or strong custom-scope) instance, or a per-container one, while its container keeps it.
            // A weak one only when a container outside the tracked subtree holds it: the app's, which other tests
            // share, so one test's reference is not another's leak.
            if event.scope.storage != .weak || !isInTrackedSubtree(keeper) {
                holder = Holder(object: resolved, storage: storage, owner: keeper)
            }
        }
        append(
            Record(
                object: resolved, key: event.key, scope: event.scope, path: event.path, resolve: event.resolve,
                holder: holder))
    }

    private func isInTrackedSubtree(_ keeper: Container) -> Bool {
        sequence(first: keeper, next: \.parent).contains { $0 === container }
    }

    private func append(_ record: Record) {
        records.withLock { records in
            var record = record
            // What a held instance was built with: its factory's dependencies come before it (their factories return
            // first), what its hooks resolve after it. Among the last records only, so that recording stays quick
            // in a long test: a resolve's records are together, but for those of resolves running at the same time.
            for index in records.all.indices.suffix(Self.lookBack).reversed()
            where records.all[index].resolve == record.resolve {
                let other = records.all[index]
                if let holder = record.holder, other.builtFor == nil, other.path.starts(below: record.path) {
                    records.all[index].builtFor = holder
                } else if record.builtFor == nil, let holder = other.holder, record.path.starts(below: other.path) {
                    record.builtFor = holder
                }
            }
            records.all.append(record)
            records.total += 1
            if records.all.count >= records.pruneAt {
                records.all.removeAll { $0.object == nil }
                records.pruneAt = max(256, records.all.count * 2)
            }
        }
    }

    // MARK: Reflection

    /// The class instances `object`'s stored properties point at, with the property names, found by `Mirror`:
    /// direct and optional references, and the elements of arrays, sets and dictionaries.
    static func references(from object: AnyObject) -> [(property: String, target: AnyObject)] {
        var found: [(String, AnyObject)] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        let typeName = String(describing: type(of: object))
        while let current = mirror {
            for child in current.children {
                guard let label = child.label else { continue }
                collect(child.value, path: "\(typeName).\(Self.propertyName(label))", into: &found, depth: 0)
            }
            mirror = current.superclassMirror
        }
        return found
    }

    /// The stored properties of `object` that hold a closure (or an optional one), as `Type.property`.
    static func closureProperties(of object: AnyObject) -> [String] {
        var found: [String] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        let typeName = String(describing: type(of: object))
        while let current = mirror {
            for child in current.children {
                guard let label = child.label else { continue }
                // A function type prints as `(…) -> …`, and so does an optional one inside `Optional<…>`; a `nil`
                // one holds nothing.
                let value = Mirror(reflecting: child.value)
                if value.displayStyle == .optional, value.children.isEmpty { continue }
                if String(describing: type(of: child.value)).contains(" -> ") {
                    found.append("\(typeName).\(Self.propertyName(label))")
                }
            }
            mirror = current.superclassMirror
        }
        return found
    }

    private static func collect(_ value: Any, path: String, into found: inout [(String, AnyObject)], depth: Int) {
        if let reference = object(in: value) {
            found.append((path, reference))
            return
        }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            if let wrapped = mirror.children.first { collect(wrapped.value, path: path, into: &found, depth: depth) }
        case .collection, .set, .dictionary:
            guard depth == 0 else { break }
            for (index, element) in mirror.children.enumerated() {
                collect(element.value, path: "\(path)[\(index)]", into: &found, depth: depth + 1)
            }
        case .tuple:
            // A dictionary's elements are (key, value) pairs.
            guard depth <= 1 else { break }
            for element in mirror.children {
                collect(element.value, path: path, into: &found, depth: depth + 1)
            }
        default:
            break
        }
    }

    /// Lazy stored properties appear to `Mirror` as `$__lazy_storage_$_name`.
    private static func propertyName(_ label: String) -> String {
        let lazyPrefix = "$__lazy_storage_$_"
        return label.hasPrefix(lazyPrefix) ? String(label.dropFirst(lazyPrefix.count)) : label
    }
}

extension [ServiceKey] {
    /// Whether this path goes through `path` and further: it is a service built under the one at the end of `path`.
    fileprivate func starts(below path: [ServiceKey]) -> Bool {
        count > path.count && starts(with: path)
    }
}
