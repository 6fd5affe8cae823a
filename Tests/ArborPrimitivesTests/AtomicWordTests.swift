import ArborPrimitives
import ArborTestSupport
import Testing

/// An `AtomicWord` that the test frees when it is done.
@Suite struct AtomicWordTests {
    @Test func loadsStoresAndAdds() {
        for word in [AtomicWord(5), AtomicWord(alone: 5)] {
            #expect(word.load() == 5)
            word.store(6)
            #expect(word.loadInTotalOrder() == 6)
            word.storeInTotalOrder(-7)
            #expect(word.load() == -7)
            word.storeBeforeProcessBarrier(8)
            #expect(word.load() == 8)
            #expect(word.fetchAdd(2) == 8)
            #expect(word.fetchAdd(-10) == 10)
            #expect(word.load() == 0)
            word.deallocate()
        }
    }

    @Test func aPairKeepsTwoWordsThatChangeApart() {
        let first = AtomicWord(1, second: 2)
        let second = first.second
        #expect(first.load() == 1)
        #expect(second.load() == 2)
        second.store(20)
        first.store(10)
        #expect(first.load() == 10)
        #expect(second.load() == 20)
        #expect(first.second.fetchAdd(1) == 20)
        #expect(second.load() == 21)
        first.deallocate()
    }

    @Test func aTripleKeepsThreeWordsThatChangeApart() {
        let first = AtomicWord(1, second: 2, third: 3)
        #expect([first.load(), first.second.load(), first.third.load()] == [1, 2, 3])
        first.third.store(30)
        first.second.store(20)
        #expect([first.load(), first.second.load(), first.third.load()] == [1, 20, 30])
        first.deallocate()
    }

    @Test func aQuadrupleKeepsFourWordsThatChangeApart() {
        let first = AtomicWord(1, second: 2, third: 3, fourth: 4)
        #expect([first.load(), first.second.load(), first.third.load(), first.fourth.load()] == [1, 2, 3, 4])
        first.fourth.store(40)
        first.second.store(20)
        #expect([first.load(), first.second.load(), first.third.load(), first.fourth.load()] == [1, 20, 3, 40])
        first.deallocate()
    }

    @Test func copiesShareTheWord() {
        let word = AtomicWord(1)
        let copy = word
        copy.store(2)
        #expect(word.load() == 2)
        word.deallocate()
    }

    /// Every `fetchAdd(1)` from any thread returns a different previous value, and none is lost.
    @Test func fetchAddFromSeveralThreads() {
        let threads = 4
        let adds = 50_000
        let word = AtomicWord(alone: 0)
        defer { word.deallocate() }
        let seen = PerThread<[Int]>(count: threads, initial: [])
        let finished = runThreads(threads) { index in
            var mine: [Int] = []
            mine.reserveCapacity(adds)
            for _ in 0..<adds { mine.append(word.fetchAdd(1)) }
            seen[index] = mine
        }
        #expect(finished)
        #expect(word.load() == threads * adds)
        let all = seen.all.flatMap { $0 }.sorted()
        #expect(all == Array(0..<(threads * adds)))
        for mine in seen.all { #expect(zip(mine, mine.dropFirst()).allSatisfy { $0 < $1 }) }
    }

    @Test func uniqueNumbersAcrossThreads() {
        let threads = 4
        let count = 10_000
        let seen = PerThread<[Int]>(count: threads, initial: [])
        let finished = runThreads(threads) { index in
            seen[index] = (0..<count).map { _ in UniqueNumber.next() }
        }
        #expect(finished)
        let all = seen.all.flatMap { $0 }
        #expect(all.count == threads * count)
        #expect(Set(all).count == all.count, "a number was handed out twice")
        #expect(all.allSatisfy { $0 >= UniqueNumber.first })
        for mine in seen.all { #expect(zip(mine, mine.dropFirst()).allSatisfy { $0 < $1 }) }
        #expect(UniqueNumber.next() > all.max()!)
    }
}
