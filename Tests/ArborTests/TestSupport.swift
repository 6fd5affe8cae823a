import Arbor
import ArborTestSupport
import Foundation
import Testing

// Shared helpers for the Arbor tests. Factories and hooks are `@Sendable`, so any state a test shares with them
// lives in one of these lock-protected boxes.

/// Records events in order, from any thread.
final class Recorder: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []

    init() {}

    func record(_ event: String) {
        lock.lock()
        defer { lock.unlock() }
        storage.append(event)
    }

    var events: [String] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}

/// Counts calls, from any thread.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    init() {}

    /// Adds one and returns the new count.
    @discardableResult
    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

/// A switch a test flips to make a factory or hook fail, then succeed.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var state: Bool

    init(_ initial: Bool = false) { state = initial }

    var isOn: Bool {
        get {
            lock.lock()
            defer { lock.unlock() }
            return state
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            state = newValue
        }
    }
}

/// Holds one value that a factory hands back to the test (an instance, a captured resolver).
final class Box<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value?

    init(_ value: Value? = nil) { stored = value }

    var value: Value? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return stored
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            stored = newValue
        }
    }
}

/// A weak reference, for checking that nothing keeps an instance alive.
struct WeakRef<Object: AnyObject> {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}

/// Runs `make` and returns only a weak reference to what it built, so no strong reference survives in the caller.
func weakly<Object: AnyObject>(_ make: () throws -> Object) rethrows -> WeakRef<Object> {
    WeakRef(try make())
}

/// An error that factories and hooks throw on purpose.
struct TestFailure: Error, Equatable, CustomStringConvertible {
    let message: String
    init(_ message: String = "boom") { self.message = message }
    var description: String { "TestFailure(\(message))" }
}

/// The reason of a `ResolutionError`, as a comparable tag (the reason itself is not `Equatable`).
enum ReasonKind: Equatable, CustomStringConvertible {
    case notRegistered
    case circularDependency
    case depthLimitExceeded
    case factoryFailed
    case typeMismatch
    case containerClosed
    case asyncRequired

    init(_ reason: ResolutionError.Reason) {
        switch reason {
        case .notRegistered: self = .notRegistered
        case .circularDependency: self = .circularDependency
        case .depthLimitExceeded: self = .depthLimitExceeded
        case .factoryFailed: self = .factoryFailed
        case .typeMismatch: self = .typeMismatch
        case .containerClosed: self = .containerClosed
        case .asyncRequired: self = .asyncRequired
        @unknown default: fatalError("A reason these tests do not know: \(reason)")
        }
    }

    var description: String {
        switch self {
        case .notRegistered: "notRegistered"
        case .circularDependency: "circularDependency"
        case .depthLimitExceeded: "depthLimitExceeded"
        case .factoryFailed: "factoryFailed"
        case .typeMismatch: "typeMismatch"
        case .containerClosed: "containerClosed"
        case .asyncRequired: "asyncRequired"
        }
    }
}

extension ResolutionError {
    var kind: ReasonKind { ReasonKind(reason) }

    /// The error a factory or hook threw, for `.factoryFailed`; `nil` otherwise.
    var underlying: (any Error)? {
        if case .factoryFailed(let error) = reason { return error }
        return nil
    }
}

/// Runs `body`, records an issue unless it throws a `ResolutionError`, and returns that error.
func resolutionError<Result>(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Result
) -> ResolutionError? {
    do {
        _ = try body()
        Issue.record("expected a ResolutionError, but nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as ResolutionError {
        return error
    } catch {
        Issue.record("expected a ResolutionError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The synchronous `resolve`, for `async` tests: there, `try container.resolve(…)` is the `async` variant.
func resolveSynchronously<Service>(
    _ serviceType: Service.Type, name: String? = nil, from resolver: any Resolver
) throws -> Service {
    try resolver.resolve(serviceType, name: name)
}

/// The synchronous `resolveAll`, for `async` tests.
func resolveAllSynchronously<Service>(_ serviceType: Service.Type, from resolver: any Resolver) throws -> [Service] {
    try resolver.resolveAll(serviceType)
}

/// A gate a factory waits at: a synchronous one blocks its thread, an `async` one suspends.
final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false
    private var arrivals = 0
    private var suspended: [CheckedContinuation<Void, Never>] = []

    func pass() {
        condition.lock()
        arrivals += 1
        while !isOpen { condition.wait() }
        condition.unlock()
    }

    func passAsync() async {
        await withCheckedContinuation { continuation in
            let open = condition.withLock {
                arrivals += 1
                if !isOpen { suspended.append(continuation) }
                return isOpen
            }
            if open { continuation.resume() }
        }
    }

    var hasArrivals: Bool { condition.withLock { arrivals > 0 } }

    func open() {
        let resumed = condition.withLock {
            isOpen = true
            condition.broadcast()
            defer { suspended = [] }
            return suspended
        }
        for continuation in resumed { continuation.resume() }
    }
}

/// Polls `condition` every millisecond for up to `timeout` seconds, suspended in between, on the caller's actor;
/// whether it became true.
func poll(
    timeout: Duration = .seconds(Watchdog.patience), isolation: isolated (any Actor)? = #isolation,
    _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    return condition()
}

/// Whether `error` is a task's cancellation, as a resolve reports it: thrown by a wait itself, or by a hook whose
/// nested wait it stopped (`.factoryFailed(CancellationError())`).
func isCancellation(_ error: (any Error)?) -> Bool {
    error is CancellationError || (error as? ResolutionError)?.underlying is CancellationError
}
