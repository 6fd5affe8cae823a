import Arbor
import ArborTestSupport
import Foundation
import Testing

private final class Cached: @unchecked Sendable {
    let label: String
    init(_ label: String) { self.label = label }
}

private final class Dependent: @unchecked Sendable {
    let cached: Cached
    init(_ cached: Cached) { self.cached = cached }
}

/// Something a factory captures, to see when the container lets go of the factory.
private final class Capture: @unchecked Sendable {}

/// Each thread remembers where it found a key and resolves from there without the container's lock. These tests
/// change registrations and settings after a resolve filled that cache, and check that the next resolve sees the
/// change, and that replaced registrations are freed, also while other threads resolve.
@Suite struct LookupCacheTests {
    @Test func aScopeChangedAfterAResolveIsSeenByTheNextOne() throws {
        let container = Container()
        let registration = container.register(Cached.self) { _ in Cached("any") }.inObjectScope(.transient)
        #expect(try container.resolve(Cached.self) !== container.resolve(Cached.self))

        registration.inObjectScope(.permanent)
        #expect(try container.resolve(Cached.self) === container.resolve(Cached.self))
    }

    @Test func aDepthLimitSetAfterAResolveAppliesToTheNextOne() throws {
        let container = Container()
        container.register(Cached.self) { _ in Cached("leaf") }
        container.register(Dependent.self) { r in Dependent(try r.resolve()) }
        _ = try container.resolve(Dependent.self)

        container.maxResolutionDepth = 0
        let error = try #require(resolutionError { try container.resolve(Dependent.self) })
        #expect(error.kind == .depthLimitExceeded)
    }

    @Test func closingAfterAResolveMakesTheNextOneThrow() throws {
        let container = Container()
        container.register(Cached.self) { _ in Cached("any") }
        _ = try container.resolve(Cached.self)

        container.close()
        let error = try #require(resolutionError { try container.resolve(Cached.self) })
        #expect(error.kind == .containerClosed)
    }

    @Test func aLeakTrackerAttachedAfterAResolveSeesTheNextOne() throws {
        let container = Container()
        container.register(Cached.self) { _ in Cached("any") }.inObjectScope(.transient)
        _ = try container.resolve(Cached.self)

        let tracker = LeakTracker(container)
        let kept = try container.resolve(Cached.self)
        #expect(tracker.check().leaks.count == 1)
        withExtendedLifetime(kept) {}
    }

    // A new child that registered nothing of a key's type takes its parent's cached answer for a top-level resolve,
    // without its own lock. Each of its settings, once set, must stop that: the parent has resolved the key first, so
    // its answer is in the thread's cache every time.

    @Test func aChildClosedAfterItsParentResolvedThrowsOnItsNextResolve() throws {
        let parent = Container()
        parent.register(Cached.self) { _ in Cached("parent") }
        let child = parent.makeChild()
        _ = try parent.resolve(Cached.self)
        #expect(try child.resolve(Cached.self).label == "parent")

        child.close()
        _ = try parent.resolve(Cached.self)
        #expect(resolutionError { try child.resolve(Cached.self) }?.kind == .containerClosed)
    }

    @Test func aChildMadeOfAClosedParentThrowsThoughTheParentResolvedBefore() throws {
        let parent = Container()
        parent.register(Cached.self) { _ in Cached("parent") }
        _ = try parent.resolve(Cached.self)
        let sibling = parent.makeChild()
        parent.close()
        let child = parent.makeChild()
        #expect(resolutionError { try child.resolve(Cached.self) }?.kind == .containerClosed)
        #expect(resolutionError { try sibling.resolve(Cached.self) }?.kind == .containerClosed)
    }

    @Test func anObserverOfAChildSeesItsResolvesOfTheParentsServices() throws {
        let parent = Container()
        parent.register(Cached.self) { _ in Cached("parent") }.inObjectScope(.transient)
        let child = parent.makeChild()
        _ = try parent.resolve(Cached.self)
        _ = try child.resolve(Cached.self)

        let tracker = LeakTracker(child)
        let kept = try child.resolve(Cached.self)
        #expect(tracker.check().leaks.count == 1)
        withExtendedLifetime(kept) {}
    }

