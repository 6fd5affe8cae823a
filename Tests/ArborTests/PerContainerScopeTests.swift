import Arbor
import Foundation
import Testing

/// A request's unit of work: one per container that resolves it.
private final class Work: @unchecked Sendable {
    let request: String
    var hooked = 0
    init(request: String) { self.request = request }
}

private protocol UnitOfWork: AnyObject {}
extension Work: UnitOfWork {}

/// Two services of a request that both use its unit of work.
private final class Notes: @unchecked Sendable {
    let work: Work
    init(work: Work) { self.work = work }
}

private final class Audit: @unchecked Sendable {
    let work: Work
    init(work: Work) { self.work = work }
}

/// What a permanent service that (wrongly) depends on a per-container one looks like.
private final class AppCache: @unchecked Sendable {
    let work: Work
    init(work: Work) { self.work = work }
}

private final class Released: @unchecked Sendable {
    private let lock = NSLock()
    private var requests: [String] = []
    func append(_ request: String) { lock.withLock { requests.append(request) } }
    var all: [String] { lock.withLock { requests } }
}

/// The app's registrations, once, in the root: the unit of work is per container; each request container gives its
/// request's name as an instance.
private func app(released: Released = Released()) -> Container {
    let app = Container()
    app.register(String.self, name: "request", instance: "root")
    app.register(Work.self) { r in Work(request: try r.resolve(String.self, name: "request")) }
        .inObjectScope(.perContainer)
        .onRelease { work in released.append(work.request) }
    app.register(Notes.self) { r in Notes(work: try r.resolve()) }
    app.register(Audit.self) { r in Audit(work: try r.resolve()) }.inObjectScope(.transient)
    return app
}

private func request(_ name: String, of app: Container) -> Container {
    let child = app.makeChild()
    child.register(String.self, name: "request", instance: name)
    return child
}

@Suite struct PerContainerScopeTests {
    @Test func twoLiveChildrenGetTwoInstancesEachSharedWithinItsChild() throws {
        let app = app()
        let first = request("first", of: app)
        let second = request("second", of: app)
        let firstWork = try first.resolve(Work.self)
        let secondWork = try second.resolve(Work.self)
        #expect(firstWork !== secondWork)
        // Built from its own container: it sees that container's registrations.
        #expect(firstWork.request == "first")
        #expect(secondWork.request == "second")
        // Shared by everything resolved from the child, in this resolve and the next ones.
        #expect(try first.resolve(Work.self) === firstWork)
        #expect(try first.resolve(Notes.self).work === firstWork)
        #expect(try first.resolve(Audit.self).work === firstWork)
        #expect(try second.resolve(Notes.self).work === secondWork)
    }

    @Test func theRootResolvingItGetsItsOwn() throws {
        let app = app()
        let child = request("child", of: app)
        let rootWork = try app.resolve(Work.self)
        #expect(rootWork.request == "root")
        #expect(try child.resolve(Work.self) !== rootWork)
        #expect(try app.resolve(Work.self) === rootWork)
    }

    @Test func closingAChildReleasesItsInstanceAndRunsOnRelease() throws {
        let released = Released()
        let app = app(released: released)
        let child = request("closed", of: app)
        let other = request("open", of: app)
        weak var observed: Work?
        do {
            observed = try child.resolve(Work.self)
            _ = try other.resolve(Work.self)
        }
        #expect(observed != nil, "the child keeps its instance")
        child.close()
        #expect(observed == nil)
        #expect(released.all == ["closed"], "only the closed child's instance is released")
        #expect(throws: ResolutionError.self) { try child.resolve(Work.self) }
    }

    @Test func droppingAChildReleasesItsInstanceAndRunsOnRelease() throws {
        let released = Released()
        let app = app(released: released)
        weak var observed: Work?
        do {
            let child = request("dropped", of: app)
            observed = try child.resolve(Work.self)
        }
        #expect(observed == nil)
        #expect(released.all == ["dropped"])
    }

    @Test func resetObjectScopeDropsThisContainersInstancesOnly() throws {
        let released = Released()
        let app = app(released: released)
        let child = request("reset", of: app)
        let before = try child.resolve(Work.self)
        let rootWork = try app.resolve(Work.self)
        child.resetObjectScope(.perContainer)
        #expect(released.all == ["reset"])
        #expect(try child.resolve(Work.self) !== before)
        #expect(try app.resolve(Work.self) === rootWork)
    }

