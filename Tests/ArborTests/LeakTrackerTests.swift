import Arbor
import Dispatch
import Foundation
import Testing

// API.md §8 and §10.14: LeakTracker records what factories create, LeakReport tells which of it is still alive.
//
// Every test drops its own references before calling `check()`: objects are made inside `alive(…)` or a `do` block,
// and the test keeps only weak references unless it wants a leak.

/// The fixtures, nested so their printed type names read `Parent`, `Child`, … without clashing with other files.
private enum Fixture {
    final class Parent {
        let child: Child
        init(child: Child) { self.child = child }
    }

    /// Points back at its parent strongly: a retain cycle.
    final class Child {
        var parent: Parent?
    }

    final class WeakParent {
        let child: WeakChild
        init(child: WeakChild) { self.child = child }
    }

    /// Points back at its parent weakly: no cycle.
    final class WeakChild {
        weak var parent: WeakParent?
    }

    final class Logger {}

    final class Screen {
        let logger: Logger
        let presenter: Presenter
        init(logger: Logger, presenter: Presenter) {
            self.logger = logger
            self.presenter = presenter
        }
    }

    final class Presenter {
        weak var screen: Screen?
    }

    final class Session {}

    /// A permanent service that keeps whatever subscribes to it.
    final class EventBus: @unchecked Sendable {
        private let lock = NSLock()
        private var subscribers: [AnyObject] = []
        func subscribe(_ subscriber: AnyObject) {
            lock.holding { subscribers.append(subscriber) }
        }
        func removeAll() {
            lock.holding { subscribers.removeAll() }
        }
    }

    final class Subscriber {}

    final class Controller {
        var analytics: Analytics?
    }

    final class Analytics {}

    final class Cache {}

    final class Node {}

    final class Team {
        var members: [Member] = []
        var captain: Member?
        var byRole: [String: Member] = [:]
        lazy var mascot: Member = Member()
    }

    final class Member {
        var team: Team?
    }

    class Animal {}
    final class Dog: Animal {
        var owner: Owner?
    }
    final class Owner {
        var pet: Animal?
    }

    struct Point {
        var x = 0
    }
}

/// Objects kept on purpose, from any thread: the "global" that a leak escapes into.
private final class KeptObjects: @unchecked Sendable {
    private let lock = NSLock()
    private var objects: [AnyObject] = []

    func keep(_ object: AnyObject) {
        lock.holding { objects.append(object) }
    }

    func release() {
        let released = lock.holding {
            defer { objects.removeAll() }
            return objects
        }
        withExtendedLifetime(released) {}
    }

    var count: Int { lock.holding { objects.count } }
}

extension NSLock {
    /// Runs `body` with the lock held. (`NSLock.withLock` needs macOS 14 on Apple platforms.)
    fileprivate func holding<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A global that a graph-scoped session escapes into.
private let escapedSessions = KeptObjects()

/// A weak reference to what `make` built; the caller keeps no strong one.
private struct Weakly<Object: AnyObject> {
    weak var object: Object?
}

private func alive<Object: AnyObject>(_ make: () throws -> Object) rethrows -> Weakly<Object> {
    Weakly(object: try make())
}

private func key<Service>(_ type: Service.Type, name: String? = nil) -> ServiceKey {
    ServiceKey(type, name: name)
}

/// `Type.property → Target` for each reference of a leak, as the report prints them.
private func arrows(_ leak: Leak) -> [String] {
    leak.references.map { "\($0.property) → \($0.targetTypeName)" }
}

@Suite struct LeakTrackerTests {
    // MARK: Cycles

    /// The Parent ↔ Child cycle of §8, wired with a hook because neither can take the other in its initialiser.
    private func strongCycleContainer() -> Container {
        let container = Container()
        container.register(Fixture.Parent.self) { r in Fixture.Parent(child: try r.resolve()) }
        container.register(Fixture.Child.self) { _ in Fixture.Child() }
            .initCompleted { r, child in child.parent = try r.resolve(Fixture.Parent.self) }
        return container
    }

