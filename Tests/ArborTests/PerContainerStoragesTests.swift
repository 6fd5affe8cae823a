import Testing

@testable import Arbor

@Suite struct PerContainerStoragesTests {
    @Test(arguments: [0, 1, 2, 15, 16, 17, 40])
    func findsEveryStorageItWasGivenAndNoOther(count: Int) {
        let container = Container()
        var storages = PerContainerStorages()
        #expect(storages.isEmpty)
        var given: [Int: InstanceStorage] = [:]
        for index in 0..<count {
            let identity = 1_000 + index * 7
            let storage = InstanceStorage(
                retention: .strong, releaseHooks: [], owner: container, key: ServiceKey(Int.self))
            storages.add(storage, for: identity)
            given[identity] = storage
        }
        #expect(storages.count == count)
        #expect(storages.isEmpty == (count == 0))
        for (identity, storage) in given {
            #expect(storages[identity] === storage, "identity \(identity)")
        }
        #expect(storages[999] == nil)
        #expect(storages[1_000 + count * 7] == nil)
        let values = Set(storages.values.map(ObjectIdentifier.init))
        #expect(values == Set(given.values.map(ObjectIdentifier.init)))
        #expect(storages.values.count == count)
    }
}
