import Arbor
import ArborTestSupport
import Foundation
import Testing

// The observer seam: what a `ResolutionObserver` sees, in which order, from where, and that nothing it does can change
// what a resolve returns.

private protocol Animal: AnyObject, Sendable { var name: String { get } }
private final class Cat: Animal { let name = "cat" }
private final class Food: Sendable {}
private final class Bowl: Sendable {
    let food: Food
    init(food: Food) { self.food = food }
}
private final class Kitchen: Sendable {
    let bowl: Bowl
    let animal: any Animal
    let secondBowl: Bowl
    init(bowl: Bowl, animal: any Animal, secondBowl: Bowl) {
        self.bowl = bowl
        self.animal = animal
        self.secondBowl = secondBowl
    }
}
private final class Lamp: @unchecked Sendable { var food: Food? }

/// Records every event, as text and as events, from any thread.
private final class EventLog: ResolutionObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var _lines: [String] = []
    private var _built: [InstanceBuilt] = []
    private var _finished: [ResolveFinished] = []
    private var _ids: [ResolveID] = []
    private var _released: [InstanceReleased] = []
    var lines: [String] { lock.holding { _lines } }
    var built: [InstanceBuilt] { lock.holding { _built } }
    var finished: [ResolveFinished] { lock.holding { _finished } }
    var ids: [ResolveID] { lock.holding { _ids } }
    var released: [InstanceReleased] { lock.holding { _released } }

    private func add(_ line: String, _ id: ResolveID?) {
        lock.holding {
            _lines.append(line)
            if let id { _ids.append(id) }
        }
    }

    func resolveStarted(_ event: ResolveStarted) {
        add("start \(event.key)\(event.isAsync ? " async" : "")", event.resolve)
    }
    func resolveFinished(_ event: ResolveFinished) {
        lock.holding { _finished.append(event) }
        add("finish \(event.key)\(event.error == nil ? "" : " threw")", event.resolve)
    }
    func instanceBuilt(_ event: InstanceBuilt) {
        lock.holding { _built.append(event) }
        add("built \(event.key) at \(event.depth)", event.resolve)
    }
    func hooksRan(_ event: HooksRan) {
        add("hooks \(event.key) at \(event.depth)", event.resolve)
    }
    func instanceReused(_ event: InstanceReused) {
        add("reused \(event.key) from \(event.source) at \(event.depth)", event.resolve)
    }
    func instanceReleased(_ event: InstanceReleased) {
        lock.holding { _released.append(event) }
        add("released \(event.key)", nil)
    }
}

