import ArborPrimitives
import ArborTestSupport
import Foundation
import Testing

/// A `Protected` that threads may share: the lock inside is what makes that safe.
private final class SharedProtected<Value>: @unchecked Sendable {
    let protected: Protected<Value>
    init(_ value: Value) { protected = Protected.make(value) }
    init(_ value: Value, words: (Int, Int, Int, Int)) { protected = Protected.make(with: { value }, words: words) }
}

@Suite struct LockTests {
    static let threads = 4
    static let increments = 20_000

    @Test func lockKeepsIncrementsFromBeingLost() {
        let lock = Lock()
        let counter = UnsafeCounter()
        let finished = runThreads(Self.threads) { index in
            for step in 0..<Self.increments {
                if (index + step).isMultiple(of: 2) {
                    lock.withLock { counter.value += 1 }
                } else {
                    lock.lock()
                    counter.value += 1
                    lock.unlock()
                }
            }
        }
        #expect(finished)
        #expect(lock.withLock { counter.value } == Self.threads * Self.increments)
    }

    @Test func aValueMadeInPlaceIsTheOneTheLockGuards() {
        final class Tracked {
            var items: [Int]
            init(_ items: [Int]) { self.items = items }
        }
        let made = Protected<Tracked>.make(with: { Tracked([1, 2]) })
        #expect(made.withLock { $0.items } == [1, 2])
        made.withLock { $0.items.append(3) }
        #expect(made.withLock { $0.items } == [1, 2, 3])
        weak var released: Tracked?
        do {
            let value = Protected<Tracked>.make(with: { Tracked([]) })
            released = value.withLock { $0 }
            #expect(released != nil)
        }
        #expect(released == nil, "the buffer keeps the value it made, and releases it with itself")
    }

    @Test func wordsMadeWithTheBufferStartAsGivenAndLeaveTheValueAndTheLockAlone() {
        let tally = Tally()
        var protected: Protected<[Tracked]>? = Protected<[Tracked]>.make(
            with: { [Tracked(1, tally)] }, words: (7, 0, -1, Int.max))
        let words = protected!.words
        let made: [Int] = [words.load(), words.second.load(), words.third.load(), words.fourth.load()]
        #expect(made == [7, 0, -1, Int.max])
        // The words change with atomics while the lock is held and while it is not; neither touches the other.
        protected!.withLock { value in
            words.storeInTotalOrder(8)
            value.append(Tracked(2, tally))
        }
        #expect(words.second.fetchAdd(5) == 0)
        words.third.store(3)
        let changed: [Int] = [words.load(), words.second.load(), words.third.load(), words.fourth.load()]
        #expect(changed == [8, 5, 3, Int.max])
        #expect(protected!.withLock { $0.map(\.id) } == [1, 2])
        #expect(protected!.words.loadInTotalOrder() == 8, "every reading of `words` reaches the same memory")
        protected = nil
        #expect(tally.alive == 0, "the value goes with the buffer, words and all")
    }

    @Test func wordsKeepIncrementsFromBeingLost() {
        let shared = SharedProtected(0, words: (0, 0, 0, 0))
        let finished = runThreads(Self.threads) { _ in
            for _ in 0..<Self.increments {
                _ = shared.protected.words.fourth.fetchAdd(1)
                shared.protected.withLock { $0 += 1 }
            }
        }
        #expect(finished)
        let words = shared.protected.words
        #expect(words.fourth.load() == Self.threads * Self.increments)
        #expect(words.load() == 0 && words.second.load() == 0 && words.third.load() == 0)
        #expect(shared.protected.withLock { $0 } == Self.threads * Self.increments)
    }

    @Test func withLockRethrowsAndUnlocks() {
        struct Failure: Error {}
        let lock = Lock()
        #expect(throws: Failure.self) { try lock.withLock { throw Failure() } }
        #expect(lock.withLock { 5 } == 5)  // Still usable: the throw released the lock.
    }

    @Test func waitSleepsUntilBroadcast() {
        let lock = Lock()
        let state = UnsafeCounter()  // 0: waiting, 1: told to go, 2: the waiter saw it
        let waiter = Thread {
            lock.withLock {
                while state.value == 0 { lock.wait() }
                state.value = 2
                lock.broadcast()
            }
        }
        waiter.start()
        usleep(10_000)
        lock.withLock {
            #expect(state.value == 0)
            state.value = 1
            lock.broadcast()
        }
        let deadline = Date().addingTimeInterval(10)
        var seen = 0
        while Date() < deadline {
            seen = lock.withLock { state.value }
            if seen == 2 { break }
            usleep(1_000)
        }
        #expect(seen == 2)
    }

    @Test func protectedKeepsIncrementsFromBeingLost() {
        let shared = SharedProtected(0)
        let outside = UnsafeCounter()  // Guarded by the same mutex, through lock() and unlock().
        let finished = runThreads(Self.threads) { index in
            for step in 0..<Self.increments {
                if (index + step).isMultiple(of: 3) {
                    shared.protected.lock()
                    outside.value += 1
                    shared.protected.unlock()
                } else {
                    shared.protected.withLock { $0 += 1 }
                }
            }
        }
        #expect(finished)
        shared.protected.lock()
        let counted = outside.value
        shared.protected.unlock()
        #expect(shared.protected.withLock { $0 } + counted == Self.threads * Self.increments)
        #expect(counted > 0)
    }

    @Test func withValueAssumingLockedReachesTheValueWhileTheLockIsHeld() {
        let protected = Protected.make([1, 2])
        protected.lock()
        protected.withValueAssumingLocked { $0.append(3) }
        let read = protected.withValueAssumingLocked { $0 }
        protected.unlock()
        #expect(read == [1, 2, 3])
        #expect(protected.withLock { $0 } == [1, 2, 3])
    }

    @Test func protectedReleasesItsValue() {
        let tally = Tally()
        var protected: Protected<[Tracked]>? = Protected.make([Tracked(1, tally)])
        protected!.withLock { $0.append(Tracked(2, tally)) }
        #expect(protected!.withLock { $0.map(\.id) } == [1, 2])
        #expect(tally.alive == 2)
        protected = nil
        #expect(tally.alive == 0)
    }

    #if DEBUG
    /// Debug builds make error-checking mutexes, and a failed pthread call stops the program.
    @Test(.enabled(if: !runsUnderSanitizer, "a sanitizer reports the misuse itself"))
    func unlockingAnUnlockedLockStops() async {
        await #expect(processExitsWith: .failure) {
            let lock = Lock()
            lock.unlock()
        }
    }

    @Test(.enabled(if: !runsUnderSanitizer, "a sanitizer reports the misuse itself"))
    func lockingTwiceOnOneThreadStops() async {
        await #expect(processExitsWith: .failure) {
            let protected = Protected.make(0)
            protected.lock()
            protected.lock()
        }
    }
    #endif
}
