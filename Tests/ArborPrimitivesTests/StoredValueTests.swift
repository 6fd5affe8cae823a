import ArborPrimitives
import Testing

private protocol Shape { var area: Double { get } }

private struct Square: Shape {
    let side: Double
    let owner: Tracked
    var area: Double { side * side }
}

@Suite struct StoredValueTests {
    @Test func roundTrips() {
        #expect(StoredValue.make(42).load(as: Int.self) == 42)
        #expect(StoredValue.make("résumé").load(as: String.self) == "résumé")
        #expect(StoredValue.make([1, 2, 3]).load(as: [Int].self) == [1, 2, 3])
        #expect(StoredValue.make(Int?.none).load(as: Int?.self) == nil)
        let pair = StoredValue.make((UInt8(7), 1.5))
        #expect(pair.load(as: (UInt8, Double).self) == (7, 1.5))
        #expect(ObjectIdentifier(pair.valueType) == ObjectIdentifier((UInt8, Double).self))
        #expect(ObjectIdentifier(StoredValue.make(()).valueType) == ObjectIdentifier(Void.self))
    }

    /// The value lives in the object's tail, at its own alignment: a 16-byte-aligned vector next to a one-byte
    /// value, and an empty one.
    @Test func valuesOfEveryAlignment() {
        let vectors = (0..<8).map { StoredValue.make(SIMD4<Float>(Float($0), 2, 3, 4)) }
        for (index, vector) in vectors.enumerated() {
            #expect(vector.load(as: SIMD4<Float>.self) == SIMD4(Float(index), 2, 3, 4))
            let address = vector.withUnsafeMutablePointerToHeader { Int(bitPattern: $0.pointee.pointer) }
            #expect(address % MemoryLayout<SIMD4<Float>>.alignment == 0)
        }
        #expect(StoredValue.make(UInt8(200)).load(as: UInt8.self) == 200)
        #expect(StoredValue.make(SIMD2<Double>(1, 2)).load(as: SIMD2<Double>.self) == SIMD2(1, 2))
        StoredValue.make(()).load(as: Void.self)
    }

    @Test func objectsAndExistentials() {
        let tally = Tally()
        do {
            let object = Tracked(1, tally)
            let stored = StoredValue.make(object)
            #expect(stored.load(as: Tracked.self) === object)
            #expect((stored.asAny as? Tracked) === object)

            let shape = StoredValue.make(Square(side: 3, owner: Tracked(2, tally)) as any Shape)
            #expect(shape.load(as: (any Shape).self).area == 9)
            #expect(ObjectIdentifier(shape.valueType) == ObjectIdentifier((any Shape).self))
            #expect((shape.asAny as? any Shape)?.area == 9)
            #expect(tally.alive == 2)
        }
        #expect(tally.alive == 0)
        #expect(tally.made == 2)
    }

    @Test func keepsItsOwnCopyAndReleasesIt() {
        let tally = Tally()
        var stored: StoredValue? = StoredValue.make([Tracked(1, tally), Tracked(2, tally)])
        #expect(tally.alive == 2)
        var copy = stored!.load(as: [Tracked].self)
        copy.removeAll()
        #expect(stored!.load(as: [Tracked].self).map(\.id) == [1, 2])
        #expect(tally.alive == 2)
        stored = nil
        #expect(tally.alive == 0)
    }
}
