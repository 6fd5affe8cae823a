import Arbor
import Foundation
import Testing

// This file builds twice: in ArborTests (the plain, sanitized and internal-checks runs), and alone in the Benchmarks
// package's ReleaseStackTests, where CI runs it in a release build beside the benchmarks' (a symbolic link there).
// Only ArborTests has ArborTestSupport; the release build runs under no sanitizer.
#if canImport(ArborTestSupport)
import ArborTestSupport
#else
private let runsUnderSanitizer = false
#endif

private final class SDNode: @unchecked Sendable {
    let next: SDNode?
    var first: SDNode?
    init(next: SDNode?) { self.next = next }
}

/// The two chains the stack limits are checked with.
enum SDChain: String, CaseIterable, CustomTestStringConvertible {
    /// Permanent services, each with an `initCompleted` hook that resolves the first one (already being built: the
    /// hook gets it from the resolution).
    case permanentWithHooks
    /// Graph-scoped services, no hooks.
    case graph

    var testDescription: String { rawValue }

    /// How many services make a chain as deep as `maxResolutionDepth` allows: the last hook of a chain with hooks
    /// resolves one level below its instance.
    func services(forDepth depth: Int) -> Int {
        self == .permanentWithHooks ? depth : depth + 1
    }
}

/// A value written on the thread that resolves and read by the test once the thread signalled: the semaphore orders
/// the two.
private final class SDHandOver<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// The `ResolutionError` a resolve ended in; records an issue and throws if it ended otherwise.
private func resolutionError(
    in outcome: Result<SDNode, any Error>, sourceLocation: SourceLocation = #_sourceLocation
) throws -> ResolutionError {
    let failure = try #require(outcome.failure, "the chain resolved", sourceLocation: sourceLocation)
    return try #require(failure as? ResolutionError, "\(failure)", sourceLocation: sourceLocation)
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}

extension ResolutionError {
    fileprivate var isDepthLimitExceeded: Bool {
        if case .depthLimitExceeded = reason { return true }
        return false
    }
}

/// Registers a chain of `count` services, named "0", "1", …: each one's factory resolves the next.
private func chain(_ kind: SDChain, count: Int) -> Container {
    let container = Container()
    for index in 0..<count {
        let registration = container.register(SDNode.self, name: "\(index)") { r in
            SDNode(next: index + 1 < count ? try r.resolve(SDNode.self, name: "\(index + 1)") : nil)
        }
        switch kind {
        case .permanentWithHooks:
            registration.inObjectScope(.permanent)
                .initCompleted { r, node in node.first = try r.resolve(SDNode.self, name: "0") }
        case .graph:
            registration.inObjectScope(.graph)
        }
    }
    return container
}

/// Registers a chain of `count` services like `chain`, whose factories record the address of a local variable: how
/// far down the stack each level's factory runs.
private func measuredChain(_ kind: SDChain, count: Int, addresses: SDHandOver<[UInt]>) -> Container {
    let container = Container()
    for index in 0..<count {
        let registration = container.register(SDNode.self, name: "\(index)") { r in
            var local = index
            let address = withUnsafeMutablePointer(to: &local) { UInt(bitPattern: $0) }
            addresses.value.append(address)
            return SDNode(next: index + 1 < count ? try r.resolve(SDNode.self, name: "\(index + 1)") : nil)
        }
        registration.inObjectScope(kind == .graph ? .graph : .permanent)
    }
    return container
}

/// Resolves the chain's first service on a new thread with a stack of `stackKB` kilobytes.
private func resolveFirst(of container: Container, stackKB: Int) -> Result<SDNode, any Error>? {
    let done = DispatchSemaphore(value: 0)
    let result = SDHandOver<Result<SDNode, any Error>?>(nil)
    let thread = Thread {
        result.value = Result { try container.resolve(SDNode.self, name: "0") }
        done.signal()
    }
    thread.stackSize = stackKB << 10
    thread.start()
    // Generous: under a sanitizer, with every other suite running, a thread can wait long for a core.
    guard done.wait(timeout: .now() + 120) == .success else { return nil }
    return result.value
}

