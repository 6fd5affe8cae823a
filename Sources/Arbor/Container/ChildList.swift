internal import ArborPrimitives

/// A container's live children, linked through the children themselves (``SiblingLinks``): adding or removing one
/// allocates nothing, hashes nothing, and makes no weak reference.
///
/// Measured: a dictionary of weak references cost each child 74 heap bytes (its entry, and the side table a weak
/// reference gives its object), and the side table moved every later retain and release of the child to the
/// runtime's slower path.
///
/// Guarded by the lock of the list in the parent's ``ChildStripes``: the list keeps the first child, and each child
/// keeps its neighbours in its `siblings`, which only that lock guards. A child links itself in its `init` and
/// unlinks itself in its `deinit`, both under that lock, so while the lock is held every linked child's memory is
/// valid — but its deinit may have begun, and it may be waiting for the lock to unlink itself. `live()` therefore
/// retains only children whose deinit has not begun (`retainedIfAlive()`), the way a weak reference would.
struct ChildList {
    /// Unretained in every build: a strong reference would keep the child alive, and a cycle with its `parent`.
    private var first: Unretained<Container>?

    var isEmpty: Bool { first == nil }

    /// Links `child` first. Call with the parent's lock held, from the child's `init`.
    mutating func insert(_ child: Container) {
        let reference = Unretained(child, retainedInChecks: false)
        if let first {
            first.withObject { $0.siblings.previous = reference }
            child.siblings.next = first
        }
        first = reference
    }

    /// Unlinks `child`. Call with the parent's lock held, from the child's `deinit`.
    mutating func remove(_ child: Container) {
        let links = child.siblings
        if let previous = links.previous {
            previous.withObject { $0.siblings.next = links.next }
        } else {
            internalInvariant(first?.refers(to: child) == true, "a child without a previous sibling is not first")
            first = links.next
        }
        links.next?.withObject { $0.siblings.previous = links.previous }
        child.siblings = SiblingLinks()
    }

    /// How many children are linked, counting any whose deinit has begun: for the tests of the bookkeeping. Call with
    /// the parent's lock held.
    var count: Int {
        var count = 0
        var next = first
        while let current = next {
            count += 1
            next = current.withObject { $0.siblings.next }
        }
        return count
    }

    /// The children whose deinit has not begun, retained. Call with the parent's lock held.
    func live() -> [Container] {
        var children: [Container] = []
        var next = first
        while let current = next {
            if let child = current.retainedIfAlive() { children.append(child) }
            next = current.withObject { $0.siblings.next }
        }
        return children
    }
}

/// A child's neighbours in its parent's ``ChildList``. Guarded by the parent's lock.
struct SiblingLinks {
    var previous: Unretained<Container>?
    var next: Unretained<Container>?
    /// Which of the parent's lists (``ChildStripes``) the container is in.
    var stripe = 0
}
