/// A value and the mutex that protects it, in one allocation.
///
/// The value is reached through pointers, so reading it under the lock costs no dynamic exclusivity check: the
/// mutex already guarantees exclusive access. (Measured: a `var` on a class, read inside `withLock`, paid
/// `swift_beginAccess` on every registry look-up.)
///
/// Safe because: the value and the mutex are the header and the one element of a `ManagedBuffer`, which never
/// moves; `make(_:)` initializes the mutex before it returns the buffer, and `deinit` destroys it. The value is
/// reached only through `withLock(_:)`, which holds the mutex for as long as `body` has the value, or between a
/// `lock()` and its `unlock()` for state kept elsewhere. Every pthread return code is checked (``PthreadMutex``).
@usableFromInline
package final class Protected<Value>: ManagedBuffer<Value, PthreadMutex.Raw> {
    @inlinable
    package static func make(_ value: Value) -> Protected<Value> {
        make(with: { value })
    }

    /// A value made in place by `makeValue`: a value that holds references is not copied into the buffer and then
    /// destroyed (measured: for a container's registry, the copy and the destruction were 600 of the 1,500
    /// instructions of `makeChild()`).
    @inlinable
    package static func make(with makeValue: () -> Value) -> Protected<Value> {
        make(with: makeValue, elementsAfterMutex: 0)
    }

    /// The buffer, its value made in place and its mutex initialised, with room for `elementsAfterMutex` more elements.
    @inlinable
    static func make(with makeValue: () -> Value, elementsAfterMutex: Int) -> Protected<Value> {
        let buffer = unsafeDowncast(
            Self.create(minimumCapacity: 1 + elementsAfterMutex) { _ in makeValue() }, to: Protected<Value>.self)
        buffer.withUnsafeMutablePointerToElements { PthreadMutex.initialize($0) }
        return buffer
    }

    /// `make(with:)`, and four atomic words after the mutex in the same allocation, set to `words`: what would be an
    /// allocation of its own (``AtomicWord/init(_:second:third:fourth:)``) for an object made often, such as a
    /// request's container (measured there: one malloc and one free, about 215 instructions, fewer a request).
    /// Reach them with ``words``.
    @inlinable
    package static func make(with makeValue: () -> Value, words: (Int, Int, Int, Int)) -> Protected<Value> {
        let buffer = make(with: makeValue, elementsAfterMutex: wordElements)
        buffer.withUnsafeMutablePointerToElements { mutex in
            let first = UnsafeMutableRawPointer(mutex + 1).bindMemory(to: Int.self, capacity: 4)
            first.initialize(to: words.0)
            (first + 1).initialize(to: words.1)
            (first + 2).initialize(to: words.2)
            (first + 3).initialize(to: words.3)
        }
        return buffer
    }

    /// How many elements the four words of `make(with:words:)` take after the mutex's.
    @usableFromInline
    static var wordElements: Int {
        let stride = MemoryLayout<PthreadMutex.Raw>.stride
        return (4 * MemoryLayout<Int>.stride + stride - 1) / stride
    }

    /// The first of the four words of a buffer made with `make(with:words:)` (``AtomicWord/second``, ``AtomicWord/third``
    /// and ``AtomicWord/fourth`` are the others), valid while the buffer lives; its memory is freed with the buffer.
    /// Only for a buffer made with `make(with:words:)`.
    @inlinable
    @inline(__always)
    package var words: AtomicWord {
        internalInvariant(capacity >= 1 + Self.wordElements, "words of a Protected made without them")
        return withUnsafeMutablePointerToElements { mutex in
            AtomicWord(inside: UnsafeMutableRawPointer(mutex + 1).assumingMemoryBound(to: Int.self))
        }
    }

    deinit {
        withUnsafeMutablePointerToElements { PthreadMutex.destroy($0) }
    }

    /// Runs `body` with the lock held and the value open for change.
    @inlinable
    @inline(__always)
    package func withLock<Result: ~Copyable>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { value, mutex in
            PthreadMutex.lock(mutex)
            defer { PthreadMutex.unlock(mutex) }
            return try body(&value.pointee)
        }
    }

    /// Takes the lock, for state that lives elsewhere but is guarded by this mutex. Pair with `unlock()`.
    @inlinable
    @inline(__always)
    package func lock() {
        withUnsafeMutablePointerToElements { PthreadMutex.lock($0) }
    }

    /// Runs `body` with the value, for a caller that already holds the lock (after `lock()`, or inside a
    /// `withLock` on state kept elsewhere), where taking the lock again would deadlock.
    @inlinable
    @inline(__always)
    package func withValueAssumingLocked<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointerToHeader { try body(&$0.pointee) }
    }

    @inlinable
    @inline(__always)
    package func unlock() {
        withUnsafeMutablePointerToElements { PthreadMutex.unlock($0) }
    }
}
