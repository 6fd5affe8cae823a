import Arbor
import Foundation
import Testing

// A factory may keep the resolver it is given, strongly, weakly or unowned, or inside a `Lazy` or a `Provider`.
// However it is kept, a kept resolver resolves only in the container its resolution began in, from any thread and
// whatever other containers resolved on its thread meanwhile. Kept weakly, it may also become `nil`; while it is not
// `nil`, it must still resolve from its own container.
//
// Every scenario runs on a thread of its own, so the thread's pooled resolution starts fresh and nothing the test
// runner did before on its threads matters.

private final class KRService: Sendable {
    let origin: String
    init(origin: String) { self.origin = origin }
}

private final class KRStrongKeeper: Sendable {
    let resolver: any Resolver
    init(resolver: any Resolver) { self.resolver = resolver }
}

private final class KRWeakKeeper: @unchecked Sendable {
    weak var resolver: (any Resolver)?
    init(resolver: any Resolver) { self.resolver = resolver }
}

private final class KRUnownedKeeper: @unchecked Sendable {
    unowned let resolver: any Resolver
    init(resolver: any Resolver) { self.resolver = resolver }
}

private final class KRLazyKeeper: Sendable {
    let lazy: Lazy<KRService>
    init(lazy: Lazy<KRService>) { self.lazy = lazy }
}

private final class KRProviderKeeper: Sendable {
    let provider: Provider<KRService>
    init(provider: Provider<KRService>) { self.provider = provider }
}

/// A container whose `KRService` says `origin`, and whose keepers keep their resolvers in every way.
private func makeContainer(_ origin: String) -> Container {
    let container = Container()
    container.register(KRService.self) { _ in KRService(origin: origin) }
    container.register(KRStrongKeeper.self) { r in KRStrongKeeper(resolver: r) }
    container.register(KRWeakKeeper.self) { r in KRWeakKeeper(resolver: r) }
    container.register(KRUnownedKeeper.self) { r in KRUnownedKeeper(resolver: r) }
    container.register(KRLazyKeeper.self) { r in KRLazyKeeper(lazy: try r.resolve()) }
    container.register(KRProviderKeeper.self) { r in KRProviderKeeper(provider: try r.resolve()) }
    return container
}

/// Another container, registered differently, resolves on the calling thread: it would reuse the thread's pooled
/// resolution if nothing kept it. Returns that container: the caller decides how long it lives.
@discardableResult
private func resolveInAnotherContainer() throws -> Container {
    let other = makeContainer("other")
    let origin = try other.resolve(KRService.self).origin
    guard origin == "other" else { throw KRUnexpected(message: "the other container resolved from \(origin)") }
    return other
}

private struct KRUnexpected: Error {
    let message: String
}

/// What a kept resolver answered: the origin of the service it resolved, or why it did not.
private enum Answer: Equatable, CustomStringConvertible {
    case resolved(String)
    case becameNil
    case failed(String)

    init(_ resolve: () throws -> KRService?) {
        do {
            self = try resolve().map { .resolved($0.origin) } ?? .becameNil
        } catch {
            self = .failed("\(error)")
        }
    }

    var description: String {
        switch self {
        case .resolved(let origin): "resolved from \(origin)"
        case .becameNil: "nil"
        case .failed(let error): "threw \(error)"
        }
    }
}

/// Runs `body` on a new thread and returns its answers, or records a timeout.
private func onItsOwnThread(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: @escaping @Sendable () throws -> [Answer]
) -> [Answer] {
    let outcome = onAnotherThread(timeout: 10) { () -> Result<[Answer], any Error> in Result { try body() } }
    guard let outcome else {
        Issue.record("the scenario did not finish within 10 s", sourceLocation: sourceLocation)
        return []
    }
    switch outcome {
    case .success(let answers): return answers
    case .failure(let error):
        Issue.record("the scenario threw \(error)", sourceLocation: sourceLocation)
        return []
    }
}

