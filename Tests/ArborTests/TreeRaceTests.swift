import Arbor
import ArborTestSupport
import Foundation
import Testing

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

// Changes to the tree of containers racing with `makeChild()`. A child made while an ancestor is being closed is
// closed once `close()` has returned; a child made while a `LeakTracker` is being created on an ancestor is
// tracked once the tracker's initializer has returned. Two threads race in many short attempts, each after a
// seeded random spin so that the interleavings vary; the seed is printed on failure.
//
// The windows in which these races go wrong are a few hundred nanoseconds wide: the thread that makes the child
// would have to pause inside one. To make that likely, the other thread sends it a signal at a random moment of
// each attempt, and the signal handler holds it for a few microseconds (`TRStall`): wherever it lands, the other
// thread's close or tracker creation can overtake it. Correct code does not care where a thread pauses.

private final class TRService: @unchecked Sendable {}

/// Two threads taking steps together: thread 0 announces each step, thread 1 waits for the announcement, and thread 0
/// waits for thread 1 to finish the step before the next. Both wait by polling, so they leave a wait within a few
/// hundred nanoseconds of each other. Any wait longer than the deadline abandons the race.
private final class TRLockstep: @unchecked Sendable {
    private let lock = NSLock()
    private var announced = -1
    private var finished = -1
    private var abandoned = false
    private let deadline: Date

    init(deadline: Date) { self.deadline = deadline }

    func announce(_ step: Int) { lock.withLock { announced = step } }

    func finish(_ step: Int) { lock.withLock { finished = step } }

    /// Waits until `value()` reaches `step`; `false` if the race was abandoned.
    private func wait(until step: Int, _ value: () -> Int) -> Bool {
        var polls = 0
        while true {
            let (current, gaveUp) = lock.withLock { (value(), abandoned) }
            if gaveUp { return false }
            if current >= step { return true }
            polls += 1
            if polls % 4096 == 0 {
                if Date() > deadline {
                    lock.withLock { abandoned = true }
                    return false
                }
                sched_yield()
            }
        }
    }

    func isFinished(_ step: Int) -> Bool { lock.withLock { finished >= step } }

    func waitForAnnouncement(of step: Int) -> Bool { wait(until: step) { announced } }

    func waitForFinish(of step: Int) -> Bool { wait(until: step) { finished } }
}

/// Busy-waits for `nanoseconds`.
private func spin(nanoseconds: UInt64) {
    let end = DispatchTime.now().uptimeNanoseconds + nanoseconds
    while DispatchTime.now().uptimeNanoseconds < end {}
}

/// Holds a thread for a few microseconds wherever it is: `pause(thread)` sends it `SIGUSR2`, whose handler spins.
private enum TRStall {
    static let signal = SIGUSR2

    /// Installs the handler once; it stays installed (only these tests send the signal).
    static let isInstalled: Bool = {
        let handler: @convention(c) (Int32) -> Void = { _ in
            // Async-signal-safe: only `clock_gettime`.
            var start = timespec()
            clock_gettime(CLOCK_MONOTONIC, &start)
            var now = start
            repeat {
                clock_gettime(CLOCK_MONOTONIC, &now)
            } while (now.tv_sec - start.tv_sec) * 1_000_000_000 + (now.tv_nsec - start.tv_nsec) < 30_000
        }
        var action = sigaction()
        #if canImport(Darwin)
        action.__sigaction_u = __sigaction_u(__sa_handler: handler)
        #else
        action.__sigaction_handler = .init(sa_handler: handler)
        #endif
        action.sa_flags = SA_RESTART
        return sigaction(signal, &action, nil) == 0
    }()

    /// Lets the calling thread receive the signal: threads may start with it blocked.
    static func allowPauses() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    static func pause(_ thread: pthread_t) {
        pthread_kill(thread, signal)
    }
}

/// Runs `attempts` steps. In each, thread 1 pauses thread 0 at a random moment (`TRStall`), waits a random while and
/// runs `change(step)` once; meanwhile thread 0 runs `make(step)` again and again (at most 16 times) until thread 1
/// is done, so that the pause lands somewhere in one of its runs. Steps come in batches of `batch`: thread 0 calls
/// `prepare()` before each batch and `check(batch)` after it. `false` if the threads did not finish within
/// `timeout` seconds.
private func race(
    attempts: Int,
    batch: Int = 128,
    seed: UInt64,
    timeout: TimeInterval = 20,
    prepare: @escaping @Sendable () -> Void,
    make: @escaping @Sendable (_ step: Int) -> Void,
    change: @escaping @Sendable (_ step: Int) -> Void,
    check: @escaping @Sendable (_ batch: Int) -> Void
) async -> Bool {
    guard TRStall.isInstalled else {
        Issue.record("could not install the signal handler")
        return false
    }
    let lockstep = TRLockstep(deadline: Date(timeIntervalSinceNow: timeout))
    let firstThread = Box<pthread_t>()
    let batches = (attempts + batch - 1) / batch
    // The test waits for the two threads suspended: seconds of racing hold none of Swift's threads for tasks.
    return await onAThreadOfItsOwn {
        runThreads(2, timeout: timeout + 1) { thread in
            var generator = SplitMix64(seed: SplitMix64.derive(seed, UInt64(thread)))
            if thread == 0 {
                TRStall.allowPauses()
                firstThread.value = pthread_self()
            }
            for number in 0..<batches {
                for index in 0..<batch {
                    let step = number * batch + index
                    if thread == 0 {
                        if index == 0 { prepare() }
                        lockstep.announce(step)
                        var runs = 0
                        repeat {
                            make(index)
                            runs += 1
                        } while runs < 16 && !lockstep.isFinished(step)
                        guard lockstep.waitForFinish(of: step) else { return }
                    } else {
                        guard lockstep.waitForAnnouncement(of: step), let target = firstThread.value else { return }
                        TRStall.pause(target)
                        spin(nanoseconds: UInt64(generator.int(in: 0...25_000)))
                        change(index)
                        lockstep.finish(step)
                    }
                }
                if thread == 0 { check(number) }
            }
        }
    }
}

