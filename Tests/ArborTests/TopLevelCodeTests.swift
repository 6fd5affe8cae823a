import ArborTestSupport
import Foundation
import Testing

@testable import Arbor

// In a `main.swift`, `try await container.resolve(X.self)` calls the synchronous `resolve`: top-level code is not an
// `async` context when Swift picks an overload, even after `await` (inside an `async` function or closure the `async`
// one is picked). For an `async` service that throws `.asyncRequired`; its text says what to write there. The
// conditions of top-level code — a synchronous call on the main actor, inside the program's main task — are what the
// tests below recreate.

private final class TLDatabase: Sendable {}

/// The synchronous call top-level code makes.
@MainActor
private func resolveAsTopLevelCodeDoes(_ container: Container) throws -> TLDatabase {
    try container.resolve(TLDatabase.self)
}

@Suite struct TopLevelCodeTests {
    private func makeContainer() -> Container {
        let container = Container()
        container.register(TLDatabase.self) { _ async in TLDatabase() }.inObjectScope(.permanent)
        return container
    }

    @MainActor
    @Test func theSynchronousResolveTopLevelCodePicksSaysWhatToWriteThere() async throws {
        let container = makeContainer()
        let error = resolutionError { try resolveAsTopLevelCodeDoes(container) }
        #expect(error?.kind == .asyncRequired)
        let text = error?.description ?? ""
        #expect(text.contains("top-level code (main.swift)"), "\(text)")
        #expect(text.contains("try await Task { try await container.resolve(…) }.value"), "\(text)")
        // What it says to write works there: the closure is `async`, so `resolve` is the `async` one.
        let database = try await Task { try await container.resolve(TLDatabase.self) }.value
        #expect(try await container.resolve(TLDatabase.self) === database)
    }

    @Test func aSynchronousResolveOutsideATaskSaysNothingOfTopLevelCode() throws {
        let container = makeContainer()
        let text = onAnotherThread { resolutionError { try container.resolve(TLDatabase.self) }?.description }
        #expect(text??.contains("its factory is async") == true, "\(String(describing: text))")
        #expect(text??.contains("top-level") == false, "\(String(describing: text))")
    }

    /// `validate()` called from top-level code (synchronously, on the main actor, in a task) reports what it found
    /// without the hint for top-level code: its resolves are its own, not the caller's.
    @MainActor
    @Test func validationOnTheMainActorSaysNothingOfTopLevelCode() async throws {
        final class TLRepository: Sendable {
            init(database: TLDatabase) {}
        }
        let container = makeContainer()
        container.register(TLRepository.self) { r in TLRepository(database: try r.resolve()) }
        let report = container.validate()
        #expect(report.problems.map(\.key) == [ServiceKey(TLRepository.self)])
        #expect(report.description.contains("its factory is async"), "\(report)")
        #expect(!report.description.contains("top-level code"), "\(report)")
    }
}
