import Testing

@testable import Arbor

private final class LCA: @unchecked Sendable {}
private final class LCB: @unchecked Sendable {}
private final class LCC: @unchecked Sendable {}

/// The look-up cache as a table, tested against a `Dictionary` holding every look-up ever stored: a hit is always
/// exactly what was stored last for that key, container and version — never another key's, another container's or
/// a stale version's entry. (A miss is always allowed: the cache has two slots a key.)
@Suite struct LookupCacheTableTests {
    private struct ModelKey: Hashable {
        let key: ServiceKey
        let container: ObjectIdentifier
        let version: Int
    }

    @Test func everyHitIsWhatWasStoredForThatKeyContainerAndVersion() throws {
        var generator = SystemRandomNumberGenerator()
        let root = Container()
        let containers = [root, root.makeChild(), root.makeChild(), root.makeChild().makeChild()]
        let names: [String?] = [nil, "a", "b", "long name", "another"]
        func key(_ index: Int) -> ServiceKey {
            let type: Any.Type = [LCA.self, LCB.self, LCC.self][index % 3]
            return ServiceKey(serviceType: type, name: names[index / 3 % names.count], argumentsType: Void.self)
        }
        // Every key registered in the root: each container's look-up finds the root's entry.
        for index in 0..<15 {
            let key = key(index)
            switch index % 3 {
            case 0: root.register(LCA.self, name: key.name) { _ in LCA() }
            case 1: root.register(LCB.self, name: key.name) { _ in LCB() }
            default: root.register(LCC.self, name: key.name) { _ in LCC() }
            }
        }
        let cache = LookupCache()
        var model: [ModelKey: ObjectIdentifier] = [:]
        var hits = 0
        for step in 0..<20_000 {
            let container = containers[Int.random(in: 0..<containers.count, using: &generator)]
            let key = key(Int.random(in: 0..<15, using: &generator))
            if step % 997 == 0 { container.changed() }  // A new version: every earlier look-up is stale.
            let version = container.version.loadInTotalOrder()
            let modelKey = ModelKey(key: key, container: ObjectIdentifier(container), version: version)
            if let hit = cache.hit(key, in: container) {
                hits += 1
                let expected = try #require(model[modelKey], "step \(step): a hit for \(key) that was never stored")
                #expect(ObjectIdentifier(hit.found.entry.object) == expected, "step \(step): \(key) hit another entry")
                #expect(hit.found.owner === root)
            } else {
                let lookup = container.lookupForResolution(key, cache: nil)
                guard let found = lookup.found else {
                    Issue.record("step \(step): \(key) is registered in the root, but the look-up found nothing")
                    return
                }
                #expect(found.entry.withObject { $0.key } == key)
                cache.store(key, in: container, version: version, found: found, lookup: lookup)
                model[modelKey] = ObjectIdentifier(found.entry.object)
                // Just stored: the next look-up of the same key hits it.
                #expect(cache.hit(key, in: container)?.found.entry == found.entry)
            }
        }
        #expect(hits > 5_000, "the cache hit only \(hits) times in 20,000 look-ups of 15 keys from 4 containers")
        withExtendedLifetime(containers) {}
    }

    /// Request children, made one after another, each look up a value registered in it into the two slots that an
    /// app-wide service's look-up from the root shares: each replaces the last request's, and the app-wide one stays.
    @Test func aRequestChildsLookUpReplacesTheLastOnesAndKeepsTheAppsThatSharesItsSlots() throws {
        let root = Container()
        root.register(LCA.self) { _ in LCA() }
        let appKey = ServiceKey(LCA.self)
        let requestKey = ServiceKey(LCB.self)
        let slots = LookupCache.index(appKey, from: root)
        var passedOver: [Container] = []  // kept, so that the next child is made elsewhere
        func requestChildSharingTheSlots() -> Container {
            while true {
                let child = root.makeChild()
                if LookupCache.index(requestKey, from: child) == slots {
                    child.register(LCB.self) { _ in LCB() }
                    return child
                }
                passedOver.append(child)
            }
        }

        let cache = LookupCache()
        try cache.lookUpAndStore(appKey, from: root)
        for request in 1...4 {
            let child = requestChildSharingTheSlots()
            try cache.lookUpAndStore(requestKey, from: child)
            #expect(cache.hit(requestKey, in: child) != nil, "request \(request)")
            #expect(cache.hit(appKey, in: root) != nil, "request \(request): the app-wide look-up was evicted")
        }
        withExtendedLifetime(passedOver) {}
    }

    /// Two names of one length share a key's slots: looked up in turn from one container, both stay cached.
    @Test func twoNamesOfOneLengthLookedUpInTurnBothStay() throws {
        let root = Container()
        root.register(LCA.self, name: "en") { _ in LCA() }
        root.register(LCA.self, name: "fr") { _ in LCA() }
        let english = ServiceKey(LCA.self, name: "en")
        let french = ServiceKey(LCA.self, name: "fr")
        #expect(LookupCache.index(english, from: root) == LookupCache.index(french, from: root))
        let cache = LookupCache()
        for key in [english, french] { try cache.lookUpAndStore(key, from: root) }
        #expect(cache.hit(english, in: root) != nil)
        #expect(cache.hit(french, in: root) != nil)
    }
}

extension LookupCache {
    /// Looks `key` up from `container` under the locks, as a resolve that missed the cache does, and stores it.
    fileprivate func lookUpAndStore(_ key: ServiceKey, from container: Container) throws {
        let version = container.version.loadInTotalOrder()
        let lookup = container.lookupForResolution(key, cache: nil)
        let found = try #require(lookup.found as Found?, "\(key) is registered")
        store(key, in: container, version: version, found: found, lookup: lookup)
    }
}
