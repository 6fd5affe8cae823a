import ArborPrimitives
import ArborTestSupport
import Testing

/// An element keyed by an `Int`, built the same way whatever its hash.
protocol TestElement: HashTableElement where Key == Int {
    init(key: Int, version: Int, tally: Tally)
    var version: Int { get }
}

/// Hashes spread by a multiplicative mix: distinct keys, distinct hashes. Counts the reads of its key.
final class SpreadElement: TestElement {
    private let storedKey: Int
    let version: Int
    let tally: Tally
    /// How often the table read this element's key.
    private(set) var keyReads = 0

    init(key: Int, version: Int, tally: Tally) {
        storedKey = key
        self.version = version
        self.tally = tally
        tally.made += 1
    }

    deinit { tally.freed += 1 }

    var key: Int {
        keyReads += 1
        return storedKey
    }

    static func tableHash(of key: Int) -> Int {
        Int(bitPattern: UInt(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15)
    }
}

/// Four keys share each hash, so the table must compare keys, not only hashes.
final class SharedHashElement: TestElement {
    let key: Int
    let version: Int
    let tally: Tally

    init(key: Int, version: Int, tally: Tally) {
        self.key = key
        self.version = version
        self.tally = tally
        tally.made += 1
    }

    deinit { tally.freed += 1 }

    static func tableHash(of key: Int) -> Int { SpreadElement.tableHash(of: key >> 2) }
}

/// Every key lands in one of four slots: long clusters, probes that wrap around the end of the table.
final class CollidingElement: TestElement {
    let key: Int
    let version: Int
    let tally: Tally

    init(key: Int, version: Int, tally: Tally) {
        self.key = key
        self.version = version
        self.tally = tally
        tally.made += 1
    }

    deinit { tally.freed += 1 }

    static func tableHash(of key: Int) -> Int { -1 - (key & 3) }
}

@Suite struct OpenAddressingTableTests {
    @Test func startsEmptyWithoutSlots() {
        var table = OpenAddressingTable<CollidingElement>()
        #expect(table.count == 0)
        #expect(table.capacity == 0)  // an empty container's table allocates nothing
        #expect(table[0] == nil)
        #expect(table.unretainedElement(for: 0) == nil)
        #expect(table.elements.isEmpty)
        #expect(table.removeAll { _ in true }.isEmpty)
        #expect(table.capacity == 0)

        let tally = Tally()
        for key in 0..<2 { table.insert(CollidingElement(key: key, version: 0, tally: tally)) }
        #expect(table.capacity == 4)  // the first storage holds two elements
        table.insert(CollidingElement(key: 2, version: 0, tally: tally))
        #expect(table.capacity == 8)
        for key in 3..<5 { table.insert(CollidingElement(key: key, version: 0, tally: tally)) }
        #expect(table.capacity == 16)
        #expect((0..<5).allSatisfy { table[$0]?.key == $0 })
    }

    @Test func forEachVisitsEveryElementOnceAndRetainsNothing() {
        let tally = Tally()
        do {
            var table = OpenAddressingTable<SharedHashElement>()
            var visited: [Int] = []
            table.forEach { visited.append($0.key) }
            #expect(visited.isEmpty)
            for key in 0..<13 { table.insert(SharedHashElement(key: key, version: 1, tally: tally)) }
            table.insert(SharedHashElement(key: 5, version: 2, tally: tally))  // replaces one: still 13
            var versions: [Int: Int] = [:]
            table.forEach { versions[$0.key, default: 0] += $0.version }
            #expect(versions == Dictionary(uniqueKeysWithValues: (0..<13).map { ($0, $0 == 5 ? 2 : 1) }))
            #expect(table.elements.map(\.key).sorted() == Array(0..<13))
        }
        #expect(tally.made == 14 && tally.freed == 14, "made \(tally.made), freed \(tally.freed)")
    }

    @Test func insertReplaceAndFind() {
        let tally = Tally()
        do {
            var table = OpenAddressingTable<SharedHashElement>()
            #expect(table.insert(SharedHashElement(key: 1, version: 1, tally: tally)) == nil)
            #expect(table.insert(SharedHashElement(key: 2, version: 1, tally: tally)) == nil)  // same hash as 1
            let replaced = table.insert(SharedHashElement(key: 1, version: 2, tally: tally))
            #expect(replaced?.key == 1)
            #expect(replaced?.version == 1)
            #expect(table.count == 2)
            #expect(table[1]?.version == 2)
            #expect(table[2]?.version == 1)
            #expect(table[3] == nil)
            #expect(table.unretainedElement(for: 2)?.object === table[2])
        }
        #expect(tally.made == 3)
        #expect(tally.freed == 3)
    }

    @Test(arguments: [0x5EED_0001, 0x5EED_0002, 0x5EED_0003] as [UInt64])
    func spreadHashesMatchDictionary(seed: UInt64) {
        checkAgainstDictionary(SpreadElement.self, seed: seed, operations: 6_000, keys: 2_500)
    }