extension NSLock {
    fileprivate func holding<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

private func kitchenContainer() -> Container {
    let container = Container()
    container.register(Food.self) { _ in Food() }.inObjectScope(.transient)
    container.register(Bowl.self) { r in Bowl(food: try r.resolve(Food.self)) }  // graph
    container.register((any Animal).self) { _ in Cat() }.inObjectScope(.permanent)
    container.register(Kitchen.self) { r in
        Kitchen(
            bowl: try r.resolve(Bowl.self), animal: try r.resolve((any Animal).self),
            secondBowl: try r.resolve(Bowl.self))
    }
    .initCompleted { _, _ in }
    return container
}

@Suite("ResolutionObserver")
struct ObserverTests {
    @Test("one resolve: every build, reuse and hook run, in order, depth and path included")
    func oneResolve() throws {
        let container = kitchenContainer()
        let recorder = EventLog()
        container.addObserver(recorder)
        let kitchen = try container.resolve(Kitchen.self)
        #expect(
            recorder.lines == [
                "start Kitchen",
                "built Food at 2", "built Bowl at 1", "built Animal at 1", "reused Bowl from graph at 1",
                "built Kitchen at 0", "hooks Kitchen at 0",
                "finish Kitchen",
            ])
        #expect(Set(recorder.ids).count == 1, "one resolve, one identity")
        let built = Dictionary(recorder.built.map { ($0.key.description, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(built["Food"]?.path.map(\.description) == ["Kitchen", "Bowl", "Food"])
        #expect(built["Food"]?.keeper == nil && built["Food"]?.scope == .transient)
        // Registered under a protocol type: the instance is the class inside, its keeper the container.
        #expect(built["Animal"]?.keeper === container)
        #expect(built["Animal"]?.scope == .permanent)
        #expect((built["Animal"]?.instance as? Cat) === (kitchen.animal as? Cat))
        #expect((built["Kitchen"]?.instance as? Kitchen) === kitchen)
        #expect(recorder.finished.first?.error == nil)

        // The second resolve has another identity, and takes the permanent instance from the container.
        _ = try container.resolve(Kitchen.self)
        #expect(recorder.lines.contains("reused Animal from container at 1"))
        #expect(Set(recorder.ids).count == 2)
        // A held permanent instance resolved at the top is reported too (the fast path steps aside).
        _ = try container.resolve((any Animal).self)
        #expect(recorder.lines.suffix(3) == ["start Animal", "reused Animal from container at 0", "finish Animal"])
    }

    @Test("a factory's duration includes what it resolved, and events come on the resolving thread")
    func durationsAndThread() throws {
        let container = Container()
        container.register(Food.self) { _ in
            Thread.sleep(forTimeInterval: 0.02)
            return Food()
        }
        container.register(Bowl.self) { r in Bowl(food: try r.resolve(Food.self)) }
        let recorder = EventLog()
        container.addObserver(recorder)
        _ = try container.resolve(Bowl.self)
        let food = try #require(recorder.built.first { $0.key == ServiceKey(Food.self) })
        let bowl = try #require(recorder.built.first { $0.key == ServiceKey(Bowl.self) })
        #expect(food.factoryDuration >= .milliseconds(20))
        #expect(bowl.factoryDuration >= food.factoryDuration)
        #expect(bowl.started <= food.started)
        let finished = try #require(recorder.finished.first)
        #expect(finished.duration >= bowl.factoryDuration)
    }

    @Test("a failing resolve reports its error, and what was built before it failed")
    func failure() throws {
        let container = Container()
        container.register(Bowl.self) { r in Bowl(food: try r.resolve(Food.self)) }
        let recorder = EventLog()
        container.addObserver(recorder)
        #expect(throws: ResolutionError.self) { try container.resolve(Bowl.self) }
        #expect(recorder.lines == ["start Bowl", "finish Bowl threw"])
        let error = try #require(recorder.finished.first?.error as? ResolutionError)
        #expect(error.kind == .notRegistered)
        #expect(error.key == ServiceKey(Food.self))
    }

    @Test("children inherit observers, present and future; removing one stops it everywhere")
    func inheritance() throws {
        let root = kitchenContainer()
        let before = root.makeChild()
        let recorder = EventLog()
        root.addObserver(recorder)
        root.addObserver(recorder)  // twice: still one observer
        let after = before.makeChild()
        #expect(root.observers.count == 1 && before.observers.count == 1 && after.observers.count == 1)
        _ = try before.resolve(Food.self)
        _ = try after.resolve(Food.self)
        #expect(recorder.lines.filter { $0.hasPrefix("built") } == ["built Food at 0", "built Food at 0"])
        root.removeObserver(recorder)
        #expect(root.observers.isEmpty && before.observers.isEmpty && after.observers.isEmpty)
        _ = try after.resolve(Food.self)
        #expect(recorder.lines.count == 6)
        // One added to a child sees the child's subtree, not its parent.
        let childOnly = EventLog()
        before.addObserver(childOnly)
        _ = try root.resolve(Food.self)
        _ = try after.resolve(Food.self)
        #expect(childOnly.lines == ["start Food", "built Food at 0", "finish Food"])
    }

    @Test("async resolves report as async, with async factories and hooks")
    func asyncResolve() async throws {
        let container = Container()
        container.register(Food.self) { _ async in
            try? await Task.sleep(for: .milliseconds(5))
            return Food()
        }
        container.register(Lamp.self) { _ in Lamp() }
            .initCompleted { r, lamp async throws in lamp.food = try await r.resolve(Food.self) }
        let recorder = EventLog()
        container.addObserver(recorder)
        let lamp = try await container.resolve(Lamp.self)
        #expect(lamp.food != nil)
        #expect(
            recorder.lines == [
                "start Lamp async", "built Lamp at 0", "built Food at 1", "hooks Lamp at 0", "finish Lamp",
            ])
        #expect(recorder.built.allSatisfy { $0.isAsync })
        let food = try #require(recorder.built.first { $0.key == ServiceKey(Food.self) })
        #expect(food.factoryDuration >= .milliseconds(5))
    }

    @Test("closing a container reports each instance it released, after its onRelease hooks")
    func released() async throws {
        let log = EventArray<String>()
        final class Logging: ResolutionObserver, @unchecked Sendable {
            let log: EventArray<String>
            init(_ log: EventArray<String>) { self.log = log }
            func instanceReleased(_ event: InstanceReleased) { log.append("released \(event.key)") }
        }
        let root = Container()
        root.register(Food.self) { _ in Food() }.inObjectScope(.permanent)
        root.register(Bowl.self) { r in Bowl(food: try r.resolve(Food.self)) }
            .inObjectScope(.perContainer)
            .onRelease { _ in log.append("hook Bowl") }
        let recorder = EventLog()
        root.addObserver(recorder)
        root.addObserver(Logging(log))
        let request = root.makeChild()
        let bowl = try resolveSynchronously(Bowl.self, from: request)
        request.close()
        #expect(log.values == ["hook Bowl", "released Bowl"])
        #expect(recorder.released.map(\.key) == [ServiceKey(Bowl.self)])
        #expect((recorder.released.first?.instance as? Bowl) === bowl)
        root.resetObjectScope(.permanent)
        #expect(recorder.released.map(\.key) == [ServiceKey(Bowl.self), ServiceKey(Food.self)])
        // Replacing a registration releases what the old one held.
        _ = try resolveSynchronously(Food.self, from: root)
        root.register(Food.self) { _ in Food() }.inObjectScope(.permanent)
        #expect(recorder.released.count == 3)
        // So does closeAndWait.
        _ = try resolveSynchronously(Food.self, from: root)
        await root.closeAndWait()
        #expect(recorder.released.count == 4)
        // A weak instance is never released by a container: no event.
        let weakContainer = Container()
        weakContainer.register(Food.self) { _ in Food() }.inObjectScope(.weak)
        weakContainer.addObserver(recorder)
        let food = try resolveSynchronously(Food.self, from: weakContainer)
        weakContainer.close()
        #expect(recorder.released.count == 4)
        withExtendedLifetime(food) {}
    }

    @Test(
        "an observer may resolve: that is a resolve of its own, which no observer sees; the observed one is unchanged")
    func observerResolves() throws {
        let container = kitchenContainer()
        final class Resolving: ResolutionObserver, @unchecked Sendable {
            let container: Container
            var foods: [Food] = []
            init(_ container: Container) { self.container = container }
            func instanceBuilt(_ event: InstanceBuilt) {
                if event.key == ServiceKey(Bowl.self), let food = try? container.resolve(Food.self) {
                    foods.append(food)
                }
            }
        }
        let resolving = Resolving(container)
        let recorder = EventLog()
        container.addObserver(resolving)
        container.addObserver(recorder)
        let kitchen = try container.resolve(Kitchen.self)
        #expect(kitchen.bowl === kitchen.secondBowl, "graph sharing holds")
        #expect(resolving.foods.count == 1)
        #expect(Set(recorder.ids).count == 1, "the observer's resolve is not observed")
        #expect(recorder.finished.count == 1)
        #expect(recorder.finished.allSatisfy { $0.error == nil })
    }

    @Test("an observer that resolves in every event is told of each event once, and never of its own resolves")
    func observerResolvingInEveryEvent() throws {
        final class ResolvingEverywhere: ResolutionObserver, @unchecked Sendable {
            let container: Container
            let lock = NSLock()
            var events: [String] = []
            var resolved = 0
            init(_ container: Container) { self.container = container }
            private func record(_ event: String) {
                // A resolve of its own inside every callback: before the fix, one in `resolveStarted` reported
                // itself, and resolved again, until the thread's stack ran out.
                let food = try? container.resolve(Food.self)
                lock.holding {
                    events.append(event)
                    if food != nil { resolved += 1 }
                }
            }
            func resolveStarted(_ event: ResolveStarted) { record("start \(event.key)") }
            func resolveFinished(_ event: ResolveFinished) { record("finish \(event.key)") }
            func instanceBuilt(_ event: InstanceBuilt) { record("built \(event.key)") }
            func hooksRan(_ event: HooksRan) { record("hooks \(event.key)") }
            func instanceReused(_ event: InstanceReused) { record("reused \(event.key)") }
            func instanceReleased(_ event: InstanceReleased) { record("released \(event.key)") }
        }
        let container = Container()
        container.register(Food.self) { _ in Food() }
        container.register(Lamp.self) { _ in Lamp() }
            .initCompleted { r, lamp in lamp.food = try r.resolve(Food.self) }
        container.register(Bowl.self) { r in Bowl(food: try r.resolve()) }.inObjectScope(.permanent)
        let observer = ResolvingEverywhere(container)
        container.addObserver(observer)

        _ = try container.resolve(Lamp.self)
        _ = try container.resolve(Bowl.self)
        _ = try container.resolve(Bowl.self)
        container.close()

        let events = observer.lock.holding { observer.events }
        #expect(
            events == [
                "start Lamp", "built Lamp", "built Food", "hooks Lamp", "finish Lamp",
                "start Bowl", "built Food", "built Bowl", "finish Bowl",
                "start Bowl", "reused Bowl", "finish Bowl",
                "released Bowl",
            ])
        #expect(observer.lock.holding { observer.resolved } == events.count - 1, "the last, after close, threw")
    }

