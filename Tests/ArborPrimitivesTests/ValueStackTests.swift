import ArborPrimitives
import ArborTestSupport
import Testing

private struct Empty: Equatable {}

private struct Holder {
    let flag: UInt8
    let object: Tracked
    let tail: Int16
}

private protocol Labelled { var label: String { get } }

private protocol Identified { var id: Int { get } }

extension Tracked: Identified {}

private struct Labelled16: Labelled {
    let vector: SIMD4<Float>
    let object: Tracked
    var label: String { "v\(object.id)" }
}

/// The kinds of values the randomized test pushes: every size from 0 to 64 bytes, alignments 1 to 16, trivial
/// values, class instances, and values that hold references.
private enum Kind: CaseIterable {
    case byte, short, word, double, tuple, vector16, bytes16, string, array, object, holder, optionalObject,
        optionalNone, existential, empty, large
}

private typealias Large = (SIMD16<Float>, UInt8)

@Suite struct ValueStackTests {
    @Test func pushAndReadBack() {
        var stack = ValueStack()
        defer { stack.deallocate() }
        let first = stack.push(UInt8(1))
        let second = stack.push(Int64(-2))
        let third = stack.push("three")
        #expect((first, second, third) == (0, 1, 2))
        #expect(stack.count == 3)
        #expect(stack.value(at: 0, as: UInt8.self) == 1)
        #expect(stack.value(at: 1, as: Int64.self) == -2)
        #expect(stack.value(at: 2, as: String.self) == "three")
        #expect(Int(bitPattern: stack.address(of: 1)) % MemoryLayout<Int64>.alignment == 0)
        #expect(stack.address(of: 1).load(as: Int64.self) == -2)
    }

    /// A location copies a value out with its type, and lends a class instance without a retain; it stays valid
    /// when the buffer has not grown since it was taken.
    @Test func locationCopiesValuesAndLendsObjects() {
        let tally = Tally()
        var stack = ValueStack()
        defer { stack.deallocate() }
        stack.push("zero")
        let objectPosition = stack.push(Tracked(7, tally))
        let textLocation = stack.location(of: 0)
        #expect(textLocation.copy(as: String.self) == "zero")
        let lent = stack.location(of: objectPosition).withObject(as: Tracked.self) { $0.id }
        #expect(lent == 7)
        #expect(stack.location(of: objectPosition).copy(as: Tracked.self).id == 7)
        #expect(tally.alive == 1, "a copy or a borrow made or freed an instance")
        stack.removeAll()
        #expect(tally.alive == 0)
    }

    /// An object nothing else refers to is released in place, whether the stack holds it as its class or in a
    /// protocol existential; one referred to elsewhere, and any other value, stays. A released position is empty: the
    /// stack neither releases it again nor moves it when it grows.
    @Test func releasesAnObjectOnlyWhenItHoldsItAlone() {
        let tally = Tally()
        var stack = ValueStack()
        defer { stack.deallocate() }
        let alone = stack.push(Tracked(1, tally))
        let shared = Tracked(2, tally)
        let sharedPosition = stack.push(shared)
        let inExistential = stack.push(Tracked(3, tally) as any Identified)
        let structure = stack.push(Holder(flag: 1, object: Tracked(4, tally), tail: 2))
        var watchedObject: Tracked? = Tracked(5, tally)
        weak let watched = watchedObject
        let weaklyWatched = stack.push(watchedObject!)
        watchedObject = nil  // The stack holds it alone now, but a weak reference watches it.
        #expect(tally.alive == 5)

        let released = [alone, sharedPosition, inExistential, structure, weaklyWatched].map {
            stack.releaseIfOnlyHeldHere(at: $0)
        }
        #expect(released == [true, false, true, false, false])
        #expect(tally.alive == 3, "the two objects held alone were released")
        #expect(watched != nil)

        for index in 0..<200 { stack.push(Tracked(100 + index, tally)) }  // Grows the buffer.
        #expect(stack.value(at: sharedPosition, as: Tracked.self) === shared)
        stack.removeAll()
        #expect(tally.alive == 1, "only the test's own is left")
        #expect(tally.freed == tally.made - 1)
    }

