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

    /// A resolution remembers the thread it is bound to by its ID and keeps that thread's look-up cache; the cache
    /// goes with the thread. If a thread made later had the same ID, a resolution bound to the first one would take
    /// the new thread for it and keep using the freed cache (it did: an `async` resolution, pooled on a thread of the
    /// concurrency runtime's pool that had replaced an exited one, crashed in its first look-up).
    @Test func aThreadMadeAfterAnotherExitedNeverHasItsID() throws {
        var seen: Set<ThreadID> = [ThreadID.current]
        // One after another, each joined before the next starts: the system reuses an exited thread's stack and
        // thread-local storage for the next one.
        for _ in 0..<50 {
            let id = try #require(idOfAThreadThatRanAndExited())
            #expect(!seen.contains(id), "A new thread has the ID of one that ran before it")
            seen.insert(id)
        }
    }

    /// A word that records a thread (a Vapor request scope's maker): never 0, which stands for none, the same for
    /// the same thread, and another thread's differs.
    @Test func aThreadsWordIsNeverZeroAndTellsThreadsApart() throws {
        let here = ThreadID.current.word
        #expect(here != 0)
        #expect(ThreadID.current.word == here)
        let other = try #require(idOfAThreadThatRanAndExited()).word
        #expect(other != 0)
        #expect(other != here)
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

/// Runs a thread, waits for it to exit (`pthread_join`), and returns the ID it had.
private func idOfAThreadThatRanAndExited() -> ThreadID? {
    let box = Unmanaged.passRetained(IDBox())
    #if canImport(Darwin)
    var thread: pthread_t?
    #else
    var thread = pthread_t()
    #endif
    let started = pthread_create(
        &thread, nil,
        { argument in
            guard let argument else { return nil }
            Unmanaged<IDBox>.fromOpaque(argument).takeUnretainedValue().value = ThreadID.current
            return nil
        }, box.toOpaque())
    guard started == 0 else {
        box.release()
        return nil
    }
    #if canImport(Darwin)
    pthread_join(thread!, nil)
    #else
    pthread_join(thread, nil)
    #endif
    return box.takeRetainedValue().value
}

private final class IDBox: @unchecked Sendable {
    var value: ThreadID?
    var sameTwice = false
}