    @Test func aChildsDepthLimitAppliesToItsResolvesOfTheParentsServices() throws {
        let parent = Container()
        parent.register(Cached.self) { _ in Cached("leaf") }
        parent.register(Dependent.self) { r in Dependent(try r.resolve()) }
        let child = parent.makeChild()
        _ = try parent.resolve(Dependent.self)
        _ = try child.resolve(Dependent.self)

        child.maxResolutionDepth = 0
        _ = try parent.resolve(Dependent.self)
        #expect(resolutionError { try child.resolve(Dependent.self) }?.kind == .depthLimitExceeded)
    }

    @Test func aChildThatRegistersAServiceAfterResolvingTheParentsFindsItsOwn() throws {
        let parent = Container()
        parent.register(Cached.self) { _ in Cached("parent") }
        let child = parent.makeChild()
        _ = try parent.resolve(Cached.self)
        #expect(try child.resolve(Cached.self).label == "parent")

        child.register(Cached.self, instance: Cached("child"))
        _ = try parent.resolve(Cached.self)
        #expect(try child.resolve(Cached.self).label == "child")
        #expect(try parent.resolve(Cached.self).label == "parent")
    }

    @Test func aReplacedRegistrationThatWasResolvedIsFreed() throws {
        let container = Container()
        let capture = registerCapturing(in: container, label: "first")
        #expect(try container.resolve(Cached.self).label == "first")

        container.register(Cached.self) { _ in Cached("second") }
        #expect(capture.object == nil)
        #expect(try container.resolve(Cached.self).label == "second")
    }

    @Test func aRegistrationReplacedWhileItsTreeResolvesIsFreedAtALaterChange() throws {
        let container = Container()
        let capture = registerCapturing(in: container, label: "first")
        _ = try container.resolve(Cached.self)
        container.register(Dependent.self) { r in
            // Replaced while this resolution runs: a thread may still hold the first registration.
            container.register(Cached.self) { _ in Cached("second") }
            return Dependent(try r.resolve())
        }
        #expect(try container.resolve(Dependent.self).cached.label == "second")
        #expect(capture.object != nil)

        container.register(Dependent.self) { _ in Dependent(Cached("third")) }
        #expect(capture.object == nil)
    }

    @Test func registrationsReplacedWhileAnotherThreadResolvesAreFreedAndNeverUsedAfterFree() throws {
        let container = Container()
        container.register(Cached.self) { _ in Cached("initial") }.inObjectScope(.transient)
        container.register(Dependent.self) { r in Dependent(try r.resolve()) }.inObjectScope(.transient)
        let captures = Box<[WeakRef<Capture>]>([])
        let failedResolves = Box<Int>(0)
        let finished = runThreads(2) { index in
            if index == 0 {
                for _ in 0..<20_000 where (try? container.resolve(Dependent.self)) == nil {
                    failedResolves.value! += 1
                }
            } else {
                for round in 0..<500 {
                    let capture = Capture()
                    captures.value!.append(WeakRef(capture))
                    container.register(Cached.self) { _ in withExtendedLifetime(capture) { Cached("\(round)") } }
                        .inObjectScope(.transient)
                }
            }
        }
        #expect(finished)
        #expect(failedResolves.value == 0)
        // A prompt change once nothing resolves frees whatever waited for the resolving thread.
        container.register(Cached.self) { _ in Cached("last") }
        #expect(captures.value!.allSatisfy { $0.object == nil })
        #expect(try container.resolve(Dependent.self).cached.label == "last")
    }
}

/// Registers a `Cached` whose factory captures a new `Capture`, and returns a weak reference to the capture.
private func registerCapturing(in container: Container, label: String) -> WeakRef<Capture> {
    weakly {
        let capture = Capture()
        container.register(Cached.self) { _ in withExtendedLifetime(capture) { Cached(label) } }
        return capture
    }
}
