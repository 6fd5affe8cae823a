/// Memory for one resolved instance, in the caller's frame: a resolve that may not succeed writes its instance
/// straight there, and the caller takes it out (measured: returning it through a local was a copy, a retain and a
/// release).
///
/// ```swift
/// let service = try ResultSlot.with(Engine.self) { slot in
///     if try quickPath(into: slot) { return slot.take() }
///     return try generalPath()
/// }
/// ```
///
/// Safe because: a slot exists only inside ``with(_:_:)``, whose temporary allocation holds one `Service` for as
/// long as the body runs, and nothing stores a slot. Whoever reports that it initialised the slot (returns `true`)
/// did so exactly once, and on every path that throws after initialising it deinitialises it again; the caller
/// then calls ``take()`` exactly once, only after such a `true`.
@usableFromInline
struct ResultSlot<Service> {
    @usableFromInline let address: UnsafeMutablePointer<Service>

    @inlinable
    init(address: UnsafeMutablePointer<Service>) {
        self.address = address
    }

    /// Runs `body` with an uninitialised slot for a `Service`.
    @inlinable
    @inline(__always)
    static func with<Result>(_: Service.Type, _ body: (ResultSlot) throws -> Result) rethrows -> Result {
        try withUnsafeTemporaryAllocation(of: Service.self, capacity: 1) { buffer in
            try body(ResultSlot(address: buffer.baseAddress!))
        }
    }

    /// Writes the instance into the uninitialised slot.
    @inlinable
    @inline(__always)
    func initialize(to instance: consuming Service) {
        address.initialize(to: instance)
    }

    /// Destroys the instance `initialize(to:)` wrote, when the resolve fails after all.
    @inlinable
    func discard() {
        address.deinitialize(count: 1)
    }

    /// Moves the instance out; the slot is uninitialised again.
    @inlinable
    @inline(__always)
    func take() -> Service {
        address.move()
    }
}
