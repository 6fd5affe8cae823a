// Public: `address` is inlined into Arbor, so the C function it calls must be visible there.
public import CArborSupport

/// The task running on the calling thread, as an address to compare: what tells an `async` resolution whether a
/// resolve through it comes from its own task.
///
/// ```swift
/// let owner = CurrentTask.address          // when the resolution begins
/// if CurrentTask.address == owner { … }    // later: the same task?
/// ```
///
/// It is the identity `withUnsafeCurrentTask` hands out, read with the concurrency runtime's own entry point
/// (`swift_task_getCurrent`, part of its stable ABI since Swift 5.5): the public API's resilient wrapper is copied and
/// compared through value witnesses (measured: 900 instructions a comparison, on every nested `async` resolve). The
/// tests check that the two agree, so a change in the runtime fails loudly.
@usableFromInline
package enum CurrentTask {
    /// The running task's address, or `nil` outside any task. Only compared, never dereferenced.
    @inlinable
    @inline(__always)
    package static var address: UnsafeRawPointer? {
        carbor_current_task().map { UnsafeRawPointer($0) }
    }
}