    @Test func strongCycleIsReportedWithBothTypesAndBothProperties() throws {
        let container = strongCycleContainer()
        let tracker = LeakTracker(container)
        let parent = try alive { try container.resolve(Fixture.Parent.self) }
        #expect(parent.object != nil, "the cycle keeps the parent alive")

        let report = tracker.check()
        #expect(!report.isClean)
        #expect(report.trackedCount == 2)
        // In the order the instances were created: the child's factory returns before the parent's.
        #expect(report.leaks.map(\.typeName) == ["Child", "Parent"])
        let parentLeak = try #require(report.leaks.first { $0.typeName == "Parent" })
        let childLeak = try #require(report.leaks.first { $0.typeName == "Child" })

        #expect(parentLeak.key == key(Fixture.Parent.self))
        #expect(parentLeak.scope == .graph)
        #expect(parentLeak.path == [key(Fixture.Parent.self)])
        #expect(parentLeak.typeName == "Parent")
        #expect(arrows(parentLeak) == ["Parent.child → Child"])
        #expect(parentLeak.references.map(\.targetKey) == [key(Fixture.Child.self)])

        #expect(childLeak.key == key(Fixture.Child.self))
        #expect(childLeak.scope == .graph)
        #expect(childLeak.path == [key(Fixture.Parent.self), key(Fixture.Child.self)])
        #expect(childLeak.typeName == "Child")
        #expect(arrows(childLeak) == ["Child.parent → Parent"])
        #expect(childLeak.references.map(\.targetKey) == [key(Fixture.Parent.self)])

        // Breaking the cycle frees both, and the report says so.
        parent.object?.child.parent = nil
        #expect(parent.object == nil)
        let after = tracker.check()
        #expect(after.isClean)
        #expect(after.leaks.isEmpty)
    }

    @Test func weakBackReferenceIsClean() throws {
        let container = Container()
        container.register(Fixture.WeakParent.self) { r in Fixture.WeakParent(child: try r.resolve()) }
        container.register(Fixture.WeakChild.self) { _ in Fixture.WeakChild() }
            .initCompleted { r, child in child.parent = try r.resolve(Fixture.WeakParent.self) }
        let tracker = LeakTracker(container)

        let parent = try alive {
            let parent = try container.resolve(Fixture.WeakParent.self)
            #expect(parent.child.parent === parent, "the hook wired the back reference")
            return parent
        }

        #expect(parent.object == nil)
        let report = tracker.check()
        #expect(report.isClean)
        #expect(report.trackedCount == 2, "both instances were tracked")
        #expect(tracker.liveInstanceCount == 0)
        #expect(report.description == "No resolved instance is still alive (2 tracked).")
    }

    // MARK: What is not a leak

    @Test func permanentInstancesAreNotReported() throws {
        let root = Container()
        root.register(Fixture.Logger.self) { _ in Fixture.Logger() }.inObjectScope(.permanent)
        root.register(Fixture.Session.self, instance: Fixture.Session())
        root.register(Fixture.Presenter.self) { _ in Fixture.Presenter() }
        root.register(Fixture.Screen.self) { r in
            _ = try r.resolve(Fixture.Session.self)
            return Fixture.Screen(logger: try r.resolve(), presenter: try r.resolve())
        }
        let child = root.makeChild()
        let tracker = LeakTracker(child)

        let screen = try alive { try child.resolve(Fixture.Screen.self) }

        #expect(screen.object == nil)
        let report = tracker.check()
        #expect(report.isClean, "\(report)")
        // The session was registered as an instance: made by the test, not by a resolve, so not tracked.
        #expect(report.trackedCount == 3, "screen, presenter, and the permanent logger")
        #expect(tracker.liveInstanceCount == 1, "the permanent logger is alive, kept by the root")
    }

