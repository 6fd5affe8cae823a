import ArborPrimitives
import Foundation
import Testing

@Suite struct ThreadIDTests {
    @Test func aThreadHasOneIDAndAnotherRunningThreadAnother() {
        let here = ThreadID.current
        #expect(ThreadID.current == here)
        let done = DispatchSemaphore(value: 0)
        let box = IDBox()
        Thread {
            box.value = ThreadID.current
            box.sameTwice = ThreadID.current == box.value
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(box.value != nil && box.value != here)
        #expect(box.sameTwice)
    }

    @Test func anUnboundIDIsNoThreadsAndTellsNumbersApart() {
        let first = ThreadID.unbound(1)
        #expect(first == ThreadID.unbound(1))
        #expect(first != ThreadID.unbound(2))
        #expect(first != ThreadID.current)
        #expect(ThreadID.unbound(Int.max) != ThreadID.unbound(Int.max - 1))
        #expect(first.isUnbound)
        #expect(!ThreadID.current.isUnbound)
    }
}

private final class IDBox: @unchecked Sendable {
    var value: ThreadID?
    var sameTwice = false
}