@Suite struct KeptResolverTests {
    @Test func aStronglyKeptResolverResolvesInItsOwnContainerAfterAnotherContainerResolvedOnItsThread() {
        let answers = onItsOwnThread {
            let mine = makeContainer("mine")
            let keeper = try mine.resolve(KRStrongKeeper.self)
            let other = try resolveInAnotherContainer()
            let first = Answer { try keeper.resolver.resolve(KRService.self) }
            let another = try resolveInAnotherContainer()
            let second = Answer { try keeper.resolver.resolve(KRService.self) }
            withExtendedLifetime((other, another)) {}
            return [first, second]
        }
        #expect(answers == [.resolved("mine"), .resolved("mine")])
    }

    @Test func aWeaklyKeptResolverResolvesInItsOwnContainerOrBecomesNil() {
        let answers = onItsOwnThread {
            let mine = makeContainer("mine")
            let keeper = try mine.resolve(KRWeakKeeper.self)
            var answers: [Answer] = []
            var others: [Container] = []
            for _ in 0..<2 {
                others.append(try resolveInAnotherContainer())
                answers.append(Answer { try keeper.resolver?.resolve(KRService.self) })
            }
            withExtendedLifetime((mine, others)) {}
            return answers
        }
        #expect(answers.count == 2)
        for answer in answers {
            #expect(answer == .resolved("mine") || answer == .becameNil, "the weakly kept resolver \(answer)")
        }
    }

    /// Arbor's documented choice for a resolver kept only weakly or unowned: its container keeps it, so it works as
    /// long as the container lives; once the container is gone, the weak reference is `nil`.
    @Test func aWeaklyKeptResolverWorksWhileItsContainerLivesAndIsNilAfter() {
        let answers = onItsOwnThread {
            var mine: Container? = makeContainer("mine")
            let keeper = try mine!.resolve(KRWeakKeeper.self)
            var answers = [Answer { try keeper.resolver?.resolve(KRService.self) }]
            try resolveInAnotherContainer()
            answers.append(Answer { try keeper.resolver?.resolve(KRService.self) })
            mine = nil
            answers.append(Answer { try keeper.resolver?.resolve(KRService.self) })
            return answers
        }
        #expect(answers == [.resolved("mine"), .resolved("mine"), .becameNil])
    }

    @Test func anUnownedKeptResolverResolvesInItsOwnContainer() {
        let answers = onItsOwnThread {
            let mine = makeContainer("mine")
            let keeper = try mine.resolve(KRUnownedKeeper.self)
            var answers: [Answer] = []
            var others: [Container] = []
            for _ in 0..<2 {
                others.append(try resolveInAnotherContainer())
                answers.append(Answer { try keeper.resolver.resolve(KRService.self) })
            }
            withExtendedLifetime((mine, others)) {}
            return answers
        }
        #expect(answers == [.resolved("mine"), .resolved("mine")])
    }

    /// The other container is gone before the kept resolver is used. (On the engine that reuses the kept
    /// resolution, this used a freed container: a heap-use-after-free under ASan.)
    @Test func aKeptResolverDoesNotUseAContainerThatResolvedOnItsThreadAndWasFreed() {
        let answers = onItsOwnThread {
            let mine = makeContainer("mine")
            let weakKeeper = try mine.resolve(KRWeakKeeper.self)
            let unownedKeeper = try mine.resolve(KRUnownedKeeper.self)
            try resolveInAnotherContainer()  // freed when the call returns
            let filler = (0..<64).map { _ in makeContainer("filler") }  // may reuse the freed memory
            let answers = [
                Answer { try weakKeeper.resolver?.resolve(KRService.self) },
                Answer { try unownedKeeper.resolver.resolve(KRService.self) },
            ]
            withExtendedLifetime((mine, filler)) {}
            return answers
        }
        #expect(answers.count == 2)
        if answers.count == 2 {
            #expect(answers[0] == .resolved("mine") || answers[0] == .becameNil, "weakly kept: \(answers[0])")
            #expect(answers[1] == .resolved("mine"), "unowned: \(answers[1])")
        }
    }

