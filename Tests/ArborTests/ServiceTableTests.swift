import Testing

@testable import Arbor

private protocol Greeter {}
private struct Hello: Greeter {}

/// `ServiceTable` keeps the entries of its first two keys without a table, and moves them into the table with a third.
@Suite struct ServiceTableTests {
    /// Entries to put in tables: what a container made for `register` calls.
    private static func entries(_ register: (Container) -> Void) -> [ServiceKey: ServiceEntry] {
        let scratch = Container()
        register(scratch)
        return Dictionary(uniqueKeysWithValues: scratch.entries.map { ($0.key, $0) })
    }

    private let first = ServiceKey((any Greeter).self)
    private let named = ServiceKey((any Greeter).self, name: "named")
    private let second = ServiceKey(Int.self)

    private func keys(of table: ServiceTable) -> Set<ServiceKey> {
        var visited: Set<ServiceKey> = []
        table.forEach { visited.insert($0.key) }
        #expect(Set(table.values.map(\.key)) == visited)
        #expect(table.count == visited.count)
        return visited
    }

    @Test func oneKeyIsFoundAndNoOther() {
        let entries = Self.entries { $0.register((any Greeter).self) { _ in Hello() } }
        var table = ServiceTable()
        #expect(table.count == 0)
        #expect(table.insert(entries[first]!) == nil)
        #expect(table[first] === entries[first])
        #expect(table.unretainedEntry(for: first)?.object === entries[first])
        #expect(table[named] == nil)
        #expect(table.unretainedEntry(for: second) == nil)
        #expect(keys(of: table) == [first])
    }

    @Test func theSameKeyAgainReplacesTheEntryAndHandsBackTheOldOne() {
        let old = Self.entries { $0.register((any Greeter).self) { _ in Hello() } }[first]!
        let new = Self.entries { $0.register((any Greeter).self) { _ in Hello() } }[first]!
        var table = ServiceTable()
        table.insert(old)
        #expect(table.insert(new) === old)
        #expect(table[first] === new)
        #expect(keys(of: table) == [first])
    }

    @Test func theSecondKeysEntryIsReplacedAndRemovedOnItsOwn() {
        let entries = Self.entries { container in
            container.register((any Greeter).self) { _ in Hello() }
            container.register(Int.self) { _ in 1 }
        }
        let replacement = Self.entries { $0.register(Int.self) { _ in 2 } }[second]!
        var table = ServiceTable()
        table.insert(entries[first]!)
        table.insert(entries[second]!)
        #expect(keys(of: table) == [first, second])
        #expect(table.insert(replacement) === entries[second])
        #expect(table[second] === replacement)
        #expect(table[first] === entries[first])
        #expect(table.removeAll { $0 == second }.map(\.key) == [second])
        #expect(keys(of: table) == [first])
        #expect(table[second] == nil)
    }

    @Test func removingTheFirstKeysEntryKeepsTheSecond() {
        let entries = Self.entries { container in
            container.register((any Greeter).self) { _ in Hello() }
            container.register(Int.self) { _ in 1 }
            container.register((any Greeter).self, name: "named") { _ in Hello() }
        }
        var table = ServiceTable()
        table.insert(entries[first]!)
        table.insert(entries[second]!)
        #expect(table.removeAll { $0 == named }.isEmpty)
        #expect(keys(of: table) == [first, second])
        #expect(table.removeAll { $0 == first }.map(\.key) == [first])
        #expect(keys(of: table) == [second])
        #expect(table[second] === entries[second])
        // Two again, then a third: nothing lost on the way to the table.
        table.insert(entries[first]!)
        table.insert(entries[named]!)
        #expect(keys(of: table) == [first, second, named])
        for key in [first, second, named] { #expect(table[key] === entries[key], "\(key)") }
    }

    @Test func aThirdKeyKeepsTheFirstTwoEntries() {
        let entries = Self.entries { container in
            container.register((any Greeter).self) { _ in Hello() }
            container.register((any Greeter).self, name: "named") { _ in Hello() }
            container.register(Int.self) { _ in 1 }
        }
        var table = ServiceTable()
        table.insert(entries[first]!)
        #expect(table.insert(entries[named]!) == nil)
        #expect(table.insert(entries[second]!) == nil)
        for key in [first, named, second] { #expect(table[key] === entries[key], "\(key)") }
        #expect(keys(of: table) == [first, named, second])
        let replacement = Self.entries { $0.register((any Greeter).self) { _ in Hello() } }[first]!
        #expect(table.insert(replacement) === entries[first])
        #expect(table[first] === replacement)
    }

    @Test func removingTheOneEntryEmptiesTheTable() {
        let entries = Self.entries { container in
            container.register((any Greeter).self) { _ in Hello() }
            container.register(Int.self) { _ in 1 }
        }
        var table = ServiceTable()
        table.insert(entries[first]!)
        #expect(table.removeAll { $0 == second }.isEmpty)
        #expect(table[first] === entries[first])
        #expect(table.removeAll { $0 == first }.map(\.key) == [first])
        #expect(table.count == 0)
        #expect(table[first] == nil)
        #expect(keys(of: table).isEmpty)
        // Empty again, it starts over with one entry.
        table.insert(entries[second]!)
        table.insert(entries[first]!)
        #expect(keys(of: table) == [first, second])
        #expect(table.removeAll { $0 == first }.map(\.key) == [first])
        #expect(keys(of: table) == [second])
    }

    /// What a request's child does: one value registered, overridden, then a second type, then removed.
    @Test func aChildWithOneRegistrationBehavesAsWithMany() throws {
        let root = Container()
        root.register(Int.self) { _ in 0 }
        root.register((any Greeter).self) { _ in Hello() }
        let child = root.makeChild()
        child.register(Int.self, instance: 1)
        #expect(try child.resolve(Int.self) == 1)
        child.register(Int.self, instance: 2)
        #expect(try child.resolve(Int.self) == 2)
        #expect(child.isRegistered((any Greeter).self))
        child.register(String.self, instance: "second")
        #expect(try child.resolve(String.self) == "second")
        #expect(try child.resolve(Int.self) == 2)
        child.unregister(Int.self)
        #expect(try child.resolve(Int.self) == 0)
        #expect(try child.resolve(String.self) == "second")
        child.removeAll()
        #expect(throws: ResolutionError.self) { try child.resolve(String.self) }
        #expect(try child.resolve(Int.self) == 0)
    }
}