    @Test("an observer resolving a permanent instance still being built is told so, and may resolve it once finished")
    func observerResolvingWhatIsStillBuilt() throws {
        final class ResolvingTheBowl: ResolutionObserver, @unchecked Sendable {
            let container: Container
            let lock = NSLock()
            var inBuilt: (any Error)?
            var inFinished: Bowl?
            init(_ container: Container) { self.container = container }
            func instanceBuilt(_ event: InstanceBuilt) {
                guard event.key == ServiceKey(Bowl.self) else { return }
                do { _ = try container.resolve(Bowl.self) } catch { lock.holding { inBuilt = error } }
            }
            func resolveFinished(_ event: ResolveFinished) {
                guard event.key == ServiceKey(Bowl.self) else { return }
                let bowl = try? container.resolve(Bowl.self)
                lock.holding { inFinished = bowl }
            }
        }
        let container = Container()
        container.register(Food.self) { _ in Food() }
        container.register(Bowl.self) { r in Bowl(food: try r.resolve()) }.inObjectScope(.permanent)
        let observer = ResolvingTheBowl(container)
        container.addObserver(observer)

        let bowl = try container.resolve(Bowl.self)
        let error = try #require(observer.lock.holding { observer.inBuilt } as? ResolutionError)
        #expect(error.kind == .circularDependency)
        #expect(error.description.contains("an observer is handling"), "\(error)")
        #expect(!error.description.contains("a factory or hook called a container's resolve"))
        #expect(observer.lock.holding { observer.inFinished } === bowl)
    }