    /// What a permanent service of the app was built with — the graph-scoped dependencies its factory resolved, and
    /// what its hooks resolved — lives as long as the service: not a leak of the test that happened to build it first.
    @Test func whatAPermanentServiceOfTheAppWasBuiltWithIsNotReported() throws {
        let root = Container()
        root.register(Fixture.Logger.self) { _ in Fixture.Logger() }
        root.register(Fixture.Presenter.self) { _ in Fixture.Presenter() }
        root.register(Fixture.Screen.self) { r in Fixture.Screen(logger: try r.resolve(), presenter: try r.resolve()) }
            .inObjectScope(.permanent)
        root.register(Fixture.Controller.self) { _ in Fixture.Controller() }
            .inObjectScope(.permanent)
            .initCompleted { r, controller in controller.analytics = try r.resolve() }
        root.register(Fixture.Analytics.self) { _ in Fixture.Analytics() }
        let child = root.makeChild()
        let tracker = LeakTracker(child)

        let screen = try alive { try child.resolve(Fixture.Screen.self) }
        let controller = try alive { try child.resolve(Fixture.Controller.self) }

        #expect(screen.object != nil && controller.object != nil, "the root keeps them")
        let report = tracker.check()
        #expect(report.isClean, "\(report)")
        #expect(report.trackedCount == 5, "the screen, its logger and presenter, the controller and its analytics")

        // Once the root no longer keeps the screen, what it was built with is checked like anything else.
        let logger = try #require(screen.object?.logger)
        root.resetObjectScope(.permanent)
        #expect(tracker.check().leaks.map(\.typeName) == ["Logger"])
        withExtendedLifetime(logger) {}
    }

    /// A permanent service registered in the tracked container is kept only until the container closes; then what it
    /// was built with is checked too.
    @Test func whatAPermanentServiceOfAClosedChildWasBuiltWithIsReportedIfAlive() throws {
        let root = Container()
        root.register(Fixture.Logger.self) { _ in Fixture.Logger() }
        root.register(Fixture.Presenter.self) { _ in Fixture.Presenter() }
        let child = root.makeChild()
        child.register(Fixture.Screen.self) { r in Fixture.Screen(logger: try r.resolve(), presenter: try r.resolve()) }
            .inObjectScope(.permanent)
        let tracker = LeakTracker(child)
        let logger = try child.resolve(Fixture.Screen.self).logger
        #expect(tracker.check().isClean, "the child keeps the screen, which keeps the logger")

        child.close()
        #expect(tracker.check().leaks.map(\.typeName) == ["Logger"])
        withExtendedLifetime(logger) {}
    }

    /// A weak service of the app is shared with whoever else resolves it — another test, running in parallel — so one
    /// that is alive is not the tracked test's leak; one the tracked container registers itself is.
    @Test func aWeakServiceOfTheAppThatOthersHoldIsNotReported() throws {
        let root = Container()
        root.register(Fixture.Cache.self) { _ in Fixture.Cache() }.inObjectScope(.weak)
        root.register(Fixture.Session.self) { _ in Fixture.Session() }
        let test = root.makeChild()
        let otherTest = root.makeChild()
        let tracker = LeakTracker(test)

        // The test builds it; the other test, resolving it meanwhile, still holds it when this one checks.
        let heldByTheOtherTest: Fixture.Cache
        do {
            let cache = try test.resolve(Fixture.Cache.self)
            heldByTheOtherTest = try otherTest.resolve(Fixture.Cache.self)
            #expect(cache === heldByTheOtherTest)
        }
        let report = tracker.check()
        #expect(report.isClean, "\(report)")
        #expect(report.trackedCount == 1)
        withExtendedLifetime(heldByTheOtherTest) {}

        test.register(Fixture.Session.self) { _ in Fixture.Session() }.inObjectScope(.weak)
        let session = try test.resolve(Fixture.Session.self)
        #expect(tracker.check().leaks.map(\.typeName) == ["Session"], "the test's own weak registration")
        withExtendedLifetime(session) {}
    }

    @Test func instancesCreatedBeforeTheTrackerAreNotTracked() throws {
        let container = strongCycleContainer()
        let before = try alive { try container.resolve(Fixture.Parent.self) }
        let tracker = LeakTracker(container)

        #expect(before.object != nil, "the earlier cycle is still alive")
        #expect(tracker.check().isClean)
        #expect(tracker.check().trackedCount == 0)
        before.object?.child.parent = nil
    }

    @Test func valueTypesAreNotTracked() throws {
        let container = Container()
        container.register(Fixture.Point.self) { _ in Fixture.Point() }
        let tracker = LeakTracker(container)
        let point = try container.resolve(Fixture.Point.self)
        #expect(point.x == 0)
        #expect(tracker.check().trackedCount == 0)
    }

    // MARK: What is a leak

