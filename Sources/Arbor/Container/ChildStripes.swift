internal import ArborPrimitives

/// A parent container's live children, in a few lists (``ChildList``) each behind a lock of its own
/// (``Striped``): a child joins the list of the thread that makes it and leaves it in its `deinit`, so threads that
/// make and end children of one parent at once — a server's requests — take different locks on different cache
/// lines. Made with the parent's first child; a container that never has one has none.
///
/// What a new child inherits — whether the parent is closed, and what watches it — is kept here too, and changed
/// only with every list's lock held (`close()`, `changeObservers`): a child reads it under its own list's lock while
/// it joins, so a `close()` or an observer added to the parent either happened before, and is inherited, or comes
/// after, and finds the child among the children.
final class ChildStripes {
    private let lists = Striped { ChildList() }
    /// Guarded by every list's lock for writing, by any one for reading.
    private var isClosed: Bool
    private var diagnostics: Diagnostics?

    init(isClosed: Bool, diagnostics: Diagnostics?) {
        self.isClosed = isClosed
        self.diagnostics = diagnostics
    }

    /// Links `child` in the list of the calling thread, and, under the same lock, hands `inherit` what the child
    /// inherits. Returns the list, which `remove` needs.
    @inline(__always)
    func insert(_ child: Container, inherit: (_ isClosed: Bool, _ diagnostics: Diagnostics?) -> Void) -> Int {
        let stripe = lists.stripe(for: .current)
        lists.withLock(stripe: stripe) { list in
            list.insert(child)
            inherit(isClosed, diagnostics)
        }
        return stripe
    }

    /// Unlinks `child` from the list it joined.
    @inline(__always)
    func remove(_ child: Container, stripe: Int) {
        lists.withLock(stripe: stripe) { $0.remove(child) }
    }

    /// The children whose deinit has not begun.
    func live() -> [Container] {
        var children: [Container] = []
        for stripe in 0..<Striped<ChildList>.count {
            lists.withLock(stripe: stripe) { children += $0.live() }
        }
        return children
    }

    /// How many children are linked: for tests.
    var count: Int {
        var count = 0
        for stripe in 0..<Striped<ChildList>.count {
            lists.withLock(stripe: stripe) { count += $0.count }
        }
        return count
    }

    /// Marks the parent closed for children made from now on, and returns the live ones.
    func close() -> [Container] {
        changeInherited { isClosed = true }
    }

    /// Gives children made from now on `diagnostics`, and returns the live ones.
    func setDiagnostics(_ diagnostics: Diagnostics?) -> [Container] {
        changeInherited { self.diagnostics = diagnostics }
    }

    /// Makes `change` to what new children inherit with every list's lock held, and returns the live children.
    private func changeInherited(_ change: () -> Void) -> [Container] {
        lists.withEveryLock { forEachList in
            change()
            var children: [Container] = []
            forEachList { children += $0.live() }
            return children
        }
    }
}
