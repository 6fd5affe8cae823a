/// A value in memory of its own, read and changed in place without Swift's dynamic exclusivity checks.
///
/// A class's stored `var`s are checked at run time (`swift_beginAccess`) on every access that the compiler cannot
/// prove exclusive. State that only one thread ever touches, at one level of the call stack at a time, pays for
/// checks that can never fail; a cell keeps such state instead (measured: the checks were a quarter of the cost of
/// resolving a transient service without dependencies).
///
/// ```swift
/// let state = UncheckedCell(State())
/// state.value.depth += 1
/// state.deallocate()
/// ```
///
/// Safe because — and only as long as — the owner (1) uses the cell from one thread at a time, (2) never holds two
/// overlapping accesses to `value` (no `inout` of `state.value` passed while another access to it runs), and
/// (3) calls `deallocate()` exactly once, after the last access. The cell is a pointer: copies share the value.
@usableFromInline
package struct UncheckedCell<Value> {
    @usableFromInline let pointer: UnsafeMutablePointer<Value>

    /// A cell holding `value`.
    @inlinable
    package init(_ value: Value) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: value)
    }

    /// The value, read and changed in place.
    @inlinable
    package var value: Value {
        @inline(__always) unsafeAddress { UnsafePointer(pointer) }
        @inline(__always) nonmutating unsafeMutableAddress { pointer }
    }

    /// Destroys the value and frees its memory. The cell must not be used after this.
    @inlinable
    package func deallocate() {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}
