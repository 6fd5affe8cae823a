/// Numbers that are never handed out twice in a process: each change to a container's registrations gets one,
/// so a cached look-up can never be mistaken for one of another container, even one at a recycled address.
///
/// Safe because: the counter is one ``AtomicWord`` that is never deallocated, and every number comes from one
/// atomic `fetchAdd(1)`, so no two calls, on any threads, see the same value (the word would have to wrap
/// around, after 2⁶³ numbers).
@usableFromInline
package enum UniqueNumber {
    /// Starts at 2: 0 and 1 mean "none" and "any" where these numbers are published (`Reclamation`).
    @usableFromInline static let counter = AtomicWord(2)

    /// The smallest number `next()` ever returns.
    package static let first = 2

    @inlinable
    package static func next() -> Int {
        counter.fetchAdd(1)
    }
}
