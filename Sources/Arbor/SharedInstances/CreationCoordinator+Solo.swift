internal import ArborPrimitives

extension CreationCoordinator {
    // MARK: Solo builds

    // A resolution that builds instances nothing else needs meanwhile — a request's unit of work in the request's own
    // container, a singleton's first build — needs no group and no waits: it claims the storages *solo*, under each
    // container's lock alone, and publishes them itself when it finishes (`acquire`, `built`, `finish`). (Measured:
    // the coordinator's lock and bookkeeping were 3,400 of the 11,500 instructions a per-container build took, and
    // every thread of a server building its requests' instances took that one lock.)
    //
    // Only a resolution without a group builds solo, and the first time it needs the coordinator it *joins*: its solo
    // claims become its group's. Another resolution that meets a solo build *promotes* it: it makes a group for the
    // builder (one per builder, in `promotedGroups`), makes it the storage's builder, and waits as for any build. The
    // builder learns of it at its next solo step on that storage — each checks the storage under its lock — and
    // joins then; every solo claim ends in such a step (it is recorded, then published or abandoned), so no promoted
    // group is left behind. A promoted group's one member is its builder, which is not waiting (a resolution that
    // waits has joined), so no cycle of waits goes through the group and no merge touches it before its member joins.

    /// Publishes `member`'s solo builds, oldest first. `true` if one of them had been promoted: the rest, from that
    /// one on, are still `solo`'s, and the member joins the coordinator to finish.
    func publishSolo(_ member: Member, solo: inout SoloClaims) -> Bool {
        var released: [ReleasedInstance] = []
        // The first dropped value needs no array: a weak build drops one, its box (measured: the array was an
        // allocation and 150 of weak_build's 4,800 instructions).
        var dropped: StoredValue?
        var moreDropped: [StoredValue] = []
        defer {
            if !released.isEmpty { ReleasedInstance.run(released) }
            withExtendedLifetime((dropped, moreDropped)) {}
        }
        solo.sortByBuild()
        var published = 0
        for storage in solo.storages {
            guard let publication = storage.publishSolo(by: member) else {
                solo.removeFirst(published)
                solo.wasPromoted = true
                return true
            }
            if let value = publication.dropped {
                if dropped == nil { dropped = value } else { moreDropped.append(value) }
            }
            if let instance = publication.released { released.append(instance) }
            published += 1
        }
        solo.removeAll()
        return false
    }

    /// Hands a solo build to the coordinator: from now on its builder's group, made here if it has none, speaks for
    /// it. Call with the lock held.
    func promote(_ storage: InstanceStorage) {
        guard let build = storage.promote() else { return }  // Published or abandoned meanwhile.
        let group: CreationGroup
        if let existing = promotedGroups[build.member] {
            group = Self.root(existing)
        } else {
            group = CreationGroup(build.member)
            promotedGroups[build.member] = group
        }
        group.claim(storage, by: build.member, isBuilt: build.isBuilt)
    }

    /// Makes `member`'s solo claims its group's: the group made when one of them was promoted, or a new one. Call
    /// with the lock held, before the member does anything else with the coordinator.
    func join(_ member: Member, group: inout CreationGroup?, solo: inout SoloClaims) {
        guard group == nil else {
            internalInvariant(solo.storages.isEmpty, "a resolution with a group claims nothing solo")
            return
        }
        let promoted = promotedGroups.removeValue(forKey: member)
        guard !solo.storages.isEmpty || promoted != nil else {
            solo.removeAll()
            return
        }
        let joined = promoted.map(Self.root) ?? CreationGroup(member)
        for storage in solo.storages {
            let ended = storage.endSolo(by: member)
            guard !ended.wasPromoted else { continue }  // Its builder is the group already.
            joined.claim(storage, by: member, isBuilt: ended.isBuilt)
        }
        solo.removeAll()
        group = joined
    }

}
