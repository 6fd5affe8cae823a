public import CArborSupport

/// Numbers that are never handed out twice in a process: each change to a container's registrations gets one,
/// so a cached look-up can never be mistaken for one of another container, even one at a recycled address.
///
/// Safe because: the counter is one C global word (`carbor_unique_number_counter`, CArborSupport.c) that lives as
/// long as the process, and every number comes from one atomic fetch-and-add of it, so no two calls, on any threads,
/// see the same value (the word would have to wrap around, after 2⁶³ numbers). A C global, not a Swift `static let`:
/// Swift reaches it directly, where a `static let` is a `swift_once` check and an accessor call on every use: six a
/// request on the Hummingbird notes server (measured: `request_scope` 15,538 → 15,341 instructions).
@usableFromInline
package enum UniqueNumber {
    /// The smallest number `next()` ever returns. 0 and 1 mean "none" and "any" where these numbers are published
    /// (`Reclamation`).
    package static let first = 2

    @inlinable
    package static func next() -> Int {
        carbor_next_unique_number()
    }
}
