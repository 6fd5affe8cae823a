// Public: `isReached` is inlined into Arbor, so the C function it calls must be visible there.
public import CArborSupport

/// Where the calling thread's stack ends, less a margin: a resolve checks its own frame against it before it goes a
/// level deeper, and throws instead of overflowing the stack.
///
/// ```swift
/// let limit = StackLimit.ofCurrentThread(margin: 32 * 1024)
/// if limit.isReached { throw … }   // one comparison of the frame's address
/// ```
///
/// The stack's lowest address comes from the system once per thread (Linux `pthread_getattr_np`, Darwin
/// `pthread_get_stackaddr_np`); where it does not tell, the limit is 0 and is never reached. Stacks grow down on every
/// platform Arbor builds for.
@usableFromInline
package struct StackLimit: Sendable {
    /// The lowest address a frame may have; 0 when the system does not tell.
    @usableFromInline package let lowestAddress: UInt

    @inlinable
    package init(lowestAddress: UInt) {
        self.lowestAddress = lowestAddress
    }

    /// The calling thread's stack, less `margin` bytes at its bottom: room for what runs after the check (the next
    /// factory, the error thrown there).
    package static func ofCurrentThread(margin: UInt) -> StackLimit {
        let lowest = UInt(carbor_stack_lowest_address())
        return StackLimit(lowestAddress: lowest == 0 ? 0 : lowest + margin)
    }

    /// Whether the calling function's frame is below the limit: a level deeper could overflow the stack.
    @inlinable
    @inline(__always)
    package var isReached: Bool {
        UInt(carbor_frame_address()) < lowestAddress
    }

    /// How many bytes of stack are left above the limit at the calling function's frame (0 past it, or when the
    /// system does not tell).
    package var bytesLeft: UInt {
        let frame = UInt(carbor_frame_address())
        return lowestAddress == 0 || frame < lowestAddress ? 0 : frame - lowestAddress
    }
}