    @Test func graphInstanceThatEscapesIntoAGlobalIsReported() throws {
        let container = Container()
        container.register(Fixture.Session.self) { _ in Fixture.Session() }
            .initCompleted { _, session in escapedSessions.keep(session) }
        let tracker = LeakTracker(container)

        let session = try alive { try container.resolve(Fixture.Session.self) }

        #expect(session.object != nil)
        let report = tracker.check()
        try #require(report.leaks.count == 1)
        let leak = report.leaks[0]
        #expect(leak.key == key(Fixture.Session.self))
        #expect(leak.scope == .graph)
        #expect(leak.path == [key(Fixture.Session.self)])
        #expect(leak.references.isEmpty, "nothing that leaked points at it: something outside does")
        #expect(report.description.contains("Session (graph scope)"))
        #expect(report.description.contains("a global, a cache, a closure"))
        #expect(!report.description.contains("retain cycle"))

        escapedSessions.release()
        #expect(session.object == nil)
        #expect(tracker.check().isClean)
    }

    /// A closure property that captures its own object is a cycle reflection cannot see into: the report names the
    /// property and says to capture weakly. A `nil` closure property is not named.
    @Test func aClosureThatCapturesItsObjectIsNamedInTheReport() throws {
        final class Ticker {
            var count = 0
            var onTick: (() -> Void)?
            var onStop: (() -> Void)?
            func start() { onTick = { self.count += 1 } }
        }
        let container = Container()
        container.register(Ticker.self) { _ in Ticker() }
        let tracker = LeakTracker(container)

        let ticker = try alive {
            let ticker = try container.resolve(Ticker.self)
            ticker.start()
            return ticker
        }

        #expect(ticker.object != nil, "its closure keeps it")
        let report = tracker.check()
        #expect(report.leaks.map(\.closureProperties) == [["Ticker.onTick"]])
        #expect(report.description.contains("  Ticker.onTick holds a closure"))
        #expect(report.description.contains("Ticker.onTick holds a closure: one that captures its own object strongly"))
        #expect(report.description.contains("`{ [weak self] in … }`"))
        ticker.object?.onTick = nil
        #expect(tracker.check().isClean)
    }

    @Test func graphInstanceKeptByAPermanentServiceIsReportedButTheServiceIsNot() throws {
        let container = Container()
        container.register(Fixture.EventBus.self) { _ in Fixture.EventBus() }.inObjectScope(.permanent)
        container.register(Fixture.Subscriber.self) { _ in Fixture.Subscriber() }
            .initCompleted { r, subscriber in try r.resolve(Fixture.EventBus.self).subscribe(subscriber) }
        let tracker = LeakTracker(container)

        let subscriber = try alive { try container.resolve(Fixture.Subscriber.self) }

        #expect(subscriber.object != nil, "the bus keeps it")
        let report = tracker.check()
        #expect(report.leaks.map(\.typeName) == ["Subscriber"], "\(report)")
        #expect(report.leaks.first?.references.isEmpty == true)

        try container.resolve(Fixture.EventBus.self).removeAll()
        #expect(tracker.check().isClean)
    }

    @Test func weakScopedInstanceThatSomethingElseHoldsIsReported() throws {
        let container = Container()
        container.register(Fixture.Cache.self) { _ in Fixture.Cache() }.inObjectScope(.weak)
        let tracker = LeakTracker(container)

        var held: Fixture.Cache? = try container.resolve(Fixture.Cache.self)
        let report = tracker.check()
        #expect(report.leaks.map(\.scope) == [.weak], "a weak registration does not keep its instance")

        #expect(held != nil)
        held = nil
        #expect(tracker.check().isClean)
    }

    /// The ways a permanent instance stops being kept by its registration (§10.7).
    enum Release: String, CaseIterable, CustomTestStringConvertible {
        case resetObjectScope, reregister, unregister, removeAll
        var testDescription: String { rawValue }
    }

