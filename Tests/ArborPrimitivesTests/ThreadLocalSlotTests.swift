import ArborPrimitives
import Foundation
import Testing

/// Records whether it was released, and what the `context` slot held at that moment.
private final class TLObject: @unchecked Sendable {
    let released: DispatchSemaphore
    let slotWhenReleased: TLBox
    init(released: DispatchSemaphore, slotWhenReleased: TLBox) {
        self.released = released
        self.slotWhenReleased = slotWhenReleased
    }
    deinit {
        slotWhenReleased.value = ThreadLocalSlot.context.value
        released.signal()
    }
}

private final class TLPlain {}

private final class TLBox: @unchecked Sendable {
    var value: UnsafeMutableRawPointer?
}

/// Runs `body` on a new thread and waits for it, and for the thread to exit.
private func onNewThread(_ body: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread {
        body()
        done.signal()
    }.start()
    return done.wait(timeout: .now() + 10) == .success
}

/// A pointer made from a number, for slots that only store it.
private func pointer(_ bits: Int) -> UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: bits)! }

private func bits(_ pointer: UnsafeMutableRawPointer?) -> Int { pointer.map { Int(bitPattern: $0) } ?? 0 }

/// Numbers threads hand back, behind a lock.
private final class TLResults: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: Int] = [:]
    subscript(name: String) -> Int? {
        get { lock.withLock { values[name] } }
        set { lock.withLock { values[name] = newValue } }
    }
}

@Suite struct ThreadLocalSlotTests {
    @Test func eachThreadSeesOnlyItsOwnPointer() {
        let results = TLResults()
        let finished = onNewThread {
            ThreadLocalSlot.pooled.set(pointer(0x1000))
            results["inner finished"] =
                onNewThread {
                    results["inner before"] = bits(ThreadLocalSlot.pooled.value)  // another thread's slot: empty
                    ThreadLocalSlot.pooled.set(pointer(0x2000))
                    results["inner after"] = bits(ThreadLocalSlot.pooled.value)
                    ThreadLocalSlot.pooled.set(nil)
                } ? 1 : 0
            results["outer"] = bits(ThreadLocalSlot.pooled.value)  // still its own
            ThreadLocalSlot.pooled.set(nil)
        }
        #expect(finished && results["inner finished"] == 1)
        #expect(results["inner before"] == 0)
        #expect(results["inner after"] == 0x2000)
        #expect(results["outer"] == 0x1000)
    }

    /// The object API: the slot owns what `store` put there, lends it without a retain, tells whether its reference
    /// is the only one, and hands it over with `removeObject`.
    @Test func theSlotOwnsAStoredObjectUntilItIsRemoved() {
        let results = TLResults()
        let finished = onNewThread {
            weak var observed: TLPlain?
            do {
                let object = TLPlain()
                observed = object
                ThreadLocalSlot.pooled.store(object)
            }
            results["kept by the slot"] = observed != nil ? 1 : 0
            guard let lent = ThreadLocalSlot.pooled.object(as: TLPlain.self) else { return }
            results["holds"] = ThreadLocalSlot.pooled.holds(lent) ? 1 : 0
            results["only reference"] = ThreadLocalSlot.pooledHoldsTheOnlyReference(to: lent) ? 1 : 0
            var extra: TLPlain? = lent.object
            results["shared"] = ThreadLocalSlot.pooledHoldsTheOnlyReference(to: lent) ? 0 : 1
            extra = nil
            withExtendedLifetime(extra) {}
            var removed = ThreadLocalSlot.pooled.removeObject(as: TLPlain.self)
            results["empty after removal"] = ThreadLocalSlot.pooled.value == nil ? 1 : 0
            results["removed it"] = removed === observed ? 1 : 0
            removed = nil
            withExtendedLifetime(removed) {}
            results["freed"] = observed == nil ? 1 : 0
            results["nothing more"] = ThreadLocalSlot.pooled.removeObject(as: TLPlain.self) == nil ? 1 : 0
        }
        #expect(finished)
        for name in [
            "kept by the slot", "holds", "only reference", "shared", "empty after removal", "removed it", "freed",
            "nothing more",
        ] {
            #expect(results[name] == 1, "\(name)")
        }
    }

    @Test func thePooledAddressIsWhereThePooledPointerLives() {
        let results = TLResults()
        let finished = onNewThread {
            ThreadLocalSlot.pooled.set(pointer(0x3000))
            results["set"] = bits(ThreadLocalSlot.pooledAddress.load(as: UnsafeMutableRawPointer?.self))
            ThreadLocalSlot.pooled.set(nil)
            results["cleared"] = bits(ThreadLocalSlot.pooledAddress.load(as: UnsafeMutableRawPointer?.self))
        }
        #expect(finished)
        #expect(results["set"] == 0x3000)
        #expect(results["cleared"] == 0)
    }

    @Test func theContextObjectIsReleasedWhenItsThreadExitsWithTheSlotCleared() {
        let released = DispatchSemaphore(value: 0)
        let slotWhenReleased = TLBox()
        slotWhenReleased.value = pointer(0x4000)  // overwritten by the deinit
        let results = TLResults()
        let finished = onNewThread {
            let object = TLObject(released: released, slotWhenReleased: slotWhenReleased)
            let raw = Unmanaged.passUnretained(object).toOpaque()
            ThreadLocalSlot.context.store(object)
            ThreadLocalSlot.releaseContextAtThreadExit()
            results["set"] = bits(ThreadLocalSlot.context.value) == bits(raw) ? 1 : 0
        }
        #expect(finished && results["set"] == 1)
        #expect(released.wait(timeout: .now() + 10) == .success, "the object outlived its thread")
        #expect(slotWhenReleased.value == nil, "the slot still pointed at the object while it was released")
    }
}