    @Test(arguments: [0xA11C_0001, 0xA11C_0002, 0xA11C_0003] as [UInt64])
    func mixedValuesThroughGrowthAndReuse(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let tally = Tally()
        var stack = ValueStack()
        for round in 0..<3 {
            var pushed: [(Kind, Int)] = []
            let count = random.int(in: 200..<400)
            for index in 0..<count {
                let kind = Kind.allCases[random.int(in: 0..<Kind.allCases.count)]
                let id = round * 1_000 + index
                let position = push(kind, id: id, onto: &stack, tally)
                #expect(position == index)
                pushed.append((kind, id))
                if index % 50 == 0 { verify(pushed, in: stack, "seed \(seed), round \(round), push \(index)") }
            }
            verify(pushed, in: stack, "seed \(seed), round \(round)")
            let expectedAlive = pushed.filter { [.object, .holder, .optionalObject, .existential].contains($0.0) }.count
            #expect(tally.alive == expectedAlive)
            if round < 2 {
                stack.removeAll()
                #expect(stack.count == 0)
                #expect(tally.alive == 0, "removeAll released every value")
            }
        }
        stack.deallocate()
        #expect(tally.alive == 0, "deallocate released every value")
        #expect(tally.made > 100)
    }

    private func push(_ kind: Kind, id: Int, onto stack: inout ValueStack, _ tally: Tally) -> Int {
        switch kind {
        case .byte: stack.push(UInt8(truncatingIfNeeded: id))
        case .short: stack.push(Int16(truncatingIfNeeded: id))
        case .word: stack.push(id)
        case .double: stack.push(Double(id) + 0.5)
        case .tuple: stack.push((UInt8(truncatingIfNeeded: id), Int64(id)))
        case .vector16: stack.push(SIMD4<Float>(repeating: Float(id)))
        case .bytes16: stack.push(SIMD16<UInt8>(repeating: UInt8(truncatingIfNeeded: id)))
        case .string: stack.push("value \(id) " + String(repeating: "x", count: id % 40))
        case .array: stack.push([id, id + 1])
        case .object: stack.push(Tracked(id, tally))
        case .holder: stack.push(Holder(flag: 1, object: Tracked(id, tally), tail: 2))
        case .optionalObject: stack.push(Optional(Tracked(id, tally)))
        case .optionalNone: stack.push(Tracked?.none)
        case .existential:
            stack.push(Labelled16(vector: SIMD4(repeating: 1), object: Tracked(id, tally)) as any Labelled)
        case .empty: stack.push(Empty())
        case .large: stack.push((SIMD16<Float>(repeating: Float(id)), UInt8(3)) as Large)
        }
    }

    private func verify(_ pushed: [(Kind, Int)], in stack: ValueStack, _ context: String) {
        #expect(stack.count == pushed.count, "\(context)")
        for (position, (kind, id)) in pushed.enumerated() {
            let ok: Bool
            switch kind {
            case .byte: ok = read(UInt8.self, position, stack) == UInt8(truncatingIfNeeded: id)
            case .short: ok = read(Int16.self, position, stack) == Int16(truncatingIfNeeded: id)
            case .word: ok = read(Int.self, position, stack) == id
            case .double: ok = read(Double.self, position, stack) == Double(id) + 0.5
            case .tuple: ok = read((UInt8, Int64).self, position, stack) == (UInt8(truncatingIfNeeded: id), Int64(id))
            case .vector16: ok = read(SIMD4<Float>.self, position, stack) == SIMD4(repeating: Float(id))
            case .bytes16:
                ok = read(SIMD16<UInt8>.self, position, stack) == SIMD16(repeating: UInt8(truncatingIfNeeded: id))
            case .string:
                ok = read(String.self, position, stack) == "value \(id) " + String(repeating: "x", count: id % 40)
            case .array: ok = read([Int].self, position, stack) == [id, id + 1]
            case .object: ok = read(Tracked.self, position, stack).id == id
            case .holder:
                let holder = read(Holder.self, position, stack)
                ok = holder.object.id == id && holder.flag == 1 && holder.tail == 2
            case .optionalObject: ok = read(Tracked?.self, position, stack)?.id == id
            case .optionalNone: ok = read(Tracked?.self, position, stack) == nil
            case .existential: ok = read((any Labelled).self, position, stack).label == "v\(id)"
            case .empty: ok = read(Empty.self, position, stack) == Empty()
            case .large:
                let large = read(Large.self, position, stack)
                ok = large.0 == SIMD16(repeating: Float(id)) && large.1 == 3
            }
            #expect(ok, "\(context): \(kind) at \(position)")
        }
    }

    private func read<Value>(_ type: Value.Type, _ position: Int, _ stack: ValueStack) -> Value {
        let address = Int(bitPattern: stack.address(of: position))
        #expect(address % MemoryLayout<Value>.alignment == 0, "\(Value.self) at \(position) is misaligned")
        return stack.value(at: position, as: type)
    }
}