/// The trees of one batch: `grandparents[i]` → `parents[i]` → `children[i]`, and a tracker per tree.
private final class TRForest: @unchecked Sendable {
    private let lock = NSLock()
    private var grandparents: [Container] = []
    private var parents: [Container] = []
    private var children: [[Container]] = []
    private var trackers: [LeakTracker?] = []

    /// Makes `size` trees whose grandparent registers `TRService` in `scope`.
    func reset(size: Int, scope: ObjectScope) {
        let trees = (0..<size).map { _ in
            let grandparent = Container()
            grandparent.register(TRService.self) { _ in TRService() }.inObjectScope(scope)
            return (grandparent, grandparent.makeChild())
        }
        let dropped = lock.withLock {
            defer {
                grandparents = trees.map(\.0)
                parents = trees.map(\.1)
                children = Array(repeating: [], count: size)
                trackers = Array(repeating: nil, count: size)
            }
            return (grandparents, parents, children, trackers)
        }
        withExtendedLifetime(dropped) {}  // freed after the lock
    }

    func container(_ name: String, _ index: Int) -> Container {
        lock.withLock { name == "grandparent" ? grandparents[index] : parents[index] }
    }

    func addChild(_ index: Int) {
        let parent = lock.withLock { parents[index] }
        let child = parent.makeChild()
        lock.withLock { children[index].append(child) }
    }

    func children(_ index: Int) -> [Container] { lock.withLock { children[index] } }

    func setTracker(_ tracker: LeakTracker, _ index: Int) { lock.withLock { trackers[index] = tracker } }

    func tracker(_ index: Int) -> LeakTracker? { lock.withLock { trackers[index] } }
}

/// How long the races run: a sanitizer slows every step down many times over, so it runs fewer attempts. The time
/// limit only tells a deadlock from slowness: the watchdog's patience, as the suites running alongside, which may
/// take the cores for minutes (under ThreadSanitizer, 60 s was too short for a run with a build beside it).
private enum TRRace {
    static let attempts = TestEnvironment.runsUnderSanitizer ? 256 : 1_000
    static let timeout: TimeInterval = Watchdog.patience
}

@Suite(.serialized) struct TreeRaceTests {
    /// The container that closes is the children's parent, or their grandparent.
    @Test(arguments: ["parent", "grandparent"])
    func aChildMadeWhileAnAncestorClosesIsClosed(closing: String) async {
        let seed = TestEnvironment.baseSeed
        let batch = 128
        let forest = TRForest()
        let problems = ProblemLog()
        let finished = await race(
            attempts: TRRace.attempts, batch: batch, seed: seed, timeout: TRRace.timeout,
            prepare: { forest.reset(size: batch, scope: .graph) },
            make: { forest.addChild($0) },
            change: { forest.container(closing, $0).close() },
            check: { number in
                for index in 0..<batch {
                    let attempt = number * batch + index
                    for (position, child) in forest.children(index).enumerated() {
                        let name = "attempt \(attempt), child \(position)"
                        problems.check(child.isClosed, "\(name): the child of a closed \(closing) is open")
                        do {
                            _ = try child.resolve(TRService.self)
                            problems.record("\(name): the child of a closed \(closing) resolved")
                        } catch let error as ResolutionError {
                            problems.check(error.kind == .containerClosed, "\(name): threw \(error.kind)")
                        } catch {
                            problems.record("\(name): threw \(error)")
                        }
                    }
                }
            })
        #expect(finished, "the threads did not finish in time (seed \(TestEnvironment.hex(seed)))")
        #expect(problems.isEmpty, "seed \(TestEnvironment.hex(seed)): \(problems.summary)")
    }

    /// The tracker is made on the children's parent, or on their grandparent.
    @Test(arguments: ["parent", "grandparent"])
    func aChildMadeWhileATrackerIsCreatedOnAnAncestorIsTracked(trackedAt: String) async {
        let seed = TestEnvironment.baseSeed
        let batch = 128
        let forest = TRForest()
        let problems = ProblemLog()
        let finished = await race(
            attempts: TRRace.attempts, batch: batch, seed: seed, timeout: TRRace.timeout,
            prepare: { forest.reset(size: batch, scope: .transient) },
            make: { forest.addChild($0) },
            change: { forest.setTracker(LeakTracker(forest.container(trackedAt, $0)), $0) },
            check: { number in
                for index in 0..<batch {
                    let attempt = number * batch + index
                    guard let tracker = forest.tracker(index) else {
                        problems.record("attempt \(attempt): no tracker")
                        continue
                    }
                    let children = forest.children(index)
                    do {
                        // Each child resolves an instance and keeps it: as many leaks as children.
                        let leaked = try children.map { try $0.resolve(TRService.self) }
                        let report = tracker.check()
                        problems.check(
                            report.leaks.count == children.count,
                            "attempt \(attempt): the tracker on the \(trackedAt) saw \(report.leaks.count) of the "
                                + "\(children.count) instances its descendants leaked")
                        withExtendedLifetime(leaked) {}
                    } catch {
                        problems.record("attempt \(attempt): resolve threw \(error)")
                    }
                }
            })
        #expect(finished, "the threads did not finish in time (seed \(TestEnvironment.hex(seed)))")
        #expect(problems.isEmpty, "seed \(TestEnvironment.hex(seed)): \(problems.summary)")
    }
}