    @Test(arguments: Release.allCases)
    func permanentInstanceThatItsRegistrationNoLongerKeepsIsReported(_ release: Release) throws {
        let container = Container()
        container.register(Fixture.Cache.self) { _ in Fixture.Cache() }.inObjectScope(.permanent)
        let tracker = LeakTracker(container)
        let cache = try container.resolve(Fixture.Cache.self)
        #expect(tracker.check().isClean, "kept by its registration")

        switch release {
        case .resetObjectScope: container.resetObjectScope(.permanent)
        case .reregister: container.register(Fixture.Cache.self) { _ in Fixture.Cache() }.inObjectScope(.permanent)
        case .unregister: container.unregister(Fixture.Cache.self)
        case .removeAll: container.removeAll()
        }

        let report = tracker.check()
        try #require(report.leaks.count == 1, "\(report)")
        #expect(report.leaks[0].key == key(Fixture.Cache.self))
        #expect(report.leaks[0].scope == .permanent)
        #expect(report.description.contains("Cache (permanent scope)"))

        withExtendedLifetime(cache) {}
    }

    @Test func resetPermanentInstanceIsCleanOnceDropped() throws {
        let container = Container()
        container.register(Fixture.Cache.self) { _ in Fixture.Cache() }.inObjectScope(.permanent)
        let tracker = LeakTracker(container)
        let first = try alive { try container.resolve(Fixture.Cache.self) }
        container.resetObjectScope(.permanent)

        #expect(first.object == nil, "the reset dropped the only reference")
        let second = try container.resolve(Fixture.Cache.self)
        let report = tracker.check()
        #expect(report.isClean, "\(report)")
        #expect(report.trackedCount == 2)
        withExtendedLifetime(second) {}
    }

    // MARK: Where instances come from

    @Test func instanceCreatedInAHookIsTracked() throws {
        let container = Container()
        container.register(Fixture.Analytics.self) { _ in Fixture.Analytics() }
        container.register(Fixture.Controller.self) { _ in Fixture.Controller() }
            .initCompleted { r, controller in controller.analytics = try r.resolve(Fixture.Analytics.self) }
        let tracker = LeakTracker(container)

        let controller = try container.resolve(Fixture.Controller.self)

        let report = tracker.check()
        #expect(report.trackedCount == 2)
        try #require(report.leaks.count == 2, "\(report)")
        let analytics = report.leaks[1]
        #expect(analytics.key == key(Fixture.Analytics.self))
        #expect(analytics.path == [key(Fixture.Controller.self), key(Fixture.Analytics.self)])
        #expect(arrows(report.leaks[0]) == ["Controller.analytics → Analytics"])

        withExtendedLifetime(controller) {}
        #expect(controller.analytics != nil)
    }

    @Test func concurrentResolvesWhileTrackingAreSafe() throws {
        let container = Container()
        container.register(Fixture.Logger.self) { _ in Fixture.Logger() }.inObjectScope(.permanent)
        container.register(Fixture.Presenter.self) { _ in Fixture.Presenter() }
            .initCompleted { r, presenter in presenter.screen = try r.resolve(Fixture.Screen.self) }
        container.register(Fixture.Screen.self) { r in
            Fixture.Screen(logger: try r.resolve(), presenter: try r.resolve())
        }
        let tracker = LeakTracker(container)
        let kept = KeptObjects()
        let failures = KeptObjects()
        let iterations = 400  // 800 records: enough for the tracker to prune dead ones while others append

        DispatchQueue.concurrentPerform(iterations: iterations) { index in
            do {
                let screen = try container.resolve(Fixture.Screen.self)
                if screen.presenter.screen !== screen { failures.keep(screen) }
                if index % 10 == 0 { kept.keep(screen) }
                if index % 50 == 0 { _ = tracker.check() }  // reading while others record
            } catch {
                failures.keep(error as AnyObject)
            }
        }

        #expect(failures.count == 0)
        let report = tracker.check()
        let screens = report.leaks.filter { $0.typeName == "Screen" }
        let presenters = report.leaks.filter { $0.typeName == "Presenter" }
        #expect(screens.count == iterations / 10)
        #expect(presenters.count == iterations / 10)
        #expect(report.leaks.count == 2 * iterations / 10, "the permanent logger is not a leak")
        #expect(screens.allSatisfy { arrows($0) == ["Screen.presenter → Presenter"] })
        #expect(presenters.allSatisfy { $0.path == [key(Fixture.Screen.self), key(Fixture.Presenter.self)] })
        #expect(tracker.liveInstanceCount == 2 * iterations / 10 + 1)

        kept.release()
        #expect(tracker.check().isClean)
    }