    @Test func itWorksThroughAnAssemblyAndImplements() throws {
        struct RequestAssembly: Assembly {
            func assemble(container: Container) {
                container.register(Work.self) { r in Work(request: try r.resolve(String.self, name: "request")) }
                    .inObjectScope(.perContainer)
                    .implements((any UnitOfWork).self)
            }
        }
        let app = Container()
        _ = Assembler([RequestAssembly()], container: app)
        let child = app.makeChild()
        child.register(String.self, name: "request", instance: "assembled")
        let work = try child.resolve(Work.self)
        #expect(work.request == "assembled")
        #expect(try child.resolve((any UnitOfWork).self) === work)
        let other = app.makeChild()
        other.register(String.self, name: "request", instance: "other")
        #expect(try other.resolve((any UnitOfWork).self) !== work)
    }

    @Test func lazyAndProviderResolveInTheContainerTheyCameFrom() throws {
        let app = app()
        let child = request("wrapped", of: app)
        let provider = try child.resolve(Provider<Work>.self)
        let lazy = try child.resolve(Lazy<Work>.self)
        let work = try child.resolve(Work.self)
        #expect(try provider.instance === work)
        #expect(try lazy.instance === work)
        let rootProvider = try app.resolve(Provider<Work>.self)
        #expect(try rootProvider.instance !== work)
        #expect(try rootProvider.instance.request == "root")
    }

    @Test func hooksRunOncePerInstance() throws {
        let app = Container()
        app.register(Work.self) { _ in Work(request: "hooked") }
            .inObjectScope(.perContainer)
            .initCompleted { _, work in work.hooked += 1 }
        let child = app.makeChild()
        let work = try child.resolve(Work.self)
        _ = try child.resolve(Work.self)
        #expect(work.hooked == 1)
        let other = try app.makeChild().resolve(Work.self)
        #expect(other.hooked == 1)
    }

    @Test func runtimeArgumentsBuildTheFirstInstanceOfEachContainer() throws {
        let app = Container()
        app.register(Work.self) { (_, request: String) in Work(request: request) }.inObjectScope(.perContainer)
        let first = app.makeChild()
        let second = app.makeChild()
        let work = try first.resolve(Work.self, arguments: "a")
        #expect(try first.resolve(Work.self, arguments: "b") === work, "one instance per container")
        #expect(try second.resolve(Work.self, arguments: "c").request == "c")
    }

    @Test func manyThreadsResolvingFromOneChildGetOneInstance() throws {
        let app = Container()
        let builds = Released()
        app.register(Work.self) { _ in
            builds.append("built")
            Thread.sleep(forTimeInterval: 0.001)
            return Work(request: "shared")
        }.inObjectScope(.perContainer)
        let child = app.makeChild()
        let results = Released()
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            if let work = try? child.resolve(Work.self) { results.append("\(ObjectIdentifier(work).hashValue)") }
        }
        #expect(builds.all.count == 1)
        #expect(Set(results.all).count == 1 && results.all.count == 16)
    }

    @Test func aPermanentServiceThatDependsOnOneIsACaptiveDependency() throws {
        let app = app()
        app.register(AppCache.self) { r in AppCache(work: try r.resolve()) }.inObjectScope(.permanent)
        let report = app.validate()
        let problem = try #require(
            report.problems.first {
                if case .captiveDependency(let holder) = $0.kind { return holder == ServiceKey(AppCache.self) }
                return false
            }, "\(report)")
        #expect(problem.path.last == ServiceKey(Work.self))
        #expect(problem.description.contains("per-container"), "\(problem)")
        #expect(problem.description.contains("Provider"), "\(problem)")
        // What it gets: the instance of the container whose resolve built it first, kept for good.
        let child = request("captured", of: app)
        #expect(try child.resolve(AppCache.self).work.request == "captured")
        #expect(try app.resolve(AppCache.self).work.request == "captured")
    }

    @Test func aLeakTrackerDoesNotReportAnInstanceItsContainerKeeps() throws {
        let app = app()
        let child = request("tracked", of: app)
        let tracker = LeakTracker(child)
        _ = try child.resolve(Notes.self)
        #expect(tracker.check().isClean, "\(tracker.check())")
        #expect(app.description.contains("perContainer"))
    }
}
