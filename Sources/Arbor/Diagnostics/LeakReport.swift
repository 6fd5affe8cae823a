/// What ``LeakTracker/check()`` found: the resolved instances that are still alive.
///
/// ```swift
/// let report = tracker.check()
/// if !report.isClean { print(report) }
/// ```
///
/// Printed, a report gives one block per kind of leaked instance:
///
/// ```text
/// 2 resolved instances are still alive (4 tracked):
///
/// Child (graph scope)
///   created by: Parent → Child
///   Child.parent → Parent
///
/// Parent (graph scope)
///   created by: Parent
///   Parent.child → Child
///
/// Objects that point at each other form a retain cycle unless one side of each pair is weak: make one side weak.
/// ```
///
/// Identical leaks — the same type, scope, creation path and references, such as one per request of a test that sent
/// four hundred — share one block, counted (`400 × Cart (graph scope)`), and the report prints the
/// ``printedGroupLimit`` largest groups, then how many more there are. In code, ``groups`` has every group and
/// ``leaks`` every instance.
public struct LeakReport: Sendable, CustomStringConvertible {
    /// The leaked instances, in the order they were created (the order their factories returned).
    public let leaks: [Leak]
    /// How many class instances the tracker recorded in all, since it was made or last reset.
    public let trackedCount: Int

    /// Leaks that are alike: the same type, scope, creation path and references.
    public struct Group: Sendable {
        /// One of them: they differ only in which instance they are.
        public let leak: Leak
        /// How many there are.
        public let count: Int
    }

    /// How many groups the description prints before it says how many more there are.
    public static let printedGroupLimit = 20

    init(leaks: [Leak], trackedCount: Int) {
        self.leaks = leaks
        self.trackedCount = trackedCount
    }

    /// Whether no tracked instance is still alive, apart from those that are not leaks (``LeakTracker/check()``).
    public var isClean: Bool { leaks.isEmpty }

    /// The leaks, alike ones together: the largest groups first, groups of one size in the order their first leak was
    /// created.
    public var groups: [Group] {
        var order: [Leak] = []
        var counts: [Leak: Int] = [:]
        for leak in leaks {
            if counts[leak] == nil { order.append(leak) }
            counts[leak, default: 0] += 1
        }
        let groups = order.map { Group(leak: $0, count: counts[$0]!) }
        // A stable sort: equal counts keep the order of creation.
        return groups.enumerated().sorted { ($0.element.count, -$0.offset) > ($1.element.count, -$1.offset) }
            .map(\.element)
    }

    /// The report for a person: a count, then one block per group of alike leaks (the largest
    /// ``printedGroupLimit``), then what to look for.
    public var description: String {
        guard !isClean else {
            return "No resolved instance is still alive (\(trackedCount) tracked)."
        }
        let groups = groups
        let count = leaks.count == 1 ? "1 resolved instance is" : "\(leaks.count) resolved instances are"
        let grouping =
            groups.count == leaks.count
            ? "" : ", in \(groups.count) group\(groups.count == 1 ? "" : "s") of alike instances"
        var lines = ["\(count) still alive (\(trackedCount) tracked)\(grouping):"]
        // Without alike leaks, the order of creation; with some, the largest groups first.
        let shown = groups.count < leaks.count ? groups : leaks.map { Group(leak: $0, count: 1) }
        for group in shown.prefix(Self.printedGroupLimit) {
            lines.append("")
            lines.append(group.count == 1 ? group.leak.description : "\(group.count) × \(group.leak.description)")
        }
        if shown.count > Self.printedGroupLimit {
            let rest = shown.dropFirst(Self.printedGroupLimit)
            let instances = rest.reduce(0) { $0 + $1.count }
            lines.append("")
            lines.append(
                "… and \(rest.count) more group\(rest.count == 1 ? "" : "s") (\(instances) instance"
                    + "\(instances == 1 ? "" : "s")): the report's `groups` has every group, its `leaks` every instance."
            )
        }
        let cycles = groups.contains { group in
            group.leak.references.contains { reference in
                groups.contains { other in
                    other.leak.key == reference.targetKey
                        && other.leak.references.contains { $0.targetKey == group.leak.key }
                }
            }
        }
        lines.append("")
        if cycles {
            lines.append("Objects that point at each other form a retain cycle unless one side of each pair is weak:")
            lines.append("make one side weak. (Weak properties are listed too; reflection cannot tell them apart.)")
        } else {
            lines.append(
                "Something outside these objects still holds them: a global, a cache, a closure or a test variable.")
        }
        let closures = shown.prefix(Self.printedGroupLimit).flatMap(\.leak.closureProperties)
        if !closures.isEmpty {
            let names =
                closures.count == 1
                ? closures[0] : "\(closures.dropLast().joined(separator: ", ")) and \(closures.last!)"
            lines.append(
                "\(names) hold\(closures.count == 1 ? "s" : "") a closure: one that captures its own object strongly "
                    + "(`self`) is a retain cycle too. Capture it weakly: `{ [weak self] in … }`.")
        }
        return lines.joined(separator: "\n")
    }
}

/// One instance a ``LeakTracker`` found alive.
public struct Leak: Sendable, Hashable, CustomStringConvertible {
    /// A stored property of the leaked instance that points at another leaked instance.
    public struct Reference: Sendable, Hashable {
        /// `Type.property`, with `[index]` for an element of a collection.
        public let property: String
        /// The key the other instance was resolved under.
        public let targetKey: ServiceKey
        /// The other instance's dynamic type.
        public let targetTypeName: String
    }

    /// The key the instance was resolved under.
    public let key: ServiceKey
    /// The scope of its registration.
    public let scope: ObjectScope
    /// The path of the resolution that created it, outermost first, ending with ``key``.
    public let path: [ServiceKey]
    /// The instance's dynamic type, which may be a subclass or a conformer of ``key``'s type.
    public let typeName: String
    /// The stored properties that point at other leaked instances.
    public let references: [Reference]
    /// The stored properties that hold a closure, `Type.property`: one that captures the instance strongly (`self`)
    /// keeps it alive, a retain cycle that reflection cannot see into.
    public let closureProperties: [String]

    /// The leaked type, its scope, the path that created it, and one line per reference to another leak.
    public var description: String {
        var lines = ["\(typeName)\(typeName == "\(key)" ? "" : " as \(key)") (\(scope) scope)"]
        lines.append("  created by: \(ResolutionError.describe(path))")
        for reference in references {
            lines.append("  \(reference.property) → \(reference.targetTypeName)")
        }
        for property in closureProperties {
            lines.append("  \(property) holds a closure")
        }
        return lines.joined(separator: "\n")
    }
}
