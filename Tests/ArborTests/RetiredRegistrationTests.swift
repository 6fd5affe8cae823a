import Foundation
import Testing

@testable import Arbor

// A permanent instance whose factory is still running when its registration leaves the container — replaced,
// unregistered, removed with `removeAll()`, or given another scope — must not escape: the resolve that builds it
// gets it, and then the container releases it (its `onRelease` hooks run) instead of the retired registration
// keeping it. The retired registration builds nothing more, and after `close()` every instance the container
// built has been released, each once.

private final class RRResource: @unchecked Sendable {
    let label: String
    init(label: String) { self.label = label }
}

/// Holds the first run of a factory until the test lets it go.
private final class RRGate: @unchecked Sendable {
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
}

/// What the factories built and what the container released, by label.
private final class RRLedger: @unchecked Sendable {
    let built = Recorder()
    let released = Recorder()
    let oldBuilds = Counter()
    let newBuilds = Counter()
}

/// How the running build's registration leaves the container.
enum RRChange: String, CaseIterable, CustomTestStringConvertible {
    case replace
    case unregister
    case removeAll
    case scopeChangeByRegisteringAgain
    case scopeChangeOfTheRegistration

    var testDescription: String { rawValue }

    /// Whether resolving the key afterwards still finds a registration.
    var leavesARegistration: Bool { self != .unregister && self != .removeAll }

    /// Whether the old factory lives on, in the reconfigured (now transient) registration.
    var keepsTheFactory: Bool { self == .scopeChangeOfTheRegistration }
}

/// Registers the permanent `RRResource` whose first build blocks on `gate`.
@discardableResult
private func registerOld(
    in container: Container, gate: RRGate, ledger: RRLedger, failingFirst: Bool = false
) -> Registration<RRResource> {
    container.register(RRResource.self) { _ in
        let number = ledger.oldBuilds.increment()
        if number == 1 {
            gate.entered.signal()
            _ = gate.proceed.wait(timeout: .now() + 10)
            if failingFirst { throw TestFailure("the first build fails") }
        }
        // Only the first build runs while the registration is permanent; later ones (after a scope change of this
        // registration) are transient, which the container never holds.
        if number == 1 { ledger.built.record("old 1") }
        return RRResource(label: "old \(number)")
    }
    .inObjectScope(.permanent)
    .onRelease { ledger.released.record($0.label) }
}

/// Registers the new `RRResource`, in `scope` from the start (the internal `register(_:name:scope:factory:)`, not
/// `register(…).inObjectScope(scope)`): a thread that waits for the old registration's build can wake at any change
/// the shared coordinator sees, other tests' builds included, and look the key up again during the change. Then it
/// finds the new registration in its scope, whose `onRelease`, added after, goes to the same storage; in the
/// container's default scope for a moment, it would build an instance the container never holds.
private func registerNew(in container: Container, scope: ObjectScope, ledger: RRLedger) {
    container.register(RRResource.self, name: nil, scope: scope) { _ in
        let number = ledger.newBuilds.increment()
        // Only instances the container holds are released: record the permanent ones.
        if scope == .permanent { ledger.built.record("new \(number)") }
        return RRResource(label: "new \(number)")
    }
    .onRelease { ledger.released.record($0.label) }
}

private func apply(
    _ change: RRChange, to container: Container, registration: Registration<RRResource>, ledger: RRLedger
) {
    switch change {
    case .replace: registerNew(in: container, scope: .permanent, ledger: ledger)
    case .unregister: container.unregister(RRResource.self)
    case .removeAll: container.removeAll()
    case .scopeChangeByRegisteringAgain: registerNew(in: container, scope: .transient, ledger: ledger)
    case .scopeChangeOfTheRegistration: registration.inObjectScope(.transient)
    }
}

