/// A growable stack in memory it manages itself, for the per-resolution bookkeeping that every resolve touches.
///
/// An `Array` checks that its buffer is uniquely referenced on every append and retains the buffer when it is
/// read through a class; measured, that was a tenth of a nested resolve. The stack belongs to one resolution,
/// which is used from one thread at a time, so none of that is needed. Free it with `deallocate()`.
///
/// Safe because: exactly the first `count` elements of the buffer are initialized and `count <= capacity`. `push`
/// grows the buffer before it writes past it, `pop` and `removeAll` deinitialize what they drop, and growing moves
/// the elements to the new buffer before freeing the old one. The stack is a value that owns its buffer without a
/// reference count: the owner keeps one copy, mutates only that one, from one thread at a time, and calls
/// `deallocate()` once. Elements are reached by index, so the caller keeps indices below `count` and does not keep
/// `elements` across a `push` (it may move the buffer). `ARBOR_INTERNAL_CHECKS` checks the count and every index.
@usableFromInline
package struct UnsafeStack<Element> {
    @usableFromInline var _base: UnsafeMutablePointer<Element>
    @usableFromInline var _count = 0
    @usableFromInline var capacity: Int

    @inlinable
    package init(capacity: Int = 16) {
        precondition(capacity > 0, "An UnsafeStack needs room for at least one element")
        self.capacity = capacity
        _base = .allocate(capacity: capacity)
    }

    /// The first element's address. It moves when the stack grows.
    @inlinable
    package var base: UnsafeMutablePointer<Element> { _base }

    @inlinable
    package var count: Int { _count }

    @inlinable
    package var isEmpty: Bool { _count == 0 }

    @inlinable
    @inline(__always)
    package mutating func push(_ element: consuming Element) {
        if _count == capacity { grow() }
        (_base + _count).initialize(to: element)
        _count += 1
        checkInvariants()
    }

    @inlinable
    @inline(__always)
    @discardableResult
    package mutating func pop() -> Element {
        internalInvariant(_count > 0, "pop() on an empty UnsafeStack")
        _count -= 1
        return (_base + _count).move()
    }

    @inlinable
    package subscript(index: Int) -> Element {
        get {
            internalInvariant(index >= 0 && index < _count, "UnsafeStack index \(index) out of 0..<\(_count)")
            return _base[index]
        }
        nonmutating set {
            internalInvariant(index >= 0 && index < _count, "UnsafeStack index \(index) out of 0..<\(_count)")
            _base[index] = newValue
        }
    }

    /// The elements, oldest first. Valid until the next `push`, `pop` or `removeAll`.
    @inlinable
    package var elements: UnsafeMutableBufferPointer<Element> {
        UnsafeMutableBufferPointer(start: _base, count: _count)
    }

    /// Deinitializes every element and keeps the buffer for reuse.
    @inlinable
    package mutating func removeAll() {
        _base.deinitialize(count: _count)
        _count = 0
    }

    /// Deinitializes every element and frees the buffer. The stack must not be used after this.
    @inlinable
    package func deallocate() {
        checkInvariants()
        _base.deinitialize(count: _count)
        _base.deallocate()
    }

    /// Specialized with the caller, but kept out of `push`: it runs once per doubling.
    @inlinable
    @inline(never)
    mutating func grow() {
        capacity *= 2
        let larger = UnsafeMutablePointer<Element>.allocate(capacity: capacity)
        larger.moveInitialize(from: _base, count: _count)
        _base.deallocate()
        _base = larger
        checkInvariants()
    }

    @inlinable
    @inline(__always)
    func checkInvariants() {
        internalInvariant(_count >= 0 && _count <= capacity, "UnsafeStack count \(_count) out of 0...\(capacity)")
    }
}
