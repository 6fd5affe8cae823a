import Arbor
import ArborTestSupport
import Foundation
import Testing

// Thread-safety tests for API.md §7: `Container` is `Sendable`; any number of threads or tasks may resolve at once
// and register while others resolve; a permanent instance is created exactly once and no thread sees it before its
// `initCompleted` hooks finished; no deadlock when two threads enter a cycle of permanent services from opposite
// ends; graph state is per resolution.
//
// Every multi-threaded test waits with a timeout, so a deadlock fails the test instead of hanging the run. Worker
// threads never call `#expect` themselves: they collect failures in a `ProblemLog` that the test checks at the
// end. The suite also runs under ThreadSanitizer in CI (`swift test --sanitize=thread`); plain `var` properties
// written by hooks and read by other threads are deliberate, so TSan checks that the container orders them.

@Suite(.serialized)
struct ThreadSafetyTests {

    // MARK: 1. Container is Sendable

    @Test func containerIsSendableAndUsableFromTasksAndThreads() async throws {
        let container = Container()
        container.register(TSShared.self) { _ in TSShared() }.inObjectScope(.permanent)
        container.register(TSNode.self) { _ in TSNode() }

        // Compile-time checks: these lines only build if the types are Sendable.
        requireSendable(container)
        requireSendable(container as any Resolver)
        requireSendable(container.makeChild())

        let fromTask = try await Task.detached { try container.resolve(TSShared.self) }.value
        let fromThreads = TSLocked<[TSShared]>([])
        let failures = ProblemLog()
        let finished = await runOnThreads(4) { _ in
            do {
                let shared = try container.resolve(TSShared.self)
                fromThreads.withLock { $0.append(shared) }
            } catch {
                failures.record("resolve threw \(error)")
            }
        }
        #expect(finished, "threads did not finish within the timeout")
        failures.expectNone()
        let fromHere = try await container.resolve(TSShared.self)
        #expect(fromTask === fromHere)
        #expect(fromThreads.value.count == 4)
        #expect(fromThreads.value.allSatisfy { $0 === fromHere })
    }

    // MARK: 2. Eight threads, all four lifetimes

    @Test func eightThreadsResolveAllFourLifetimes() async throws {
        let container = Container()
        let sharedBuilds = TSLocked(0)
        container.register(TSShared.self) { _ in
            sharedBuilds.withLock { $0 += 1 }
            return TSShared()
        }.inObjectScope(.permanent)
        container.register(TSSession.self) { _ in TSSession() }.inObjectScope(.weak)
        container.register(TSScratch.self) { _ in TSScratch() }.inObjectScope(.weak)
        container.register(TSNode.self) { _ in TSNode() }.inObjectScope(.graph)
        container.register(TSTool.self) { _ in TSTool() }.inObjectScope(.transient)
        container.register(TSPart.self) { r in
            TSPart(node: try r.resolve(), tool: try r.resolve(), scratch: try r.resolve())
        }.inObjectScope(.transient)
        container.register(TSRoot.self) { r in
            TSRoot(
                node: try r.resolve(), left: try r.resolve(), right: try r.resolve(), shared: try r.resolve(),
                session: try r.resolve())
        }.inObjectScope(.transient)

        // The test keeps the weak session alive, so every resolve on every thread must share it.
        let session = try await container.resolve(TSSession.self)
        let threadCount = 8
        // A quarter under a sanitizer, as the randomized suites: ThreadSanitizer took 80 to 115 s for the full count.
        let iterations = TestEnvironment.runsUnderSanitizer ? 2_500 : 10_000
        let failures = ProblemLog()
        let sharedSeen = TSLocked<[TSShared]>([])
        let resolves = TSLocked(0)

        let finished = await runOnThreads(threadCount) { _ in
            var firstShared: TSShared?
            var previous: TSRoot?
            var done = 0
            for _ in 0..<iterations {
                let root: TSRoot
                do {
                    root = try container.resolve(TSRoot.self)
                } catch {
                    failures.record("resolve threw \(error)")
                    continue
                }
                done += 1
                failures.check(
                    root.left.node === root.node && root.right.node === root.node,
                    "graph node not shared within one resolve")
                failures.check(root.left !== root.right, "transient part shared within one resolve")
                failures.check(root.left.tool !== root.right.tool, "transient tool shared within one resolve")
                failures.check(
                    root.left.scratch === root.right.scratch,
                    "weak instance not shared within the resolution that built it")
                failures.check(root.session === session, "weak instance replaced while the test holds it")
                if let previous {
                    failures.check(previous.node !== root.node, "graph node reused by the next resolve")
                    failures.check(previous.left.tool !== root.left.tool, "transient tool reused by the next resolve")
                }
                if let firstShared {
                    failures.check(root.shared === firstShared, "permanent instance changed")
                } else {
                    firstShared = root.shared
                }
                previous = root
            }
            if let firstShared { sharedSeen.withLock { $0.append(firstShared) } }
            resolves.withLock { $0 += done }
        }

        #expect(finished, "threads did not finish within the timeout")
        failures.expectNone()
        #expect(resolves.value == threadCount * iterations)
        let shared = try await container.resolve(TSShared.self)
        #expect(sharedSeen.value.count == threadCount)
        #expect(sharedSeen.value.allSatisfy { $0 === shared }, "threads saw different permanent instances")
        #expect(sharedBuilds.value == 1, "the permanent factory ran \(sharedBuilds.value) times")
        #expect(try await container.resolve(TSSession.self) === session)
        withExtendedLifetime(session) {}
    }