    @Test("a resolve in a closed container reports that it began and threw, sync and async")
    func closedContainer() async throws {
        let container = kitchenContainer()
        let recorder = EventLog()
        container.addObserver(recorder)
        let child = container.makeChild()
        child.close()
        #expect(throws: ResolutionError.self) { try child.resolve(Food.self) }
        await #expect(throws: ResolutionError.self) { try await child.resolve(Food.self) }
        #expect(recorder.lines == ["start Food", "finish Food threw", "start Food async", "finish Food threw"])
        #expect(recorder.finished.allSatisfy { ($0.error as? ResolutionError)?.kind == .containerClosed })
    }

    @Test("a slow observer on many threads changes no outcome: one permanent instance, every resolve right")
    func slowObserverUnderContention() throws {
        final class Slow: ResolutionObserver, @unchecked Sendable {
            func instanceBuilt(_ event: InstanceBuilt) { Thread.sleep(forTimeInterval: 0.002) }
            func instanceReused(_ event: InstanceReused) { Thread.sleep(forTimeInterval: 0.0005) }
        }
        let container = kitchenContainer()
        let builds = EventLog()
        container.addObserver(Slow())
        container.addObserver(builds)
        let animals = EventArray<ObjectIdentifier>()
        let finished = runThreads(8, timeout: Watchdog.patience) { _ in
            for _ in 0..<20 {
                guard let kitchen = try? container.resolve(Kitchen.self) else { return }
                animals.append(ObjectIdentifier(kitchen.animal))
            }
        }
        #expect(finished)
        #expect(animals.count == 160)
        #expect(Set(animals.values).count == 1)
        #expect(builds.built.filter { $0.key == ServiceKey((any Animal).self) }.count == 1)
    }

