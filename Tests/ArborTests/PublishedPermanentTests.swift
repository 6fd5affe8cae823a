import Arbor
import Foundation
import Testing

// A root container's permanent instances are read without its lock (`PublishedValue`): every request of a server
// reads them from every core. These tests hold the lock-free read to what the locked one promised: the instance the
// container holds, never one it let go, released exactly when it was before.

private protocol PPClock: Sendable {
    var id: Int { get }
}

private final class PPSystemClock: PPClock, @unchecked Sendable {
    let id: Int
    private let released: AtomicCounter
    init(id: Int, released: AtomicCounter) {
        self.id = id
        self.released = released
    }
    deinit { released.add() }
}

private struct PPSettings: Sendable, Equatable {
    var name: String
    var limits: [Int]
}

private final class PPHandler: Sendable {
    let clock: any PPClock
    let settings: PPSettings
    init(clock: any PPClock, settings: PPSettings) {
        self.clock = clock
        self.settings = settings
    }
}

@Suite struct PublishedPermanentTests {
    /// Reset drops the instance at once, as before: a lock-free reader never keeps it past the reset.
    @Test func aResetInstanceIsFreedAtOnceWhenNothingElseHoldsIt() throws {
        let root = Container()
        let released = AtomicCounter()
        let built = AtomicCounter()
        root.register((any PPClock).self) { _ in PPSystemClock(id: built.add(), released: released) }
            .inObjectScope(.permanent)
        weak var first: PPSystemClock?
        do {
            let clock = try root.resolve((any PPClock).self)
            first = clock as? PPSystemClock
            #expect(try root.resolve((any PPClock).self).id == clock.id, "read without the lock: the same instance")
            #expect(try root.makeChild().resolve((any PPClock).self).id == clock.id, "and from a child")
        }
        #expect(first != nil)
        root.resetObjectScope(.permanent)
        #expect(first == nil, "the reset instance was freed when the container let it go")
        #expect(released.value == 1)
        #expect(try root.resolve((any PPClock).self).id == 2, "the next resolve builds a new one")
    }

    /// Values of every shape come back whole: a protocol existential, a struct with its own references, an
    /// instance registered as such.
    @Test func everyShapeOfValueIsCopiedWhole() throws {
        let root = Container()
        let released = AtomicCounter()
        let settings = PPSettings(name: "notes", limits: [1, 2, 3])
        root.register(PPSettings.self, instance: settings)
        root.register((any PPClock).self) { _ in PPSystemClock(id: 9, released: released) }.inObjectScope(.permanent)
        root.register(PPHandler.self) { r in PPHandler(clock: try r.resolve(), settings: try r.resolve()) }
        for _ in 0..<3 {
            #expect(try root.resolve(PPSettings.self) == settings)
            let handler = try root.makeChild().resolve(PPHandler.self)
            #expect(handler.clock.id == 9 && handler.settings == settings)
        }
    }

    /// Closing the root releases its instances and runs their hooks once; a resolve after it throws.
    @Test func closingTheRootEndsTheLockFreeReads() throws {
        let root = Container()
        let released = AtomicCounter()
        let hooks = AtomicCounter()
        root.register((any PPClock).self) { _ in PPSystemClock(id: 1, released: released) }
            .inObjectScope(.permanent)
            .onRelease { _ in hooks.add() }
        _ = try root.resolve((any PPClock).self)
        root.close()
        #expect(hooks.value == 1 && released.value == 1)
        #expect(throws: ResolutionError.self) { try root.resolve((any PPClock).self) }
    }

    /// Threads resolve the root's permanent instances, directly and through request children, while another resets
    /// them over and over. Each resolve gets an instance the factory built and the container held; every instance
    /// the container let go is freed once the resolves that got it are done with it.
    @Test func resolvesRacingWithResetsGetHeldInstancesAndFreeNoneEarly() {
        let root = Container()
        let released = AtomicCounter()
        let built = AtomicCounter()
        root.register((any PPClock).self) { _ in PPSystemClock(id: built.add(), released: released) }
            .inObjectScope(.permanent)
        root.register(PPSettings.self) { _ in PPSettings(name: "notes", limits: Array(0..<8)) }
            .inObjectScope(.permanent)
        root.register(PPHandler.self) { r in PPHandler(clock: try r.resolve(), settings: try r.resolve()) }

        let problems = ProblemLog()
        let stop = AtomicCounter()
        let resolves = AtomicCounter()
        let group = DispatchGroup()
        for thread in 0..<3 {
            group.enter()
            Thread {
                defer { group.leave() }
                while stop.value == 0 {
                    do {
                        let handler: PPHandler
                        if thread == 0 {
                            handler = try root.resolve(PPHandler.self)
                        } else {
                            let request = root.makeChild()
                            handler = try request.resolve(PPHandler.self)
                            request.close()
                        }
                        let id = handler.clock.id
                        problems.check(id >= 1 && id <= built.value, "a clock no factory built: \(id)")
                        problems.check(handler.settings.limits == Array(0..<8), "settings read torn")
                        resolves.add()
                    } catch {
                        problems.record("resolve failed: \(error)")
                    }
                }
            }.start()
        }
        var resets = 0
        let started = Date()
        while Date().timeIntervalSince(started) < 60, resets < 2_000 || resolves.value < 5_000 {
            root.resetObjectScope(.permanent)
            resets += 1
            if resets % 64 == 0 { sched_yield() }
        }
        stop.add()
        #expect(group.wait(timeout: .now() + 30) == .success)
        problems.expectNone()
        #expect(resolves.value > 1_000, "the resolving threads did not get going (\(resolves.value))")
        root.resetObjectScope(.permanent)
        #expect(
            released.value == built.value,
            "every clock built was freed once nothing held it: built \(built.value), freed \(released.value)")
    }
}