    // MARK: 3. Exactly one permanent instance under contention

    @Test func permanentIsBuiltExactlyOnceUnderContention() async {
        for round in 0..<10 {
            let container = Container()
            let builds = TSLocked(0)
            container.register(TSSlow.self) { _ in
                builds.withLock { $0 += 1 }
                usleep(1000)  // widens the window in which the other threads arrive
                return TSSlow(dependency: TSDependency(label: "own"))
            }.inObjectScope(.permanent)

            let seen = TSLocked<[TSSlow]>([])
            let failures = ProblemLog()
            let finished = await runOnThreads(8) { _ in
                do {
                    let slow = try container.resolve(TSSlow.self)
                    seen.withLock { $0.append(slow) }
                } catch {
                    failures.record("resolve threw \(error)")
                }
            }
            #expect(finished, "round \(round): threads did not finish within the timeout")
            failures.expectNone()
            #expect(builds.value == 1, "round \(round): the permanent factory ran \(builds.value) times")
            let instances = seen.value
            #expect(instances.count == 8)
            #expect(instances.allSatisfy { $0 === instances.first }, "round \(round): threads got different instances")
        }
    }

    @Test func parentPermanentIsBuiltExactlyOnceForConcurrentChildren() async throws {
        for round in 0..<10 {
            let parent = Container()
            let builds = TSLocked(0)
            parent.register(TSDependency.self) { _ in TSDependency(label: "parent") }
            parent.register(TSSlow.self) { r in
                builds.withLock { $0 += 1 }
                usleep(1000)
                return TSSlow(dependency: try r.resolve())
            }.inObjectScope(.permanent)
            // Every child overrides the dependency; the parent's permanent must not pick up any override.
            let children = (0..<8).map { index in
                let child = parent.makeChild()
                child.register(TSDependency.self) { _ in TSDependency(label: "child \(index)") }
                return child
            }

            let seen = TSLocked<[TSSlow]>([])
            let failures = ProblemLog()
            let finished = await runOnThreads(children.count) { index in
                do {
                    let slow = try children[index].resolve(TSSlow.self)
                    seen.withLock { $0.append(slow) }
                } catch {
                    failures.record("resolve threw \(error)")
                }
            }
            #expect(finished, "round \(round): threads did not finish within the timeout")
            failures.expectNone()
            #expect(builds.value == 1, "round \(round): the permanent factory ran \(builds.value) times")
            let instances = seen.value
            #expect(instances.count == children.count)
            #expect(instances.allSatisfy { $0 === instances.first }, "round \(round): children got different instances")
            #expect(
                instances.first?.dependency.label == "parent", "a child's override leaked into the parent's permanent")
            #expect(try await parent.resolve(TSSlow.self) === instances.first)
        }
    }

    // MARK: 4. Two threads entering a permanent cycle from opposite ends

    /// A's factory builds A alone and A's hook resolves B; B's factory resolves A.
    @Test func oppositeEndsOfPermanentCycleWithOneHook() async {
        let container = Container()
        container.register(TSCycleA.self) { _ in
            usleep(100)
            return TSCycleA()
        }
        .inObjectScope(.permanent)
        .initCompleted { r, a in a.b = try r.resolve(TSCycleB.self) }
        container.register(TSCycleB.self) { r in
            usleep(100)
            let b = TSCycleB()
            b.a = try r.resolve(TSCycleA.self)
            return b
        }.inObjectScope(.permanent)

        await checkOppositeEnds(of: container, rounds: 300)
    }

    /// Both factories build their service alone; each hook resolves the other service.
    @Test func oppositeEndsOfPermanentCycleWiredOnlyByHooks() async {
        let container = Container()
        container.register(TSCycleA.self) { _ in
            usleep(100)
            return TSCycleA()
        }
        .inObjectScope(.permanent)
        .initCompleted { r, a in a.b = try r.resolve(TSCycleB.self) }
        container.register(TSCycleB.self) { _ in
            usleep(100)
            return TSCycleB()
        }
        .inObjectScope(.permanent)
        .initCompleted { r, b in b.a = try r.resolve(TSCycleA.self) }

        await checkOppositeEnds(of: container, rounds: 300)
    }

    /// Runs `rounds` rounds in which one thread resolves A while another resolves B at the same moment, and checks
    /// that both see one fully wired pair. The permanent scope is reset between rounds.
    private func checkOppositeEnds(
        of container: Container, rounds: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let barrier = TSBarrier(2)
        let results = TSLocked<(a: TSCycleA?, b: TSCycleB?)>((nil, nil))
        let completedRounds = TSLocked(0)
        let failures = ProblemLog()

        let finished = await runOnThreads(2) { index in
            for round in 0..<rounds {
                barrier.arriveAndWait()  // both threads start the round together
                do {
                    if index == 0 {
                        let a = try container.resolve(TSCycleA.self)
                        results.withLock { $0.a = a }
                    } else {
                        let b = try container.resolve(TSCycleB.self)
                        results.withLock { $0.b = b }
                    }
                } catch {
                    failures.record("round \(round), thread \(index): resolve threw \(error)")
                }
                barrier.arriveAndWait()  // both threads finished resolving
                if index == 0 {
                    let (a, b) = results.withLock { results in
                        defer { results = (nil, nil) }
                        return results
                    }
                    if let a, let b {
                        failures.check(a.b === b, "round \(round): A.b is not the B the other thread resolved")
                        failures.check(b.a === a, "round \(round): B.a is not the A the other thread resolved")
                        // Break the strong cycle so the dropped pair is freed.
                        a.b = nil
                        b.a = nil
                    }
                    container.resetObjectScope(.permanent)
                    completedRounds.withLock { $0 += 1 }
                }
                barrier.arriveAndWait()  // the reset is done before the next round starts
            }
        }
        #expect(
            finished, "deadlock: only \(completedRounds.value) of \(rounds) rounds completed within the timeout",
            sourceLocation: sourceLocation)
        failures.expectNone(sourceLocation: sourceLocation)
        #expect(completedRounds.value == rounds, sourceLocation: sourceLocation)
    }

    // MARK: 5. Registering while others resolve

    @Test func registeringWhileOtherThreadsResolve() async {
        let container = Container()
        let child = container.makeChild()
        let published = TSLocked(0)  // the newest version whose registration is complete
        let stop = TSLocked(false)
        let scopes: [ObjectScope] = [.transient, .graph, .weak, .permanent]
        container.register(TSDependency.self) { _ in TSDependency(label: "parent") }
        container.register(TSVersioned.self) { r in TSVersioned(version: 0, dependency: try r.resolve()) }

        let failures = ProblemLog()
        let resolveCounts = TSLocked<[Int]>([])
        let writerIterations = 2_000
        let finished = await runOnThreads(4) { index in
            if index == 0 {
                // The writer: churns unrelated keys, replaces the dependency, and re-registers the key the others
                // resolve, in every scope.
                for version in 1...writerIterations {
                    container.register(TSTool.self, name: "k\(version % 8)") { _ in TSTool() }
                    container.unregister(TSTool.self, name: "k\((version + 4) % 8)")
                    container.register(TSDependency.self) { _ in TSDependency(label: "parent") }
                        .inObjectScope(version % 2 == 0 ? .permanent : .graph)
                    container.register(TSVersioned.self) { r in
                        TSVersioned(version: version, dependency: try r.resolve())
                    }.inObjectScope(scopes[version % scopes.count])
                    published.withLock { $0 = version }
                    if version % 3 == 0 {
                        child.register(TSDependency.self) { _ in TSDependency(label: "child") }
                    } else if version % 3 == 1 {
                        child.removeAll()
                    }
                    if version % 16 == 0 { container.resetObjectScope(.permanent) }
                    if version % 16 == 8 { container.resetObjectScope(.weak) }
                }
                stop.withLock { $0 = true }
                return
            }
            // The resolvers: thread 3 resolves through the child, whose registrations come and go.
            let resolver: Container = index == 3 ? child : container
            var count = 0
            repeat {
                count += 1
                let low = published.value
                do {
                    let versioned = try resolver.resolve(TSVersioned.self)
                    let high = published.value
                    // Registered before `low` was published, or by the writer since (at most one not yet published).
                    failures.check(
                        versioned.version >= low && versioned.version <= high + 1,
                        "got version \(versioned.version), expected one in \(low)...\(high + 1)")
                    let label = versioned.dependency.label
                    failures.check(
                        label == "parent" || (index == 3 && label == "child"), "unexpected dependency \(label)")
                } catch {
                    failures.record("resolving the always-registered key threw \(error)")
                }
                do {
                    _ = try resolver.resolve(TSTool.self, name: "k\(count % 8)")
                } catch let error as ResolutionError {
                    if case .notRegistered = error.reason {
                    } else {
                        failures.record("resolving a churned key threw \(error)")
                    }
                } catch {
                    failures.record("resolve threw a non-ResolutionError \(error)")
                }
            } while !stop.value
            resolveCounts.withLock { $0.append(count) }
        }
        #expect(finished, "threads did not finish within the timeout")
        failures.expectNone()
        #expect(resolveCounts.value.count == 3)
        #expect((try? await container.resolve(TSVersioned.self))?.version == writerIterations)
    }

    // MARK: 6. Graph state is per resolution

    @Test func graphInstancesAreNeverSharedBetweenResolutions() async {
        let container = Container()
        let stamps = TSLocked(0)
        container.register(TSStamped.self) { _ in
            TSStamped(
                serial: stamps.withLock { serial in
                    serial += 1
                    return serial
                })
        }.inObjectScope(.graph)
        container.register(TSStampHolder.self) { r in TSStampHolder(stamped: try r.resolve()) }
            .inObjectScope(.transient)
        container.register(TSGraphRoot.self) { r in
            TSGraphRoot(stamped: try r.resolve(), first: try r.resolve(), second: try r.resolve())
        }
        .inObjectScope(.graph)
        .initCompleted { r, root in root.fromHook = try r.resolve(TSStamped.self) }

        let threadCount = 4
        let iterations = 5_000
        let failures = ProblemLog()
        let serialSets = TSLocked<[Set<Int>]>([])
        let finished = await runOnThreads(threadCount) { _ in
            var serials = Set<Int>()
            for _ in 0..<iterations {
                do {
                    let root = try container.resolve(TSGraphRoot.self)
                    let serial = root.stamped.serial
                    failures.check(
                        root.first.stamped === root.stamped && root.second.stamped === root.stamped,
                        "graph instance not shared within one resolve")
                    failures.check(root.fromHook === root.stamped, "a hook did not share the resolution's graph")
                    failures.check(serials.insert(serial).inserted, "graph instance \(serial) seen in two resolutions")
                } catch {
                    failures.record("resolve threw \(error)")
                }
            }
            serialSets.withLock { $0.append(serials) }
        }
        #expect(finished, "threads did not finish within the timeout")
        failures.expectNone()
        let sets = serialSets.value
        let union = sets.reduce(into: Set<Int>()) { $0.formUnion($1) }
        #expect(sets.count == threadCount)
        // Every resolution built its own instance, and no two resolutions (on any threads) shared one.
        #expect(union.count == threadCount * iterations)
        #expect(stamps.value == threadCount * iterations)
    }

    // MARK: 7. No thread sees a permanent before its hooks finished

    @Test func noThreadSeesPermanentBeforeItsHooksFinished() async {
        for round in 0..<10 {
            let parent = Container()
            let hookRuns = TSLocked(0)
            parent.register(TSDependency.self) { _ in TSDependency(label: "parent") }
            parent.register(TSHooked.self) { _ in
                usleep(200)
                return TSHooked()
            }
            .inObjectScope(.permanent)
            .initCompleted { r, hooked in
                hookRuns.withLock { $0 += 1 }
                usleep(2000)  // the other threads arrive while the hooks run
                hooked.dependency = try r.resolve(TSDependency.self)
            }
            .initCompleted { _, hooked in
                usleep(500)
                hooked.ready = true
            }
            let children = (0..<4).map { _ in parent.makeChild() }

            let seen = TSLocked<[TSHooked]>([])
            let failures = ProblemLog()
            // Half the threads resolve from the parent, half from children.
            let finished = await runOnThreads(8) { index in
                do {
                    let resolver = index.isMultiple(of: 2) ? parent : children[index / 2]
                    let hooked = try resolver.resolve(TSHooked.self)
                    failures.check(hooked.ready, "round \(round): thread \(index) saw the instance before its hooks")
                    failures.check(hooked.dependency != nil, "round \(round): thread \(index) saw an unwired instance")
                    seen.withLock { $0.append(hooked) }
                } catch {
                    failures.record("resolve threw \(error)")
                }
            }
            #expect(finished, "round \(round): threads did not finish within the timeout")
            failures.expectNone()
            #expect(hookRuns.value == 1, "round \(round): hooks ran \(hookRuns.value) times")
            let instances = seen.value
            #expect(instances.count == 8)
            #expect(instances.allSatisfy { $0 === instances.first })
        }
    }

    // MARK: 8. A resolver used from another thread

    @Test func resolverHandedToAnotherThreadStartsANewResolution() async throws {
        let container = Container()
        // Depth 1: a remote resolve that joined the waiting resolution (depth 1) would need depth 2 for the pair's
        // nodes and fail; a new resolution needs only depth 1.
        container.maxResolutionDepth = 1
        container.register(TSNode.self) { _ in TSNode() }.inObjectScope(.graph)
        container.register(TSShared.self) { _ in TSShared() }.inObjectScope(.permanent)
        container.register(TSNodePair.self) { r in TSNodePair(first: try r.resolve(), second: try r.resolve()) }
        container.register(TSRemoteReport.self) { r in
            let mine = try r.resolve(TSNode.self)
            // Hand the resolver to another thread and wait for it to resolve through it. (Not after resolving a
            // permanent here: that instance is published only when this resolution ends, so the other thread would
            // wait for it while this factory waits for the other thread.)
            let remote = TSLocked<Result<(TSNode, TSNodePair, TSShared), any Error>?>(nil)
            let done = TSLatch(1)
            Thread {
                remote.withLock {
                    $0 = Result {
                        (try r.resolve(TSNode.self), try r.resolve(TSNodePair.self), try r.resolve(TSShared.self))
                    }
                }
                done.countDown()
            }.start()
            guard done.wait(timeout: 20) else { throw TSTimeout() }
            let (remoteNode, remotePair, remoteShared) = try remote.value!.get()
            // Back on the factory's thread, the resolution's own state is intact.
            let again = try r.resolve(TSNode.self)
            let shared = try r.resolve(TSShared.self)
            return TSRemoteReport(
                mine: mine, again: again, shared: shared, remoteNode: remoteNode, remotePair: remotePair,
                remoteShared: remoteShared)
        }

        let failures = ProblemLog()
        let finished = await runOnThreads(2) { _ in
            for _ in 0..<50 {
                do {
                    let report = try container.resolve(TSRemoteReport.self)
                    failures.check(report.again === report.mine, "the factory's graph changed after remote use")
                    failures.check(report.remoteNode !== report.mine, "the other thread joined the factory's graph")
                    failures.check(
                        report.remotePair.first === report.remotePair.second,
                        "the other thread's resolution did not share its own graph")
                    failures.check(
                        report.remotePair.first !== report.mine && report.remotePair.first !== report.remoteNode,
                        "two top-level resolutions on the other thread shared a graph")
                    failures.check(report.remoteShared === report.shared, "the permanent instance differs")
                } catch {
                    failures.record("resolve threw \(error)")
                }
            }
        }
        #expect(finished, "threads did not finish within the timeout")
        failures.expectNone()
    }

    @Test func capturedResolverWorksFromManyThreadsAfterItsResolutionFinished() async throws {
        let container = Container()
        container.register(TSNode.self) { _ in TSNode() }.inObjectScope(.graph)
        container.register(TSNodePair.self) { r in TSNodePair(first: try r.resolve(), second: try r.resolve()) }
        container.register(TSCapture.self) { r in TSCapture(resolver: r, node: try r.resolve()) }
        let capture = try await container.resolve(TSCapture.self)

        let failures = ProblemLog()
        let finished = await runOnThreads(4) { _ in
            var previous: TSNodePair?
            for _ in 0..<1_000 {
                do {
                    let pair = try capture.resolver.resolve(TSNodePair.self)
                    failures.check(pair.first === pair.second, "a new resolution did not share its graph")
                    failures.check(pair.first !== capture.node, "a finished resolution's graph was reused")
                    if let previous { failures.check(previous.first !== pair.first, "two resolutions shared a graph") }
                    previous = pair
                } catch {
                    failures.record("resolve threw \(error)")
                }
            }
        }
        #expect(finished, "threads did not finish within the timeout")
        failures.expectNone()
    }

    // MARK: 9. Swift concurrency

    @Test func resolvesFromManyTasks() async throws {
        let container = Container()
        let sharedBuilds = TSLocked(0)
        container.register(TSShared.self) { _ in
            sharedBuilds.withLock { $0 += 1 }
            usleep(500)
            return TSShared()
        }.inObjectScope(.permanent)
        container.register(TSSession.self) { _ in TSSession() }.inObjectScope(.weak)
        container.register(TSScratch.self) { _ in TSScratch() }.inObjectScope(.weak)
        container.register(TSNode.self) { _ in TSNode() }.inObjectScope(.graph)
        container.register(TSTool.self) { _ in TSTool() }.inObjectScope(.transient)
        container.register(TSPart.self) { r in
            TSPart(node: try r.resolve(), tool: try r.resolve(), scratch: try r.resolve())
        }.inObjectScope(.transient)
        container.register(TSRoot.self) { r in
            TSRoot(
                node: try r.resolve(), left: try r.resolve(), right: try r.resolve(), shared: try r.resolve(),
                session: try r.resolve())
        }.inObjectScope(.transient)
        let session = try await container.resolve(TSSession.self)

        let taskCount = 200
        let resolvesPerTask = 50
        let failures = ProblemLog()
        let sharedSeen = TSLocked<[TSShared]>([])
        // As long as a hung test may take: the tasks wait for Swift's threads for tasks, which a long test alongside
        // may hold for minutes.
        let completed = await completes(within: Watchdog.patience) {
            await withTaskGroup(of: TSShared?.self) { group in
                for _ in 0..<taskCount {
                    group.addTask {
                        var shared: TSShared?
                        for _ in 0..<resolvesPerTask {
                            do {
                                let root = try container.resolve(TSRoot.self)
                                failures.check(
                                    root.left.node === root.node && root.right.node === root.node,
                                    "graph node not shared within one resolve")
                                failures.check(root.left.tool !== root.right.tool, "transient tool shared")
                                failures.check(root.session === session, "weak instance replaced while held")
                                failures.check(shared == nil || root.shared === shared, "permanent instance changed")
                                shared = root.shared
                            } catch {
                                failures.record("resolve threw \(error)")
                            }
                        }
                        return shared
                    }
                }
                for await shared in group {
                    if let shared { sharedSeen.withLock { $0.append(shared) } }
                }
            }
        }
        #expect(completed, "the tasks did not finish within the timeout")
        failures.expectNone()
        let shared = try await container.resolve(TSShared.self)
        #expect(sharedSeen.value.count == taskCount)
        #expect(sharedSeen.value.allSatisfy { $0 === shared })
        #expect(sharedBuilds.value == 1)
        withExtendedLifetime(session) {}
    }
}

