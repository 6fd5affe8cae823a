import ArborPrimitives
import Foundation
import Testing

@Suite struct StripedTests {
    @Test func eachStripeKeepsItsOwnValueAndEveryLockSeesThemAll() {
        let striped = Striped { [Int]() }
        for stripe in 0..<Striped<[Int]>.count {
            striped.withLock(stripe: stripe) { $0.append(stripe) }
        }
        striped.withLock(stripe: 3) { $0.append(30) }
        let all = striped.withEveryLock { forEachValue in
            var all: [[Int]] = []
            forEachValue { all.append($0) }
            return all
        }
        #expect(all.count == Striped<[Int]>.count)
        #expect(all[3] == [3, 30])
        #expect(all.enumerated().allSatisfy { index, value in value.first == index })
    }

    @Test func aThreadKeepsToOneStripe() {
        let striped = Striped { 0 }
        let here = striped.stripe(for: .current)
        #expect(striped.stripe(for: .current) == here)
        #expect((0..<Striped<Int>.count).contains(here))
    }

    /// Values with references are made once and destroyed once.
    @Test func valuesAreDestroyedWithTheStripes() {
        let tally = Tally()
        do {
            let striped = Striped { Tracked(0, tally) }
            #expect(tally.alive == Striped<Tracked>.count)
            striped.withLock(stripe: 0) { $0 = Tracked(1, tally) }
            #expect(tally.alive == Striped<Tracked>.count)
        }
        #expect(tally.alive == 0)
    }

    /// Threads adding to their own stripes while another takes every lock and counts: the counts never tear, and the
    /// total is exact (ThreadSanitizer, which CI runs this suite under, would report an access outside the locks).
    @Test func threadsOnTheirOwnStripesAndAWriterOnAllOfThem() {
        let striped = Striped { 0 }
        let perThread = 20_000
        let stop = AtomicWord(0)
        defer { stop.deallocate() }
        let group = DispatchGroup()
        for _ in 0..<3 {
            group.enter()
            Thread {
                let stripe = striped.stripe(for: .current)
                for _ in 0..<perThread { striped.withLock(stripe: stripe) { $0 += 1 } }
                group.leave()
            }.start()
        }
        var sums: [Int] = []
        while group.wait(timeout: .now()) == .timedOut {
            sums.append(
                striped.withEveryLock { forEachValue in
                    var sum = 0
                    forEachValue { sum += $0 }
                    return sum
                })
        }
        let total = striped.withEveryLock { forEachValue in
            var sum = 0
            forEachValue { sum += $0 }
            return sum
        }
        #expect(total == 3 * perThread)
        #expect(sums == sums.sorted(), "a sum under every lock never goes down")
    }
}
