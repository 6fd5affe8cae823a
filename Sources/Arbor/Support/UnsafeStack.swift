/// A growable stack in memory it manages itself, for the per-resolution bookkeeping that every resolve touches.
///
/// An `Array` checks that its buffer is uniquely referenced on every append and retains the buffer when it is
/// read through a class; measured, that was a tenth of a nested resolve. The stack belongs to one resolution,
/// which is used from one thread at a time, so none of that is needed. Free it with `deallocate()`.
struct UnsafeStack<Element> {
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 16) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    var isEmpty: Bool { count == 0 }

    @inline(__always)
    mutating func push(_ element: consuming Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
    }

    @inline(__always)
    @discardableResult
    mutating func pop() -> Element {
        count -= 1
        return (base + count).move()
    }

    subscript(index: Int) -> Element {
        get { base[index] }
        nonmutating set { base[index] = newValue }
    }

    /// The elements, oldest first.
    var elements: UnsafeMutableBufferPointer<Element> {
        UnsafeMutableBufferPointer(start: base, count: count)
    }

    mutating func removeAll() {
        base.deinitialize(count: count)
        count = 0
    }

    func deallocate() {
        base.deinitialize(count: count)
        base.deallocate()
    }

    private mutating func grow() {
        capacity *= 2
        let larger = UnsafeMutablePointer<Element>.allocate(capacity: capacity)
        larger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = larger
    }
}
