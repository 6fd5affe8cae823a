internal import ArborPrimitives

extension CreationCoordinator {
    // MARK: Publishing a complete build at once

    // A resolution publishes what it builds when it ends, hooks and all. A build may be published sooner, as it is
    // recorded, when it is complete as its factory returns — its outermost build, or any build of an `async`
    // resolution (the caller decides: `Resolution.publishedAtOnce`) — if (the caller checks the first):
    // - no hook of it, or of anything the resolution built before it, is left to run;
    // - every other claim of the resolution still builds: its factory has not returned. So nothing the instance was
    //   wired with waits to be published, and it never shares an instance that could still be abandoned;
    // - its group, if it has one (another resolution waited for one of its solo builds), is its own: no other member,
    //   whose hooks may not have run, shares instances with it, and none has failed.
    //
    // The outermost build: one critical section of the storage's lock instead of two, without publishing's ordering
    // (measured: `weak_build` 4,281 → 3,747 instructions).
    //
    // An `async` resolution's every build: it may suspend between builds (an `async` factory awaits its network, a
    // wait for another task's build), and what it built before would be shared with its own group only until the
    // whole resolve had finished. A synchronous resolve that needs one of those instances meanwhile blocks its thread
    // for all that time; inside tasks that thread is one of the few Swift runs tasks on, and the `async` resolve needs
    // one of them to go on: with a blocked resolve on each, nothing would. A failed `async` resolve keeps what it
    // published: complete, and wired with nothing the failure abandons.

    /// Records and publishes the instance of `member`'s build of `storage`, if nothing else `member` claimed waits to
    /// be published and its group, if any, is its own (the caller checks the hooks: see above). `false`, having done
    /// nothing but join a group made for a promoted build, otherwise: the caller records it with `built`.
    func builtAndPublished<Service>(
        _ instance: Service, in storage: InstanceStorage, by member: Member, claims: inout Claims
    ) -> Bool {
        if claims.group == nil, !claims.solo.wasPromoted {
            guard claims.solo.othersStillBuild(besides: storage) else { return false }
            if let (replaced, publication) = storage.builtAndPublishedSolo(
                instance, by: member, sequence: Self.nextBuildSequence())
            {
                claims.solo.removePublished(storage)
                withExtendedLifetime((replaced, publication.dropped)) {}
                if let released = publication.released { ReleasedInstance.run([released]) }
                return true
            }
            // Another resolution waits for it: its builder is the group made for this member now.
            claims.solo.wasPromoted = true
        }
        return builtAndPublishedInGroup(instance, in: storage, by: member, claims: &claims)
    }

    /// `builtAndPublished` for a member with a group, or whose solo builds were promoted: it joins its group, and
    /// publishes from it under the lock, waking the resolutions that wait for the instance.
    @inline(never)
    private func builtAndPublishedInGroup<Service>(
        _ instance: Service, in storage: InstanceStorage, by member: Member, claims: inout Claims
    ) -> Bool {
        let sequence = Self.nextBuildSequence()
        lock.lock()
        join(member, group: &claims.group, solo: &claims.solo)
        guard let group = claims.group.map(Self.root), group.members == [member], group.failure == nil,
            let index = group.claims.firstIndex(where: { $0.storage === storage }),
            !group.claims.contains(where: { $0.storage !== storage && $0.storage.isBuilt })
        else {
            lock.unlock()
            return false
        }
        let replaced = storage.built(instance, sequence: sequence)
        storage.builder = nil
        storage.isBuilt = false
        let publication = storage.publish()
        // The claim goes after the lock: it may be the last reference to its container.
        let claim = group.claims.remove(at: index)
        lock.wakeAll()
        lock.unlock()
        withExtendedLifetime((replaced, publication.dropped, claim)) {}
        if let released = publication.released { ReleasedInstance.run([released]) }
        return true
    }
}
