import Arbor
import ArborTestSupport
import Foundation
import Testing

// The Swift snippets of the article "Circular dependencies and initCompleted"
// (Sources/Arbor/Arbor.docc/CircularDependencies.md), compiled and run, like the README's (ReadmeTests.swift): each
// is copied between `// ARTICLE: <section>` and `// ARTICLE end`, and `everySwiftBlockOfTheArticleIsHere` checks that
// the copies and the article agree. The error and the leak report the article prints are checked against the real
// ones. Snippets that declare their own classes declare them inside the test, where they hide the ones below.

private enum CircularArticle {
    /// A parent and a child that hold each other strongly: the cycle the first and the last snippets use.
    final class Parent {
        let child: Child
        init(child: Child) { self.child = child }
    }
    final class Child {
        var parent: Parent?
        init() {}
        init(parent: Parent) { self.parent = parent }
    }

    /// Counts the instances a container builds, by key.
    final class Builds: ResolutionObserver {
        private let counts = Locked<[ServiceKey: Int]>([:])
        func instanceBuilt(_ event: InstanceBuilt) { counts.withLock { $0[event.key, default: 0] += 1 } }
        func of<Service>(_ type: Service.Type) -> Int { counts.withLock { $0[ServiceKey(type)] ?? 0 } }
    }

    @Suite struct Tests {
        @Test func aCycleOfInitialisersIsAnError() throws {
            let container = Container()
            func resolveTheCycle() throws {
                // ARTICLE: A cycle of initialisers is an error
                container.register(Parent.self) { r in Parent(child: try r.resolve()) }
                container.register(Child.self) { r in Child(parent: try r.resolve()) }

                _ = try container.resolve(Parent.self)  // throws
                // ARTICLE end
            }

            let error = try #require(throws: ResolutionError.self) { try resolveTheCycle() }
            guard case .circularDependency = error.reason else {
                Issue.record("expected .circularDependency, got \(error.reason)")
                return
            }
            #expect(error.path == [ServiceKey(Parent.self), ServiceKey(Child.self), ServiceKey(Parent.self)])
            let shown = try #require(try Article.text(in: "A cycle of initialisers is an error"))
            #expect(error.description == shown, "printed:\n\(error)")
        }

        @Test func breakTheCycleWithInitCompleted() throws {
            let container = Container()
            let builds = Builds()
            container.addObserver(builds)
            // ARTICLE: Break the cycle with initCompleted
            final class Parent {
                let child: Child
                init(child: Child) { self.child = child }
            }

            final class Child {
                weak var parent: Parent?
            }

            container.register(Parent.self) { r in Parent(child: try r.resolve()) }
            container.register(Child.self) { _ in Child() }
                .initCompleted { r, child in child.parent = try r.resolve(Parent.self) }

            let parent = try container.resolve(Parent.self)  // parent.child.parent === parent
            // ARTICLE end

            #expect(parent.child.parent === parent)
            #expect(builds.of(Parent.self) == 1, "each factory runs once")
            #expect(builds.of(Child.self) == 1, "each factory runs once")
            weak var released: Parent?
            do {
                let another = try container.resolve(Parent.self)
                #expect(another !== parent, "graph scope: a new pair for every resolve")
                released = another
            }
            #expect(released == nil, "the back reference is weak: no retain cycle")
        }

        @Test func theHazard() throws {
            let container = Container()
            let builds = Builds()
            container.addObserver(builds)
            // ARTICLE: The hazard: using an object in an initialiser before its hook has run
            final class A {
                let b: B
                init(b: B) {
                    self.b = b
                    b.refresh()  // b.c is still nil here: B's hook has not run yet
                }
            }

            final class B {
                var c: C?
                func refresh() { c?.load() }
            }

            final class C {
                unowned let b: B
                init(b: B) { self.b = b }
                func load() {}
            }

            container.register(A.self) { r in A(b: try r.resolve()) }
            container.register(B.self) { _ in B() }
                .initCompleted { r, b in b.c = try r.resolve(C.self) }
            container.register(C.self) { r in C(b: try r.resolve()) }

            let a = try container.resolve(A.self)  // now a.b.c is set: every hook has run
            // ARTICLE end

            let c = try #require(a.b.c)
            #expect(c.b === a.b, "the hook's C got the B of the same resolution")
            #expect(builds.of(B.self) == 1)

            // What A's initialiser receives: a B whose hook has not run yet.
            let sawC = Locked<Bool?>(nil)
            container.register(A.self) { r in
                let b: B = try r.resolve()
                sawC.withLock { $0 = b.c != nil }
                return A(b: b)
            }
            let later = try container.resolve(A.self)
            #expect(sawC.withLock { $0 } == false)
            #expect(later.b.c != nil)
        }

        @Test func checkThatTheCycleIsReleased() throws {
            let container = Container()
            container.register(Parent.self) { r in Parent(child: try r.resolve()) }
            container.register(Child.self) { _ in Child() }
                .initCompleted { r, child in child.parent = try r.resolve(Parent.self) }  // a strong back reference
            var printed: [Any] = []
            func print(_ item: Any) { printed.append(item) }  // the snippet's `print`, recorded
            // ARTICLE: Check that the cycle is released
            let tracker = LeakTracker(container)
            do {
                _ = try container.resolve(Parent.self)
            }  // nothing outside holds the pair any more
            let report = tracker.check()
            print(report)
            // ARTICLE end

            #expect(report.leaks.count == 2)
            try #require(printed.count == 1)
            let shown = try #require(try Article.text(in: "Check that the cycle is released"))
            #expect("\(printed[0])" == shown, "printed:\n\(report)")
        }

        @Test func everySwiftBlockOfTheArticleIsHere() throws {
            for problem in try Article.mismatches() { Issue.record(Comment(rawValue: problem)) }
        }
    }
}

private let Article = DocumentSnippets(
    document: "Sources/Arbor/Arbor.docc/CircularDependencies.md", marker: "ARTICLE",
    testFile: URL(fileURLWithPath: #filePath))