// MARK: - Services

private final class TSShared: Sendable {}
private final class TSSession: Sendable {}
private final class TSScratch: Sendable {}
private final class TSNode: Sendable {}
private final class TSTool: Sendable {}

private final class TSPart: Sendable {
    let node: TSNode
    let tool: TSTool
    let scratch: TSScratch
    init(node: TSNode, tool: TSTool, scratch: TSScratch) {
        self.node = node
        self.tool = tool
        self.scratch = scratch
    }
}

private final class TSRoot: Sendable {
    let node: TSNode
    let left: TSPart
    let right: TSPart
    let shared: TSShared
    let session: TSSession
    init(node: TSNode, left: TSPart, right: TSPart, shared: TSShared, session: TSSession) {
        self.node = node
        self.left = left
        self.right = right
        self.shared = shared
        self.session = session
    }
}

private final class TSDependency: Sendable {
    let label: String
    init(label: String) { self.label = label }
}

private final class TSSlow: Sendable {
    let dependency: TSDependency
    init(dependency: TSDependency) { self.dependency = dependency }
}

/// Wired by hooks. Its properties are plain `var`s on purpose: the container must publish it only after the hooks
/// ran, and ThreadSanitizer checks that it orders the hook's writes before other threads' reads.
private final class TSCycleA: @unchecked Sendable {
    var b: TSCycleB?
}

