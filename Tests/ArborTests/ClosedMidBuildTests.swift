import ArborTestSupport
import Foundation
import Testing

@testable import Arbor

// A container closed while one of its instances is being built: the resolve that runs the factory finishes with its
// instance, which the closed container releases at once (its `onRelease` hooks run); every resolve waiting for that
// build throws `.containerClosed`; no factory runs again after `close()` returned; and a resolve that begins once
// `isClosed` reads `true` throws, whatever the thread's look-up cache remembers.

private final class CUnit: @unchecked Sendable {
    let serial: Int
    init(serial: Int) { self.serial = serial }
}

/// Where the instance being built lives.
enum ClosedKeeper: String, CaseIterable, Sendable {
    /// A per-container registration of the root, built in the closed child.
    case perContainer
    /// A permanent registration of the closed child itself.
    case permanentInChild
}

enum ClosedEngine: String, CaseIterable, Sendable {
    case synchronous
    case async
}

/// Counts factory runs (as they begin) and releases, and how many factory runs began after `close()` returned.
private final class BuildLog: @unchecked Sendable {
    private let lock = NSLock()
    private var closedAt: Int?
    private(set) var builds = 0
    private(set) var buildsAfterClose = 0
    private(set) var releases = 0

    func built() -> Int {
        lock.withLock {
            builds += 1
            if closedAt != nil { buildsAfterClose += 1 }
            return builds
        }
    }

    func released() { lock.withLock { releases += 1 } }
    func closed() { lock.withLock { closedAt = builds } }
    var counts: (builds: Int, afterClose: Int, releases: Int) { lock.withLock { (builds, buildsAfterClose, releases) } }
}

@Suite struct ClosedMidBuildTests {
    /// The child, with its registration, and the storage its build claims.
    private func makeChild(_ keeper: ClosedKeeper, engine: ClosedEngine, log: BuildLog, gate: Gate) -> Container {
        let root = Container()
        let target = keeper == .perContainer ? root : root.makeChild()
        let child = keeper == .perContainer ? root.makeChild() : target
        let scope: ObjectScope = keeper == .perContainer ? .perContainer : .permanent
        switch engine {
        case .synchronous:
            target.register(CUnit.self) { _ in
                let serial = log.built()
                gate.pass()
                return CUnit(serial: serial)
            }
            .inObjectScope(scope)
            .onRelease { _ in log.released() }
        case .async:
            target.register(CUnit.self) { _ async in
                let serial = log.built()
                await gate.passAsync()
                return CUnit(serial: serial)
            }
            .inObjectScope(scope)
            .onRelease { _ in log.released() }
        }
        return child
    }

    private func storage(of child: Container, _ keeper: ClosedKeeper) throws -> InstanceStorage {
        switch keeper {
        case .perContainer:
            let entry = try #require(child.parent?.entries.first)
            return child.perContainerStorage(for: entry)
        case .permanentInChild:
            return try #require(child.entries.first?.storage)
        }
    }

