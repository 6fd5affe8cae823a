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
        #expect(StoredValue(42).load(as: Int.self) == 42)
        #expect(StoredValue("résumé").load(as: String.self) == "résumé")
        #expect(StoredValue([1, 2, 3]).load(as: [Int].self) == [1, 2, 3])
        #expect(StoredValue(Int?.none).load(as: Int?.self) == nil)
        let pair = StoredValue((UInt8(7), 1.5))
        #expect(pair.load(as: (UInt8, Double).self) == (7, 1.5))
        #expect(ObjectIdentifier(pair.valueType) == ObjectIdentifier((UInt8, Double).self))
        #expect(ObjectIdentifier(StoredValue(()).valueType) == ObjectIdentifier(Void.self))
    }

    @Test func objectsAndExistentials() {
        let tally = Tally()
        do {
            let object = Tracked(1, tally)
            let stored = StoredValue(object)
            #expect(stored.load(as: Tracked.self) === object)
            #expect((stored.asAny as? Tracked) === object)

            let shape = StoredValue(Square(side: 3, owner: Tracked(2, tally)) as any Shape)
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
        var stored: StoredValue? = StoredValue([Tracked(1, tally), Tracked(2, tally)])
        #expect(tally.alive == 2)
        var copy = stored!.load(as: [Tracked].self)
        copy.removeAll()
        #expect(stored!.load(as: [Tracked].self).map(\.id) == [1, 2])
        #expect(tally.alive == 2)
        stored = nil
        #expect(tally.alive == 0)
    }
}