private final class TSCycleB: @unchecked Sendable {
    var a: TSCycleA?
}

private final class TSHooked: @unchecked Sendable {
    var dependency: TSDependency?
    var ready = false
}

private final class TSVersioned: Sendable {
    let version: Int
    let dependency: TSDependency
    init(version: Int, dependency: TSDependency) {
        self.version = version
        self.dependency = dependency
    }
}

private final class TSStamped: Sendable {
    let serial: Int
    init(serial: Int) { self.serial = serial }
}

private final class TSStampHolder: Sendable {
    let stamped: TSStamped
    init(stamped: TSStamped) { self.stamped = stamped }
}

private final class TSGraphRoot: @unchecked Sendable {
    let stamped: TSStamped
    let first: TSStampHolder
    let second: TSStampHolder
    var fromHook: TSStamped?  // set by a hook on the resolving thread
    init(stamped: TSStamped, first: TSStampHolder, second: TSStampHolder) {
        self.stamped = stamped
        self.first = first
        self.second = second
    }
}

private final class TSNodePair: Sendable {
    let first: TSNode
    let second: TSNode
    init(first: TSNode, second: TSNode) {
        self.first = first
        self.second = second
    }
}

private final class TSRemoteReport: Sendable {
    let mine: TSNode
    let again: TSNode
    let shared: TSShared
    let remoteNode: TSNode
    let remotePair: TSNodePair
    let remoteShared: TSShared
    init(
        mine: TSNode, again: TSNode, shared: TSShared, remoteNode: TSNode, remotePair: TSNodePair,
        remoteShared: TSShared
    ) {
        self.mine = mine
        self.again = again
        self.shared = shared
        self.remoteNode = remoteNode
        self.remotePair = remotePair
        self.remoteShared = remoteShared
    }
}