/// Starts `resolve` on a new thread; `wait` returns its result, or `nil` if it did not finish in time.
private final class RRBackgroundResolve: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let result = Box<Result<RRResource, any Error>>()

    init(_ container: Container) {
        let thread = Thread { [done, result] in
            result.value = Result { try container.resolve(RRResource.self) }
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Takes the result out: nothing here keeps the instance afterwards.
    func wait(timeout: TimeInterval = 10) -> Result<RRResource, any Error>? {
        guard done.wait(timeout: .now() + timeout) == .success else { return nil }
        defer { result.value = nil }
        return result.value
    }
}

@Suite struct RetiredRegistrationTests {
    @Test(arguments: RRChange.allCases)
    func aPermanentInstanceBuiltWhileItsRegistrationLeavesIsReleasedNotKept(_ change: RRChange) throws {
        let container = Container()
        let gate = RRGate()
        let ledger = RRLedger()
        let registration = registerOld(in: container, gate: gate, ledger: ledger)

        let building = RRBackgroundResolve(container)
        try #require(gate.entered.wait(timeout: .now() + 10) == .success, "the factory did not start")
        apply(change, to: container, registration: registration, ledger: ledger)
        gate.proceed.signal()

        let outcome = try #require(building.wait(), "the running resolve did not finish")
        let instance = try #require(try? outcome.get(), "the running resolve failed: \(outcome)")
        #expect(instance.label == "old 1", "the running resolve got another instance")
        // The retired registration does not keep it: it was released once its resolve finished.
        #expect(
            ledger.released.events == ["old 1"],
            "\(change): released \(ledger.released.events) once the running resolve finished")

        // Resolving again never builds from the retired registration.
        let again = Result { try container.resolve(RRResource.self) }
        if change.leavesARegistration {
            let next = try #require(try? again.get(), "resolving after the change failed: \(again)")
            #expect(next !== instance, "\(change): the retired registration's instance was resolved again")
        } else {
            let error = try #require(resolutionErrorQuietly { try again.get() }, "resolving after \(change) worked")
            #expect(error.kind == .notRegistered)
        }
        // (After a scope change of the registration itself, the old factory builds the new transient instance.)
        #expect(
            ledger.oldBuilds.value == (change.keepsTheFactory ? 2 : 1),
            "\(change): the retired registration built again")

        // After close, every instance the container held has been released, each once.
        expectCloseReleasesWhatItHolds(container, ledger: ledger, change: change)
    }

    /// Another thread that waited for the running build while the registration left gets an instance without the
    /// retired registration's factory running again.
    @Test(arguments: RRChange.allCases)
    func aThreadWaitingForTheRunningBuildDoesNotMakeTheRetiredRegistrationBuildAgain(_ change: RRChange) throws {
        let container = Container()
        let gate = RRGate()
        let ledger = RRLedger()
        let registration = registerOld(in: container, gate: gate, ledger: ledger)

        let building = RRBackgroundResolve(container)
        try #require(gate.entered.wait(timeout: .now() + 10) == .success, "the factory did not start")
        let waiting = RRBackgroundResolve(container)
        // The change must come while the second thread waits for the running build, so that it meets the retired
        // registration. (It may wake and look the key up again during the change: see `registerNew`.)
        try #require(
            waitUntilAThreadWaits(on: resourceStorage(in: container)),
            "the second thread did not wait for the running build")
        apply(change, to: container, registration: registration, ledger: ledger)
        gate.proceed.signal()

        let first = try #require(building.wait(), "the running resolve did not finish")
        let second = try #require(waiting.wait(), "the waiting resolve did not finish")
        let instance = try #require(try? first.get(), "the running resolve failed: \(first)")
        #expect(instance.label == "old 1")
        switch second {
        case .success(let other):
            #expect(
                other === instance || other.label.hasPrefix("new")
                    || (change.keepsTheFactory && other.label == "old 2"),
                "\(change): the waiting thread got \(other.label)")
        case .failure(let error):
            let kind = (error as? ResolutionError)?.kind
            #expect(
                !change.leavesARegistration && kind == .notRegistered, "\(change): the waiting thread threw \(error)")
        }
        #expect(
            ledger.oldBuilds.value <= (change.keepsTheFactory ? 2 : 1),
            "\(change): the retired registration built again")

        expectCloseReleasesWhatItHolds(container, ledger: ledger, change: change)
    }

    /// The running build fails after its registration left: a thread that was waiting for it must not build from
    /// the retired registration instead.
    @Test(arguments: RRChange.allCases)
    func aFailedBuildDoesNotLetAWaitingThreadBuildFromTheRetiredRegistration(_ change: RRChange) throws {
        let container = Container()
        let gate = RRGate()
        let ledger = RRLedger()
        let registration = registerOld(in: container, gate: gate, ledger: ledger, failingFirst: true)

        let building = RRBackgroundResolve(container)
        try #require(gate.entered.wait(timeout: .now() + 10) == .success, "the factory did not start")
        let waiting = RRBackgroundResolve(container)
        // The change must come while the second thread waits for the running build, so that it meets the retired
        // registration. (It may wake and look the key up again during the change: see `registerNew`.)
        try #require(
            waitUntilAThreadWaits(on: resourceStorage(in: container)),
            "the second thread did not wait for the running build")
        apply(change, to: container, registration: registration, ledger: ledger)
        gate.proceed.signal()

        let first = try #require(building.wait(), "the running resolve did not finish")
        let second = try #require(waiting.wait(), "the waiting resolve did not finish")
        #expect((try? first.get()) == nil, "the failing build succeeded")
        if case .success(let other) = second {
            #expect(
                other.label.hasPrefix("new") || (change.keepsTheFactory && other.label == "old 2"),
                "\(change): the waiting thread got \(other.label) from the retired registration")
        }
        // Only a registration that kept the factory (now transient) may run it again.
        #expect(
            ledger.oldBuilds.value <= (change.keepsTheFactory ? 2 : 1),
            "\(change): the retired registration built again")

        expectCloseReleasesWhatItHolds(
            container, ledger: ledger, change: change, except: "old 1", context: "the waiting thread got \(second)")
    }

    /// Nothing keeps the instance once the container released it and the test dropped it.
    @Test(arguments: [RRChange.replace, .unregister, .scopeChangeOfTheRegistration])
    func theRetiredRegistrationDoesNotKeepTheInstanceAlive(_ change: RRChange) throws {
        let container = Container()
        let gate = RRGate()
        let ledger = RRLedger()
        let registration = registerOld(in: container, gate: gate, ledger: ledger)

        let instance: WeakRef<RRResource> = try {
            let building = RRBackgroundResolve(container)
            try #require(gate.entered.wait(timeout: .now() + 10) == .success, "the factory did not start")
            apply(change, to: container, registration: registration, ledger: ledger)
            gate.proceed.signal()
            let outcome = try #require(building.wait(), "the running resolve did not finish")
            return WeakRef(try outcome.get())
        }()
        #expect(instance.object == nil, "\(change): the retired registration still keeps the instance")
        withExtendedLifetime(container) {}
    }
}

/// `resolutionError` for a body that may or may not throw, without recording an issue when it does not.
/// Closes the container and checks that every instance it was left holding was released once: every one the ledger
/// saw built but `except` (one the container never held).
private func expectCloseReleasesWhatItHolds(
    _ container: Container, ledger: RRLedger, change: RRChange, except: String? = nil, context: String = "",
    sourceLocation: SourceLocation = #_sourceLocation
) {
    container.close()
    let held = ledger.built.events.filter { $0 != except }.sorted()
    let released = ledger.released.events.sorted()
    #expect(
        released == held, "\(change): built \(held), released \(released) \(context)", sourceLocation: sourceLocation)
}

private func resolutionErrorQuietly<Value>(_ body: () throws -> Value) -> ResolutionError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? ResolutionError
    }
}

/// The storage of `container`'s `RRResource` registration.
private func resourceStorage(in container: Container) -> InstanceStorage? {
    container.entries.first { $0.key == ServiceKey(RRResource.self) }?.storage
}
