import ArborPrimitives
import Testing

@Suite struct UnsafeStackTests {
    @Test func pushPopGrowInOrder() {
        var stack = UnsafeStack<Int>(capacity: 1)
        defer { stack.deallocate() }
        #expect(stack.isEmpty)
        for value in 0..<1_000 { stack.push(value * 3) }
        #expect(stack.count == 1_000)
        #expect(Array(stack.elements) == (0..<1_000).map { $0 * 3 })
        #expect(stack[10] == 30)
        stack[10] = -1
        #expect(stack.elements[10] == -1)
        #expect(stack.base[10] == -1)
        for value in (500..<1_000).reversed() { #expect(stack.pop() == value * 3) }
        #expect(stack.count == 500)
        stack.removeAll()
        #expect(stack.isEmpty)
        stack.push(7)
        #expect(Array(stack.elements) == [7])
    }

    @Test func objectsAreReleasedOnceAndOnlyWhenDropped() {
        let tally = Tally()
        var stack = UnsafeStack<Tracked>(capacity: 2)
        for id in 0..<100 { stack.push(Tracked(id, tally)) }
        #expect(tally.alive == 100)
        for id in (70..<100).reversed() {
            let popped = stack.pop()
            #expect(popped.id == id)
        }
        #expect(tally.alive == 70)
        stack[5] = Tracked(1_000, tally)  // Releases the one it replaces.
        #expect(tally.alive == 70)
        #expect(stack[5].id == 1_000)
        #expect(stack.elements.map(\.id) == Array(0..<5) + [1_000] + Array(6..<70))
        stack.removeAll()
        #expect(tally.alive == 0)
        for id in 0..<40 { stack.push(Tracked(id, tally)) }
        #expect(tally.alive == 40)
        stack.deallocate()
        #expect(tally.alive == 0)
        #expect(tally.made == 141)
    }

    @Test func valuesHoldingReferences() {
        let tally = Tally()
        var stack = UnsafeStack<(String, Tracked?, [Int])>()
        for id in 0..<50 { stack.push(("item \(id)", id.isMultiple(of: 2) ? Tracked(id, tally) : nil, [id, id])) }
        #expect(tally.alive == 25)
        let last = stack.pop()
        #expect(last.0 == "item 49")
        #expect(last.1 == nil)
        #expect(last.2 == [49, 49])
        #expect(stack[48].1?.id == 48)
        stack.deallocate()
        #expect(tally.alive == 0)
    }
}