private final class TSCapture: Sendable {
    let resolver: any Resolver
    let node: TSNode
    init(resolver: any Resolver, node: TSNode) {
        self.resolver = resolver
        self.node = node
    }
}

private struct TSTimeout: Error {}

// MARK: - Synchronisation helpers

/// Compiles only for Sendable values.
private func requireSendable<T: Sendable>(_: T) {}

/// A value shared between threads, guarded by a lock.
private final class TSLocked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value { withLock { $0 } }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&stored)
    }
}

/// A reusable barrier: `arriveAndWait` returns once all parties arrived.
private final class TSBarrier: @unchecked Sendable {
    private let condition = NSCondition()
    private let parties: Int
    private var arrived = 0
    private var generation = 0

    init(_ parties: Int) { self.parties = parties }

    func arriveAndWait() {
        condition.lock()
        defer { condition.unlock() }
        let myGeneration = generation
        arrived += 1
        if arrived == parties {
            arrived = 0
            generation += 1
            condition.broadcast()
        } else {
            while generation == myGeneration { condition.wait() }
        }
    }
}

/// Opens once `countDown` was called `count` times.
private final class TSLatch: @unchecked Sendable {
    private let condition = NSCondition()
    private var remaining: Int

    init(_ count: Int) { remaining = count }