    @Test(arguments: [0x5EED_0004, 0x5EED_0005] as [UInt64])
    func sharedHashesMatchDictionary(seed: UInt64) {
        checkAgainstDictionary(SharedHashElement.self, seed: seed, operations: 5_000, keys: 1_500)
    }

    @Test func collidingHashesMatchDictionary() {
        checkAgainstDictionary(CollidingElement.self, seed: 0x5EED_0006, operations: 3_000, keys: 300)
    }

    /// Growing moves the slots with their hashes: it never reads an element, and neither does a probe that passes
    /// over elements with other hashes.
    @Test func growingAndProbingReadNoResidentKeys() {
        let tally = Tally()
        var table = OpenAddressingTable<SpreadElement>()
        var residents: [SpreadElement] = []
        for key in 0..<20 {
            let element = SpreadElement(key: key, version: 0, tally: tally)
            residents.append(element)
            table.insert(element)
        }
        let readsBefore = residents.map(\.keyReads)
        let capacityBefore = table.capacity
        for key in 20..<2_000 { table.insert(SpreadElement(key: key, version: 0, tally: tally)) }
        for key in 5_000..<6_000 { #expect(table[key] == nil) }
        #expect(table.capacity > capacityBefore)
        #expect(table.capacity >= 2 * table.count)
        #expect(residents.map(\.keyReads) == readsBefore)
        // A look-up of a resident reads its key once, to confirm the match.
        #expect(table[7] === residents[7])
        #expect(residents[7].keyReads == readsBefore[7] + 1)
    }

    @Test func removeAllWhere() {
        let tally = Tally()
        do {
            var table = OpenAddressingTable<SharedHashElement>()
            for key in 0..<100 { table.insert(SharedHashElement(key: key, version: 0, tally: tally)) }
            let removed = table.removeAll { $0.key % 3 == 0 }
            #expect(Set(removed.map(\.key)) == Set(stride(from: 0, to: 100, by: 3)))
            #expect(removed.count == 34)
            #expect(table.count == 66)
            for key in 0..<100 { #expect((table[key] != nil) == (key % 3 != 0)) }
            #expect(table.removeAll { _ in false }.isEmpty)
            #expect(table.count == 66)
        }
        #expect(tally.alive == 0)
    }

    /// Runs a seeded sequence of inserts, replacements, look-ups and removals on a table and on a `Dictionary`,
    /// comparing them after every step, and counts the elements alive: exactly those the table holds.
    private func checkAgainstDictionary<Element: TestElement>(
        _: Element.Type, seed: UInt64, operations: Int, keys: Int
    ) {
        var random = SplitMix64(seed: seed)
        let tally = Tally()
        var model: [Int: Int] = [:]  // key → version
        var version = 0
        var growths = 0
        do {
            var table = OpenAddressingTable<Element>()
            for step in 0..<operations {
                let context = "seed \(seed), step \(step)"
                let roll = random.int(in: 0..<1_000)
                if roll < 600 {
                    let key = random.int(in: 0..<keys)
                    version += 1
                    let capacity = table.capacity
                    let replaced = table.insert(Element(key: key, version: version, tally: tally))
                    if table.capacity != capacity { growths += 1 }
                    #expect(replaced?.key == (model[key] == nil ? nil : key), "\(context)")
                    #expect(replaced?.version == model[key], "\(context)")
                    model[key] = version
                } else if roll < 985 {
                    let key = random.int(in: -10..<(keys + 10))
                    #expect(table[key]?.version == model[key], "\(context): key \(key)")
                    let unretained = table.unretainedElement(for: key)
                    #expect(unretained?.withObject { $0.version } == model[key], "\(context)")
                } else if roll < 998 {
                    let modulus = random.int(in: 2..<40)
                    let remainder = random.int(in: 0..<modulus)
                    let removed = table.removeAll { $0.key % modulus == remainder }
                    let expected = model.filter { $0.key % modulus == remainder }
                    #expect(removed.count == expected.count, "\(context)")
                    for element in removed {
                        #expect(expected[element.key] == element.version, "\(context): removed \(element.key)")
                    }
                    model = model.filter { $0.key % modulus != remainder }
                } else {
                    _ = table.removeAll { _ in true }
                    model = [:]
                }
                #expect(table.count == model.count, "\(context)")
                #expect(table.capacity >= 2 * table.count, "\(context)")
                #expect(tally.alive == table.count, "\(context): \(tally.alive) elements alive")
                if step % 1_000 == 999 || step == operations - 1 { checkContents(table, model, context) }
            }
        }
        #expect(growths >= 4, "the sequence should grow the table")
        #expect(tally.freed == tally.made, "seed \(seed): \(tally.alive) elements leaked")
    }

    private func checkContents<Element: TestElement>(
        _ table: OpenAddressingTable<Element>, _ model: [Int: Int], _ context: String
    ) {
        let elements = table.elements
        #expect(elements.count == model.count, "\(context)")
        #expect(Set(elements.map(\.key)).count == elements.count, "\(context): a key is held twice")
        for element in elements { #expect(model[element.key] == element.version, "\(context): \(element.key)") }
        for (key, version) in model { #expect(table[key]?.version == version, "\(context): \(key)") }
    }
}