// The stack: a chain as deep as the default depth limit (200) resolves on a thread with a 256 KB stack, one level
// more throws `.depthLimitExceeded`, and a resolution about to run out of stack throws instead of overflowing, on any
// thread. An optimised build needs about 1 KB a level; a debug build several times that, so in a debug build (the
// README's `swift test`) a chain of 200 may meet the stack check first — it must then throw, never crash. CI also
// runs this suite in a release build, where the chains must resolve.
@Suite struct StackDepthTests {
    @Test(arguments: SDChain.allCases)
    func aChainAsDeepAsTheDefaultLimitResolvesOnA256KBStack(_ kind: SDChain) throws {
        let container = chain(kind, count: kind.services(forDepth: 200))
        #expect(container.maxResolutionDepth == 200)
        let outcome = try #require(resolveFirst(of: container, stackKB: 256), "the resolve did not finish")
        switch outcome {
        case .success(let node):
            var depth = 0
            var current: SDNode? = node
            while let next = current?.next {
                current = next
                depth += 1
            }
            #expect(depth == kind.services(forDepth: 200) - 1)
            if kind == .permanentWithHooks { #expect(current?.first === node, "the last hook did not run") }
        case .failure(let error):
            #if DEBUG
            let resolutionError = try #require(error as? ResolutionError, "\(error)")
            #expect(resolutionError.isDepthLimitExceeded, "\(resolutionError)")
            #expect("\(resolutionError)".contains("stack"), "\(resolutionError)")
            #else
            Issue.record("a chain of \(kind) 200 deep did not resolve on a 256 KB stack: \(error)")
            #endif
        }
    }

    @Test(arguments: SDChain.allCases)
    func oneLevelMoreThrowsDepthLimitExceededOnA256KBStack(_ kind: SDChain) throws {
        let container = chain(kind, count: kind.services(forDepth: 201))
        let outcome = try #require(resolveFirst(of: container, stackKB: 256), "the resolve did not finish")
        let error = try resolutionError(in: outcome)
        #expect(error.isDepthLimitExceeded, "\(error)")
        #if !DEBUG
        #expect(!"\(error)".contains("stack"), "the stack, not maxResolutionDepth, stopped it: \(error)")
        #expect(error.path.count == 202)
        #endif
    }

    /// Prints how much stack one level of a nested resolve takes (CI prints it beside this suite's result in the
    /// release build), and checks that 200 levels fit in a 256 KB stack less the resolve's 32 KB margin.
    @Test(arguments: SDChain.allCases)
    func oneLevelTakesLittleEnoughStackFor200LevelsIn256KB(_ kind: SDChain) throws {
        let addresses = SDHandOver<[UInt]>([])
        let container = measuredChain(kind, count: 40, addresses: addresses)
        _ = try #require(resolveFirst(of: container, stackKB: 1_024))
        let recorded = addresses.value
        try #require(recorded.count == 40)
        // Signed: under AddressSanitizer, locals may live on its heap-allocated fake stacks, in no order.
        let perLevel = (Int(bitPattern: recorded[10]) - Int(bitPattern: recorded[30])) / 20
        if runsUnderSanitizer, perLevel <= 0 {
            print("StackDepthTests: the sanitizer moved locals off the stack; one level's size is not measurable")
            return
        }
        #expect(perLevel > 0, "each level's factory runs further down the stack")
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        print("StackDepthTests: one level of a \(kind) chain takes \(perLevel) bytes of stack (\(build) build)")
        #if !DEBUG
        #expect(perLevel * 200 <= (256 - 32) * 1_024, "\(perLevel) bytes a level: 200 levels do not fit in 224 KB")
        #endif
    }

    @Test(arguments: [128, 256, 1_024])
    func aResolutionAboutToRunOutOfStackThrowsInsteadOfOverflowing(stackKB: Int) throws {
        // Deeper than any of these stacks can hold (an optimised build needs about 900 bytes a level), with the depth
        // limit out of the way.
        let container = chain(.graph, count: 4_000)
        container.maxResolutionDepth = 100_000
        let outcome = try #require(resolveFirst(of: container, stackKB: stackKB), "the resolve did not finish")
        let error = try resolutionError(in: outcome)
        #expect(error.isDepthLimitExceeded, "\(error)")
        #expect("\(error)".contains("the thread's stack is nearly used up"), "\(error)")
        // The check must not stop a resolve far from the end of the stack. How many levels fit depends on the build: an
        // optimised one fits over 100 in 128 KB; under AddressSanitizer a level takes several kilobytes, and only
        // about 20 fit.
        #if DEBUG
        let levelsThatFit = 8
        #else
        let levelsThatFit = 50
        #endif
        #expect(
            error.path.count > levelsThatFit,
            "it stopped at depth \(error.path.count - 1) on a \(stackKB) KB stack")
        // After the error, the same thread-sized work resolves when it fits: nothing was left behind.
        container.maxResolutionDepth = 10
        let shallow = try #require(resolveFirst(of: chain(.graph, count: 5), stackKB: stackKB))
        #expect((try? shallow.get()) != nil)
    }
}
