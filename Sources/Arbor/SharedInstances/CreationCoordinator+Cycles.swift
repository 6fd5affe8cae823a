internal import ArborPrimitives

extension CreationCoordinator {
    // MARK: Cycles

    enum Cycle {
        case none
        /// The chain leads back through a resolution suspended under a nested one on its thread.
        case throughNesting
        /// The chain leads to a resolution up the waiting member's ``Lineage``, which waits for the member's task.
        case throughChildTask
        /// The chain leads back, but every link is inside the waiting member's own group: members wait for each
        /// other's factories.
        case withinGroup
        /// The chain leads back through these groups' waits only: merging them lets every member go on.
        case merge([CreationGroup])
    }

    /// What a chain of waits reaches besides a cycle.
    struct Reach {
        /// An `async` resolution, which may need any actor to go on.
        var task = false
        /// An `async` resolution that may be suspended: in a wait of its own, or awaiting an `async` factory or hook
        /// while it holds claims (``awaiting``). It needs a thread to go on.
        var suspendedTask = false
    }

    struct Visit: Hashable {
        let thread: ThreadID
        let throughNesting: Bool
    }

    /// Follows every chain of waits that would start with `member` waiting for `target`: whether it closes, and
    /// whether it reaches an `async` resolution, suspended or not.
    func findCycle(
        from member: Member, waitingFor target: Target, own: CreationGroup?
    ) -> (cycle: Cycle, reach: Reach) {
        var reach = Reach()
        var throughNesting = false
        var cycleGroups: [CreationGroup] = []
        var closes = false
        var visited: Set<Visit> = []
        // Empty unless the member's resolve went through a resolver from another task or thread (``Lineage``).
        let lineage = Lineage.links
        var throughChildTask = false
        var pending: [(target: Target, nested: Bool, groups: [CreationGroup])] = [(target, false, [])]
        while let (target, nested, groups) = pending.popLast() {
            var groups = groups
            let members: [Member]
            switch target {
            case .storage(let storage, let waiterGroup):
                guard let builder = storage.builder else { continue }  // Not building: the waiter goes on.
                let building = Self.root(builder.group)
                if let waiterGroup, building === Self.root(waiterGroup) {
                    // Built by the waiter's own group: it shares the instance, or waits for that factory.
                    guard !storage.isBuilt else { continue }
                    members = [builder.member]
                } else {
                    members = building.members
                }
                groups.append(building)
            case .completion(let group):
                let root = Self.root(group)
                members = root.members
                groups.append(root)
            }
            for next in members {
                if next.thread.isUnbound, next.thread != member.thread {
                    reach.task = true
                    if waits[next.thread] != nil || awaiting[next.thread] != nil { reach.suspendedTask = true }
                }
                if !lineage.isEmpty, lineage.contains(where: { $0.resolution == next.id }) {
                    // Whatever it waits for now, it will wait for the member's task before it finishes.
                    throughChildTask = true
                    continue
                }
                if next.thread == member.thread {
                    // Back on the waiting member's thread: at the member itself, or at a resolution suspended under
                    // it, which cannot go on before the member does.
                    if next == member, !nested {
                        closes = true
                        cycleGroups += groups
                    } else {
                        throughNesting = true
                    }
                    continue
                }
                guard let wait = waits[next.thread] else { continue }  // Its thread is running.
                let viaNesting = nested || wait.member != next
                guard visited.insert(Visit(thread: next.thread, throughNesting: viaNesting)).inserted else { continue }
                pending.append((wait.target, viaNesting, groups))
            }
        }
        if throughNesting { return (.throughNesting, reach) }
        if throughChildTask { return (.throughChildTask, reach) }
        guard closes else { return (.none, reach) }
        var distinct: [CreationGroup] = own.map { [$0] } ?? []
        for group in cycleGroups.map(Self.root) where !distinct.contains(where: { $0 === group }) {
            distinct.append(group)
        }
        return (distinct.count > 1 ? .merge(distinct) : .withinGroup, reach)
    }

    /// Makes one group of `groups`: the biggest takes the others' members and claims. Wakes every waiting
    /// resolution, so each looks again at what it waits for.
    func merge(_ groups: [CreationGroup]) {
        guard let into = groups.max(by: { $0.members.count < $1.members.count }) else { return }
        for group in groups where group !== into {
            group.mergedInto = into
            into.members += group.members
            into.claims += group.claims
            if into.failure == nil { into.failure = group.failure }
            group.members = []
            group.claims = []
        }
        lock.wakeAll()
    }

}
