import Testing

@testable import Arbor

private final class RSObject {
    let value: Int
    init(_ value: Int) { self.value = value }
}

/// The result slot a resolve with runtime arguments writes its instance into: what is written is what is taken, once,
/// and a discarded instance is released.
@Suite struct ResultSlotTests {
    @Test func whatIsWrittenIsTakenOut() {
        let text = ResultSlot.with(String.self) { slot in
            slot.initialize(to: "built")
            return slot.take()
        }
        #expect(text == "built")
        let pair = ResultSlot.with((Int, [String]).self) { slot in
            slot.initialize(to: (3, ["a", "b"]))
            return slot.take()
        }
        #expect(pair.0 == 3 && pair.1 == ["a", "b"])
    }

    @Test func theTakenObjectIsKeptOnlyByTheCallerAndADiscardedOneIsReleased() {
        weak var observed: RSObject?
        var taken: RSObject? = ResultSlot.with(RSObject.self) { slot in
            let object = RSObject(1)
            observed = object
            slot.initialize(to: object)
            return slot.take()
        }
        #expect(taken?.value == 1)
        taken = nil
        #expect(observed == nil, "the slot kept a reference")
        ResultSlot.with(RSObject.self) { slot in
            let object = RSObject(2)
            observed = object
            slot.initialize(to: object)
            slot.discard()
        }
        #expect(observed == nil, "discard did not release the instance")
    }
}