    @Test func aWeaklyOrUnownedKeptResolverUsedFromAnotherThreadResolvesInItsOwnContainer() {
        let answers = onItsOwnThread {
            let mine = makeContainer("mine")
            let weakKeeper = try mine.resolve(KRWeakKeeper.self)
            let unownedKeeper = try mine.resolve(KRUnownedKeeper.self)
            // The kept resolvers' thread goes on resolving elsewhere; another thread uses them.
            let other = try resolveInAnotherContainer()
            let remote =
                onAnotherThread(timeout: 10) {
                    [
                        Answer { try weakKeeper.resolver?.resolve(KRService.self) },
                        Answer { try unownedKeeper.resolver.resolve(KRService.self) },
                    ]
                } ?? [.failed("timed out")]
            withExtendedLifetime((mine, other)) {}
            return remote
        }
        #expect(answers.count == 2)
        if answers.count == 2 {
            #expect(answers[0] == .resolved("mine") || answers[0] == .becameNil, "weakly kept: \(answers[0])")
            #expect(answers[1] == .resolved("mine"), "unowned: \(answers[1])")
        }
    }

    @Test func aStronglyKeptResolverUsedFromAnotherThreadResolvesInItsOwnContainer() {
        let answers = onItsOwnThread {
            let mine = makeContainer("mine")
            let keeper = try mine.resolve(KRStrongKeeper.self)
            let other = try resolveInAnotherContainer()
            let remote =
                onAnotherThread(timeout: 10) { Answer { try keeper.resolver.resolve(KRService.self) } }
                ?? .failed("timed out")
            withExtendedLifetime(other) {}
            return [remote]
        }
        #expect(answers == [.resolved("mine")])
    }

    @Test func aKeptLazyResolvesInItsOwnContainer() {
        let answers = onItsOwnThread {
            let mine = makeContainer("mine")
            let keeper = try mine.resolve(KRLazyKeeper.self)
            let other = try resolveInAnotherContainer()
            let here = Answer { try keeper.lazy.instance }
            let fresh = try mine.resolve(KRLazyKeeper.self)
            let another = try resolveInAnotherContainer()
            let there = onAnotherThread(timeout: 10) { Answer { try fresh.lazy.instance } } ?? .failed("timed out")
            withExtendedLifetime((other, another)) {}
            return [here, there]
        }
        #expect(answers == [.resolved("mine"), .resolved("mine")])
    }

    @Test func aKeptProviderResolvesInItsOwnContainer() {
        let answers = onItsOwnThread {
            let mine = makeContainer("mine")
            let keeper = try mine.resolve(KRProviderKeeper.self)
            let other = try resolveInAnotherContainer()
            let here = Answer { try keeper.provider.instance }
            let another = try resolveInAnotherContainer()
            let there =
                onAnotherThread(timeout: 10) { Answer { try keeper.provider.instance } } ?? .failed("timed out")
            withExtendedLifetime((other, another)) {}
            return [here, there]
        }
        #expect(answers == [.resolved("mine"), .resolved("mine")])
    }

    /// A `Lazy` or `Provider` resolved later through a weakly or unowned kept resolver belongs to the resolver's
    /// container too.
    @Test func aLazyOrProviderResolvedThroughAWeaklyOrUnownedKeptResolverResolvesInItsOwnContainer() {
        let answers = onItsOwnThread {
            let mine = makeContainer("mine")
            let weakKeeper = try mine.resolve(KRWeakKeeper.self)
            let unownedKeeper = try mine.resolve(KRUnownedKeeper.self)
            let other = try resolveInAnotherContainer()
            let answers = [
                Answer { try weakKeeper.resolver?.resolve(Lazy<KRService>.self).instance },
                Answer { try weakKeeper.resolver?.resolve(Provider<KRService>.self).instance },
                Answer { try unownedKeeper.resolver.resolve(Lazy<KRService>.self).instance },
                Answer { try unownedKeeper.resolver.resolve(Provider<KRService>.self).instance },
            ]
            withExtendedLifetime((mine, other)) {}
            return answers
        }
        #expect(answers.count == 4)
        for (index, answer) in answers.enumerated() {
            let allowsNil = index < 2
            #expect(
                answer == .resolved("mine") || (allowsNil && answer == .becameNil), "wrapper \(index): \(answer)")
        }
    }
}
