internal import ArborPrimitives

extension Resolution {
    /// Where `key` is registered, for a look-up that starts in `container`: from the thread's cache, or found under
    /// the registries' locks and then cached.
    @inline(__always)
    func find(_ key: ServiceKey, in container: Container) -> Found? {
        find(key, in: .passUnretained(container))
    }

    /// `container` unretained: it is the resolution's context, which the caller keeps alive.
    @inline(__always)
    func find(_ key: ServiceKey, in container: Unmanaged<Container>) -> Found? {
        let version = container._withUnsafeGuaranteedRef { $0.version }.loadInTotalOrder()
        let slot = withCache { $0.hit(key, at: container.toOpaque(), version: version) }
        if let slot { return Found(entry: Unretained(slot.pointee.entry!), owner: Unretained(slot.pointee.owner!)) }
        return findSlowly(key, in: container.takeUnretainedValue())
    }

    func findSlowly(_ key: ServiceKey, in container: Container) -> Found? {
        let lookup = container.lookupForResolution(key)
        guard let found = lookup.found else { return nil }
        withCache { $0.store(key, in: container, version: lookup.version, found: found, lookup: lookup) }
        return found
    }

    /// Where `key` is registered now, read under the registries' locks even if the cache has an answer: after a
    /// change the cache may not have seen yet.
    func findUncached(_ key: ServiceKey, in container: Container) -> Found? {
        findSlowly(key, in: container)
    }
}
