/// What ``LeakTracker/check()`` found: the resolved instances that are still alive.
///
/// ```swift
/// let report = tracker.check()
/// if !report.isClean { print(report) }
/// ```
///
/// Printed, a report gives one block per leaked instance:
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
public struct LeakReport: Sendable, CustomStringConvertible {
    /// The leaked instances, in the order they were created (the order their factories returned).
    public let leaks: [Leak]
    /// How many class instances the tracker recorded in all, since it was made or last reset.
    public let trackedCount: Int

    /// Whether no tracked instance is still alive, apart from those a permanent registration keeps.
    public var isClean: Bool { leaks.isEmpty }

    /// The report for a person: a count, then one block per leaked instance, then what to look for.
    public var description: String {
        guard !isClean else {
            return "No resolved instance is still alive (\(trackedCount) tracked)."
        }
        let count = leaks.count == 1 ? "1 resolved instance is" : "\(leaks.count) resolved instances are"
        var lines = ["\(count) still alive (\(trackedCount) tracked):"]
        for leak in leaks {
            lines.append("")
            lines.append(leak.description)
        }
        let cycles = leaks.contains { leak in
            leak.references.contains { reference in
                leaks.contains { other in
                    other.key == reference.targetKey && other.references.contains { $0.targetKey == leak.key }
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
        return lines.joined(separator: "\n")
    }
}

/// One instance a ``LeakTracker`` found alive.
public struct Leak: Sendable, CustomStringConvertible {
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

    /// The leaked type, its scope, the path that created it, and one line per reference to another leak.
    public var description: String {
        var lines = ["\(typeName)\(typeName == "\(key)" ? "" : " as \(key)") (\(scope) scope)"]
        lines.append("  created by: \(ResolutionError.describe(path))")
        for reference in references {
            lines.append("  \(reference.property) → \(reference.targetTypeName)")
        }
        return lines.joined(separator: "\n")
    }
}
