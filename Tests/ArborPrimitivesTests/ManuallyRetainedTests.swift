import ArborPrimitives
import Testing

private final class MRCanary {
    let value: Int
    let onDeinit: () -> Void
    init(_ value: Int, onDeinit: @escaping () -> Void) {
        self.value = value
        self.onDeinit = onDeinit
    }
    deinit { onDeinit() }
}

@Suite struct ManuallyRetainedTests {
    @Test func keepsTheObjectAliveUntilReleasedExactlyOnce() {
        var released = 0
        var held: ManuallyRetained<MRCanary>?
        do {
            held = ManuallyRetained(MRCanary(7) { released += 1 })
        }
        // The only reference is the manual one.
        #expect(released == 0)
        #expect(held?.withObject { $0.value } == 7)
        #expect(held?.object.value == 7)
        held?.release()
        held = nil
        #expect(released == 1)
    }

    @Test func aBorrowDoesNotChangeWhoKeepsTheObject() {
        weak var observed: MRCanary?
        let held: ManuallyRetained<MRCanary>
        do {
            let object = MRCanary(1) {}
            observed = object
            held = ManuallyRetained(object)
        }
        for _ in 0..<3 { _ = held.withObject { $0.value } }
        #expect(observed != nil)
        held.release()
        #expect(observed == nil)
    }
}