    func countDown() {
        condition.lock()
        defer { condition.unlock() }
        remaining -= 1
        if remaining == 0 { condition.broadcast() }
    }

    /// Blocks until the latch opens; `false` if it did not within `timeout` seconds.
    func wait(timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while remaining > 0 {
            if !condition.wait(until: deadline) { return remaining <= 0 }
        }
        return true
    }

    /// Waits on a helper thread, so that no thread of the Swift concurrency pool blocks.
    func waitAsync(timeout: TimeInterval) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: self.wait(timeout: timeout)) }.start()
        }
    }
}

/// Runs `body(index)` on `count` new threads that all start at the same moment, and waits for them for at most
/// `timeout` seconds. Returns `false` on timeout: the threads are left behind and the test fails instead of hanging.
private func runOnThreads(
    _ count: Int, timeout: TimeInterval = Watchdog.patience, _ body: @escaping @Sendable (_ index: Int) -> Void
) async -> Bool {
    let start = TSBarrier(count)
    let done = TSLatch(count)
    for index in 0..<count {
        Thread {
            start.arriveAndWait()
            body(index)
            done.countDown()
        }.start()
    }
    return await done.waitAsync(timeout: timeout)
}

/// Runs `operation` in a task and waits for it for at most `seconds`; `false` if it did not finish in time.
private func completes(within seconds: TimeInterval, _ operation: @escaping @Sendable () async -> Void) async -> Bool {
    let done = TSLatch(1)
    Task {
        await operation()
        done.countDown()
    }
    return await done.waitAsync(timeout: seconds)
}
