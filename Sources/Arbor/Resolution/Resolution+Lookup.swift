internal import ArborPrimitives

extension Resolution {
    /// Where `key` is registered, for a look-up that starts in `container`: from the thread's cache, or found under
    /// the registries' locks and then cached.
    @inline(__always)
    func find(_ key: ServiceKey, in container: Container) -> Found? {
        find(key, in: Unretained(container, retainedInChecks: false))
    }

    /// `container` unretained: it is the resolution's context, which the caller keeps alive.
    ///
    /// A container that never registered the key's type finds what its parent finds: the parent's answer, when the
    /// thread has it in its cache, is taken first, without the container's lock and without caching it again for the
    /// container. (Measured: a request child's first look-ups of the services its root registers took a lock and
    /// filled a cache slot each; without them, a request of 10 objects went from 24,100 to 20,760 instructions. Asked
    /// before the container's own slot, which a request's child never has: a probe of the cache and an out-of-line
    /// call fewer a look-up, `request_scope` 17,345 → 16,356 instructions.) Only one level up: a look-up from deeper
    /// in a tree goes the long way once and is cached for each container on its way, and then takes one cache hit, its
    /// parent's (`child_depth_20` 1,287 → 1,303: the parent's version read where it read its own).
    @inline(__always)
    func find(_ key: ServiceKey, in container: Unretained<Container>) -> Found? {
        if let parent = container.withObject({ $0.unretainedParent }), !container.withObject({ $0.mayRegister(key) }),
            let hit = withCache({ $0.hit(key, in: parent) })
        {
            return hit.found
        }
        if let hit = withCache({ $0.hit(key, in: container) }) { return hit.found }
        return findSlowly(key, in: container)
    }

    /// `find`, after the thread's cache had nothing valid for `container` or, if it never registered the key's
    /// type, for its parent: looked up under the registries' locks, and cached.
    ///
    /// Neither `container` nor its parent is retained. (Measured: a retain and a release of the parent, a request's
    /// root, on each of a request child's first look-ups; in a server both cores write that one counter.)
    ///
    /// Never inlined: it is the slow path, and its locals (a look-up, a cache slot) inlined into the resolver's
    /// `resolve` made that frame 240 bytes larger, a level of a deep graph 1,008 → 1,248 bytes (the stack suite, in
    /// a release build).
    @inline(never)
    func findSlowly(_ key: ServiceKey, in container: Unretained<Container>) -> Found? {
        container.withObject { container in
            withCache { cache in
                // Written out, not `lookUpAndRemember`: on a request child's first look-ups, the shared helper cost
                // 700 instructions a request.
                let lookup = container.lookupForResolution(key, cache: cache)
                guard let found = lookup.found else { return nil }
                cache.store(key, in: container, version: lookup.version, found: found, lookup: lookup)
                return found
            }
        }
    }

    /// Where `key` is registered now, read under the registries' locks even if the cache has an answer: after a
    /// change the cache may not have seen yet.
    ///
    /// Never inlined: every resolve calls it, rarely (after a registration changed under it), and inlined into them it
    /// made their frames several times larger (measured in a release build: a chain of permanent services with hooks
    /// took 1.5 KB of stack a level and ran out of a 256 KB stack at 175 levels, before the depth limit of 200).
    /// Whether the optimiser inlines it otherwise depends on what else the module holds.
    @inline(never)
    func findUncached(_ key: ServiceKey, in container: Container) -> Found? {
        withCache { container.lookUpAndRemember(key, in: $0, uncached: true).found }
    }
}