    @Test func resolvesFromTasksOnOtherThreadsAreTracked() async throws {
        let container = Container()
        container.register(Fixture.Session.self) { _ in Fixture.Session() }
        let tracker = LeakTracker(container)
        let kept = KeptObjects()

        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask { kept.keep(try container.resolve(Fixture.Session.self)) }
            }
            try await group.waitForAll()
        }

        #expect(tracker.check().leaks.count == 20)
        kept.release()
        #expect(tracker.check().isClean)
    }

    // MARK: Several trackers, and subtrees

    @Test func trackerOnAChildSeesOnlyItsSubtree() throws {
        let root = Container()
        for name in ["root", "sibling", "child", "grandchild", "late"] {
            root.register(Fixture.Node.self, name: name) { _ in Fixture.Node() }
        }
        let child = root.makeChild()
        let sibling = root.makeChild()
        let grandchild = child.makeChild()
        let childTracker = LeakTracker(child)
        let rootTracker = LeakTracker(root)
        let late = child.makeChild()  // made after the trackers: it joins the subtree they watch

        let nodes = try [
            root.resolve(Fixture.Node.self, name: "root"),
            sibling.resolve(Fixture.Node.self, name: "sibling"),
            child.resolve(Fixture.Node.self, name: "child"),
            grandchild.resolve(Fixture.Node.self, name: "grandchild"),
            late.resolve(Fixture.Node.self, name: "late"),
        ]

        #expect(childTracker.check().leaks.map(\.key.name) == ["child", "grandchild", "late"])
        #expect(rootTracker.check().leaks.map(\.key.name) == ["root", "sibling", "child", "grandchild", "late"])
        withExtendedLifetime(nodes) {}
    }

    @Test func severalTrackersCoexist() throws {
        let container = Container()
        for name in ["a", "b", "c"] {
            container.register(Fixture.Node.self, name: name) { _ in Fixture.Node() }
        }
        var first: LeakTracker? = LeakTracker(container)
        let a = try container.resolve(Fixture.Node.self, name: "a")
        let second = LeakTracker(container)
        let b = try container.resolve(Fixture.Node.self, name: "b")

        #expect(first?.check().leaks.map(\.key.name) == ["a", "b"])
        #expect(second.check().leaks.map(\.key.name) == ["b"])

        // Dropping one tracker stops it, and leaves the other recording.
        let dropped = Weakly(object: first)
        first = nil
        #expect(dropped.object == nil)
        let c = try container.resolve(Fixture.Node.self, name: "c")
        #expect(second.check().leaks.map(\.key.name) == ["b", "c"])

        // `reset()` forgets what was recorded; recording goes on.
        second.reset()
        #expect(second.check().isClean)
        let d = try container.resolve(Fixture.Node.self, name: "a")
        #expect(second.check().leaks.map(\.key.name) == ["a"])

        withExtendedLifetime((a, b, c, d)) {}
    }

    // MARK: Reflection and text

    @Test func referencesThroughCollectionsOptionalsDictionariesAndLazyProperties() throws {
        let container = Container()
        container.register(Fixture.Member.self) { _ in Fixture.Member() }.inObjectScope(.transient)
        container.register(Fixture.Team.self) { _ in Fixture.Team() }
            .initCompleted { r, team in
                let first: Fixture.Member = try r.resolve()
                let second: Fixture.Member = try r.resolve()
                team.members = [first, second]
                team.captain = first
                team.byRole = ["coach": second]
                first.team = team
            }
        let tracker = LeakTracker(container)

        let team = try alive {
            let team = try container.resolve(Fixture.Team.self)
            _ = team.mascot  // not resolved: an untracked object, so not a reference to a leak
            return team
        }

        #expect(team.object != nil)
        let report = tracker.check()
        try #require(report.leaks.count == 3, "\(report)")
        #expect(
            arrows(report.leaks[0]) == [
                "Team.members[0] → Member", "Team.members[1] → Member", "Team.captain → Member",
                "Team.byRole[0] → Member",
            ])
        #expect(arrows(report.leaks[1]) == ["Member.team → Team"])
        #expect(arrows(report.leaks[2]).isEmpty)
        #expect(report.description.contains("retain cycle"))

        team.object?.members.first?.team = nil
        #expect(tracker.check().isClean)
    }

    @Test func leakOfASubclassNamesBothItsTypeAndItsKey() throws {
        let container = Container()
        container.register(Fixture.Animal.self) { _ in Fixture.Dog() }
        container.register(Fixture.Owner.self) { _ in Fixture.Owner() }
            .initCompleted { r, owner in
                let dog = try r.resolve(Fixture.Animal.self) as! Fixture.Dog
                owner.pet = dog
                dog.owner = owner
            }
        let tracker = LeakTracker(container)
        let owner = try alive { try container.resolve(Fixture.Owner.self) }

        let report = tracker.check()
        try #require(report.leaks.count == 2)
        #expect(report.leaks[1].typeName == "Dog")
        #expect(report.leaks[1].key == key(Fixture.Animal.self))
        #expect(report.description.contains("Dog as Animal (graph scope)"))
        #expect(report.description.contains("Owner.pet → Dog"))
        #expect(report.description.contains("Dog.owner → Owner"))

        (owner.object?.pet as? Fixture.Dog)?.owner = nil
        #expect(tracker.check().isClean)
    }

    @Test func descriptionNamesEachLeakedTypeAndItsProperties() throws {
        let container = strongCycleContainer()
        let tracker = LeakTracker(container)
        let parent = try alive { try container.resolve(Fixture.Parent.self) }

        let text = String(describing: tracker.check())

        #expect(text.hasPrefix("2 resolved instances are still alive (2 tracked):\n\n"))
        #expect(
            text.contains(
                """

                Parent (graph scope)
                  created by: Parent
                  Parent.child → Child

                """))
        #expect(
            text.contains(
                """

                Child (graph scope)
                  created by: Parent → Child
                  Child.parent → Parent

                """))
        #expect(
            text.hasSuffix(
                """

                Objects that point at each other form a retain cycle unless one side of each pair is weak:
                make one side weak. (Weak properties are listed too; reflection cannot tell them apart.)
                """))
        parent.object?.child.parent = nil
    }

    @Test func descriptionOfOneLeakIsSingular() throws {
        let container = Container()
        container.register(Fixture.Cache.self) { _ in Fixture.Cache() }
        let tracker = LeakTracker(container)
        let cache = try container.resolve(Fixture.Cache.self)
        #expect(tracker.check().description.hasPrefix("1 resolved instance is still alive (1 tracked):"))
        withExtendedLifetime(cache) {}
    }

    /// Reflection cannot tell a `weak` stored property from a strong one, so a weak back reference between two
    /// leaked objects is listed as a reference; the report says so, so the reader checks which side is weak.
    @Test func weakPropertiesAreListedAndTheReportSaysReflectionCannotTellThemApart() throws {
        let container = Container()
        container.register(Fixture.WeakParent.self) { r in Fixture.WeakParent(child: try r.resolve()) }
        container.register(Fixture.WeakChild.self) { _ in Fixture.WeakChild() }
            .initCompleted { r, child in child.parent = try r.resolve(Fixture.WeakParent.self) }
        let tracker = LeakTracker(container)
        let outside = KeptObjects()
        outside.keep(try container.resolve(Fixture.WeakParent.self))

        let report = tracker.check()
        try #require(report.leaks.count == 2, "the parent is held outside, and holds its child")
        let parent = try #require(report.leaks.first { $0.typeName == "WeakParent" })
        let child = try #require(report.leaks.first { $0.typeName == "WeakChild" })
        #expect(arrows(parent) == ["WeakParent.child → WeakChild"])
        #expect(arrows(child) == ["WeakChild.parent → WeakParent"])
        #expect(report.description.contains("Weak properties are listed too"))

        outside.release()
        #expect(tracker.check().isClean)
    }

    /// The tracker prunes records of dead instances as it goes; `trackedCount` still counts every one.
    @Test func trackedCountCountsEveryRecordedInstance() throws {
        let container = Container()
        container.register(Fixture.Node.self) { _ in Fixture.Node() }
        let tracker = LeakTracker(container)
        for _ in 0..<300 { _ = try container.resolve(Fixture.Node.self) }

        #expect(tracker.check().trackedCount == 300)
        #expect(tracker.check().description.contains("(300 tracked)"))
    }
}