    @Test(arguments: ClosedKeeper.allCases, ClosedEngine.allCases)
    func waitersOfABuildInterruptedByCloseThrowContainerClosed(keeper: ClosedKeeper, engine: ClosedEngine) async throws
    {
        for awaiting in [false, true] {
            let log = BuildLog()
            let gate = Gate()
            let child = makeChild(keeper, engine: engine, log: log, gate: gate)
            let results = ResultsLog()
            func resolve(_ index: Int) {
                switch engine {
                case .synchronous:
                    Thread {
                        results.add(index, Result { try child.resolve(CUnit.self) })
                    }.start()
                case .async:
                    Task.detached {
                        do {
                            results.add(index, .success(try await child.resolve(CUnit.self)))
                        } catch {
                            results.add(index, .failure(error))
                        }
                    }
                }
            }
            resolve(0)
            #expect(await poll { gate.hasArrivals }, "the builder's factory started")
            let storage = try storage(of: child, keeper)
            for index in 1...3 { resolve(index) }
            let waiting = await poll {
                let counts = CreationCoordinator.shared.waitingCounts(for: storage)
                return counts.blocked + counts.suspended >= 3
            }
            #expect(waiting, "three resolves wait for the build")
            if awaiting {
                await child.closeAndWait()
            } else {
                child.close()
            }
            log.closed()
            gate.open()
            #expect(await poll { results.count == 4 }, "every resolve ended")
            let outcome = results.all
            let counts = log.counts
            let context = "\(keeper), \(engine), \(awaiting ? "closeAndWait" : "close")"
            #expect(counts.builds == 1, "\(context): the factory ran \(counts.builds) times")
            #expect(counts.afterClose == 0, "\(context): \(counts.afterClose) factory runs began after close")
            #expect(counts.releases == counts.builds, "\(context): \(counts.releases) releases of \(counts.builds)")
            // The builder finishes with its instance; the closed container released it.
            #expect(
                (try? outcome[0]?.get())?.serial == 1, "\(context): the builder got \(String(describing: outcome[0]))")
            for index in 1...3 {
                let error = outcome[index].flatMap { result -> ResolutionError? in
                    guard case .failure(let error) = result else { return nil }
                    return error as? ResolutionError
                }
                #expect(
                    error?.kind == .containerClosed,
                    "\(context): waiter \(index) got \(String(describing: outcome[index]))")
            }
            #expect(throws: ResolutionError.self) { try child.resolve(CUnit.self) }
        }
    }

    /// The rounds run on a thread of their own, which waits for each round's threads: seconds of it hold none of
    /// Swift's threads for tasks. The test checks, in its own task, that every round's threads finished.
    @Test func aResolveThatBeginsOnceIsClosedReadsTrueThrows() async throws {
        let rounds = runsUnderSanitizer ? 300 : 1_000
        let problems = ProblemLog()
        let unfinished = await onAThreadOfItsOwn { (0..<rounds).filter { !Self.raceToClose(round: $0, problems) } }
        #expect(unfinished.isEmpty, "the threads of rounds \(unfinished) did not finish")
        problems.expectNone()
    }

    /// One round: a thread closes a child while another, with both look-ups in its cache, resolves once it reads
    /// `isClosed` true. Whether both threads finished.
    private static func raceToClose(round: Int, _ problems: ProblemLog) -> Bool {
        let root = Container()
        root.register(CUnit.self) { _ in CUnit(serial: 0) }.inObjectScope(.perContainer)
        root.register(String.self) { _ in "transient" }.inObjectScope(.transient)
        let child = root.makeChild()
        let ready = Flag()
        let finished = runThreads(2) { index in
            if index == 0 {
                while !ready.isOn {}
                child.close()
                return
            }
            // Both look-ups are in this thread's cache before the other thread closes the child.
            _ = try? child.resolve(CUnit.self)
            _ = try? child.resolve(String.self)
            ready.isOn = true
            while !child.isClosed {}
            problems.check(
                (try? child.resolve(CUnit.self)) == nil, "round \(round): a per-container resolve after isClosed")
            problems.check(
                (try? child.resolve(String.self)) == nil, "round \(round): a transient resolve after isClosed")
        }
        return finished
    }

    @Test func anAsyncResolveThatBeginsOnceIsClosedReadsTrueThrows() async throws {
        let rounds = runsUnderSanitizer ? 300 : 1_000
        let problems = ProblemLog()
        for round in 0..<rounds {
            let root = Container()
            root.register(CUnit.self) { _ async in CUnit(serial: 0) }.inObjectScope(.perContainer)
            let child = root.makeChild()
            let ready = Flag()
            let resolver = Task.detached {
                _ = try? await child.resolve(CUnit.self)
                ready.isOn = true
                while !child.isClosed {}
                problems.check(
                    (try? await child.resolve(CUnit.self)) == nil, "round \(round): an async resolve after isClosed")
            }
            let closer = Thread {
                while !ready.isOn {}
                child.close()
            }
            closer.start()
            await resolver.value
        }
        problems.expectNone()
    }
}

/// The outcome of each resolve, by index.
private final class ResultsLog: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Int: Result<CUnit, any Error>] = [:]
    func add(_ index: Int, _ result: Result<CUnit, any Error>) { lock.withLock { results[index] = result } }
    var all: [Int: Result<CUnit, any Error>] { lock.withLock { results } }
    var count: Int { lock.withLock { results.count } }
}