    @Test("adding and removing observers while threads resolve: every resolve is right, every event paired")
    func raceWithAddAndRemove() throws {
        let container = kitchenContainer()
        let child = container.makeChild()
        let stop = EventArray<Bool>()
        let recorders = (0..<4).map { _ in EventLog() }
        let failures = EventArray<String>()
        let finished = runThreads(3, timeout: Watchdog.patience) { index in
            if index == 0 {
                for round in 0..<200 {
                    let recorder = recorders[round % 4]
                    (round % 3 == 0 ? child : container).addObserver(recorder)
                    container.removeObserver(recorders[(round + 2) % 4])
                }
                for recorder in recorders { container.removeObserver(recorder) }
                stop.append(true)
            } else {
                while stop.count == 0 {
                    do {
                        let kitchen = try child.resolve(Kitchen.self)
                        if kitchen.bowl !== kitchen.secondBowl { failures.append("graph not shared") }
                    } catch {
                        failures.append("\(error)")
                    }
                }
            }
        }
        #expect(finished)
        #expect(failures.values.isEmpty)
        #expect(container.observers.isEmpty && child.observers.isEmpty)
        for recorder in recorders {
            let starts = recorder.lines.filter { $0.hasPrefix("start") }.count
            let finishes = recorder.lines.filter { $0.hasPrefix("finish") }.count
            #expect(starts == finishes, "a resolve keeps the observers it started with")
        }
    }

    @Test("a resolver kept past its resolution reports the resolves it starts")
    func keptResolver() throws {
        let container = Container()
        let kept = EventArray<any Resolver>()
        container.register(Food.self) { _ in Food() }
        container.register(Bowl.self) { r in
            kept.append(r)
            return Bowl(food: try r.resolve(Food.self))
        }
        _ = try container.resolve(Bowl.self)
        let recorder = EventLog()
        container.addObserver(recorder)
        _ = try kept.values[0].resolve(Food.self)
        #expect(recorder.lines == ["start Food", "built Food at 0", "finish Food"])
    }

    @Test("a leak tracker is an observer, and removes itself when dropped")
    func leakTrackerIsAnObserver() throws {
        let container = kitchenContainer()
        do {
            let tracker = LeakTracker(container)
            #expect(container.observers.count == 1)
            _ = try container.resolve(Kitchen.self)
            #expect(tracker.check().isClean)
        }
        #expect(container.observers.isEmpty)
    }

    @MainActor
    @Test("on the main actor, sync and async")
    func mainActor() async throws {
        let container = kitchenContainer()
        let recorder = EventLog()
        container.addObserver(recorder)
        _ = try resolveSynchronously(Kitchen.self, from: container)
        _ = try await container.resolve(Kitchen.self)
        #expect(recorder.lines.filter { $0.hasPrefix("start") } == ["start Kitchen", "start Kitchen async"])
    }
}

/// An array behind a lock, for threads to append to.
private final class EventArray<Element>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []
    func append(_ element: Element) { lock.holding { elements.append(element) } }
    var values: [Element] { lock.holding { elements } }
    var count: Int { lock.holding { elements.count } }
}
