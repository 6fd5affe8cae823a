import Arbor
import ArborTestSupport
import Foundation
import Testing

// Threads resolve permanent services while others replace, unregister or remove them all, in a seeded order.
// Counted against the model of the lifetime: a registration's factory runs at most once (one permanent instance per
// registration, never a second one after it was replaced), and once the container is closed every instance a
// factory returned has been released, its `onRelease` run exactly once, and freed: nothing, no retired registration
// either, keeps it. Replay a failure with `ARBOR_SEED`.

private final class RMInstance: @unchecked Sendable {
    let registration: String
    let ledger: RMLedger
    init(registration: String, ledger: RMLedger) {
        self.registration = registration
        self.ledger = ledger
    }
    deinit { ledger.freed() }
}

/// What the factories and the `onRelease` hooks did, by registration.
private final class RMLedger: @unchecked Sendable {
    private let lock = NSLock()
    private var builds: [String: Int] = [:]
    private var releases: [String: Int] = [:]
    private var next = 0
    private var freedCount = 0

    /// A name no registration had before.
    func newRegistration(_ key: Int) -> String {
        lock.withLock {
            next += 1
            return "key \(key), registration \(next)"
        }
    }

    func built(_ registration: String) { lock.withLock { builds[registration, default: 0] += 1 } }
    func released(_ registration: String) { lock.withLock { releases[registration, default: 0] += 1 } }
    func freed() { lock.withLock { freedCount += 1 } }
    var snapshot: (builds: [String: Int], releases: [String: Int]) { lock.withLock { (builds, releases) } }
    var freedInstances: Int { lock.withLock { freedCount } }
}

private func register(_ key: Int, in container: Container, ledger: RMLedger) {
    let registration = ledger.newRegistration(key)
    // Permanent from the start (the container's default scope): `inObjectScope` after `register` would leave a moment
    // in which the registration is graph-scoped, and each resolve then builds an instance of its own.
    container.register(RMInstance.self, name: "\(key)") { _ in
        ledger.built(registration)
        return RMInstance(registration: registration, ledger: ledger)
    }
    .onRelease { instance in ledger.released(instance.registration) }
}

@Suite struct RetirementModelTests {
    @Test func factoryRunsAndReleasesMatchTheModelWhileRegistrationsChangeUnderResolvingThreads() {
        let seed = TestEnvironment.baseSeed
        let keys = 4
        let threads = 4
        let operations = TestEnvironment.runsUnderSanitizer ? 500 : 3_000
        let ledger = RMLedger()
        let container = Container(defaultScope: .permanent)
        for key in 0..<keys { register(key, in: container, ledger: ledger) }
        // Changes to the registrations take turns, so that a registration has its `onRelease` hook before another
        // thread can replace it; the resolves race with them freely, factories running while a change lands.
        let changes = NSLock()

        let finished = runThreads(threads) { thread in
            var random = SplitMix64(seed: SplitMix64.derive(seed, UInt64(thread)))
            for _ in 0..<operations {
                let key = random.int(in: 0..<keys)
                switch random.int(in: 0..<100) {
                case 0..<80:
                    _ = try? container.resolve(RMInstance.self, name: "\(key)")
                case 80..<92:
                    changes.withLock { register(key, in: container, ledger: ledger) }
                case 92..<99:
                    changes.withLock { container.unregister(RMInstance.self, name: "\(key)") }
                default:
                    changes.withLock { container.removeAll() }
                }
            }
        }
        #expect(finished, "the threads did not finish in time (seed \(TestEnvironment.hex(seed)))")
        container.close()

        let (builds, releases) = ledger.snapshot
        let twice = builds.filter { $0.value > 1 }
        #expect(twice.isEmpty, "seed \(TestEnvironment.hex(seed)): a registration built more than once: \(twice)")
        let notReleased = builds.keys.filter { releases[$0] == nil }.sorted().prefix(5)
        let releasedTwice = releases.filter { $0.value > 1 }
        #expect(
            releases == builds,
            """
            seed \(TestEnvironment.hex(seed)): built \(builds.count) instances, released \(releases.count); \
            not released: \(notReleased), released more than once: \(releasedTwice)
            """)
        // Nothing kept an instance: no retired registration, no storage.
        let built = builds.values.reduce(0, +)
        #expect(
            ledger.freedInstances == built,
            "seed \(TestEnvironment.hex(seed)): \(built - ledger.freedInstances) instances outlived close()")
        #expect(builds.count > keys, "seed \(TestEnvironment.hex(seed)): the race built only \(builds.count)")
    }
}
