import ArborTestSupport
import Foundation
import Testing

@testable import Arbor

private final class CLService: Sendable {}

/// Children kept by the threads that made them.
private final class CLKept: @unchecked Sendable {
    private let lock = NSLock()
    private var children: [Container] = []
    func append(_ child: Container) { lock.withLock { children.append(child) } }
    var count: Int { lock.withLock { children.count } }
    var all: [Container] { lock.withLock { children } }
}

/// A parent keeps its live children in a list linked through the children (`ChildList`): a child links itself
/// when made and unlinks itself in its deinit, and `close()`, leak trackers and registration changes reach the
/// children still linked.
@Suite struct ChildListTests {
    private func linkedCount(_ container: Container) -> Int {
        container.linkedChildCount
    }

    private func isClosed(_ container: Container) -> Bool {
        do {
            _ = try container.resolve(CLService.self)
            return false
        } catch let error as ResolutionError {
            return error.kind == .containerClosed
        } catch {
            return false
        }
    }

    /// Children dropped in any order (the middle, the first linked, the last linked) leave the others linked, and
    /// closing the parent closes exactly those.
    @Test(arguments: [[2, 0, 4, 1, 3], [4, 3, 2, 1, 0], [0, 1, 2, 3, 4], [1, 3]])
    func droppingChildrenInAnyOrderKeepsTheOthers(dropOrder: [Int]) {
        let parent = Container()
        parent.register(CLService.self) { _ in CLService() }
        var children: [Container?] = (0..<5).map { _ in parent.makeChild() }
        #expect(linkedCount(parent) == 5)
        for (dropped, index) in dropOrder.enumerated() {
            children[index] = nil
            #expect(linkedCount(parent) == 5 - dropped - 1)
        }
        let remaining = children.compactMap { $0 }
        #expect(remaining.allSatisfy { !isClosed($0) })
        parent.close()
        #expect(remaining.allSatisfy { isClosed($0) })
    }

    /// A registration added to the parent reaches a child's cached look-ups through the list.
    @Test func aParentRegistrationReachesLinkedChildren() throws {
        let parent = Container()
        parent.register(CLService.self) { _ in CLService() }.inObjectScope(.permanent)
        let children = (0..<3).map { _ in parent.makeChild() }
        let first = try children.map { try $0.resolve(CLService.self) }
        parent.register(CLService.self) { _ in CLService() }.inObjectScope(.permanent)
        let second = try children.map { try $0.resolve(CLService.self) }
        for (before, after) in zip(first, second) { #expect(before !== after) }
    }

    /// Children made and dropped on two threads while a third closes and re-registers in their parent: nothing
    /// crashes, no child is left linked, and the parent's walks never retain a child whose deinit has begun (that
    /// would stop the program: the runtime reports an object freed while still referenced).
    @Test func childrenComingAndGoingWhileTheParentWalksThem() {
        let parent = Container()
        parent.register(CLService.self) { _ in CLService() }
        let finished = runThreads(3) { index in
            for round in 0..<3_000 {
                if index == 2 {
                    parent.register(CLService.self) { _ in CLService() }
                    if round % 100 == 0 { _ = LeakTracker(parent) }
                } else {
                    let child = parent.makeChild()
                    let grandchild = child.makeChild()
                    _ = try? grandchild.resolve(CLService.self)
                }
            }
        }
        #expect(finished)
        #expect(linkedCount(parent) == 0)
    }

    /// Children made on several threads join several of the parent's lists; a `close()` that runs while they are
    /// made reaches every one made before it, and every one made after it is born closed.
    @Test func aCloseWhileChildrenAreMadeOnSeveralThreadsClosesEveryOne() {
        for _ in 0..<10 {
            let parent = Container()
            parent.register(CLService.self) { _ in CLService() }
            let kept = CLKept()
            let finished = runThreads(3) { index in
                if index == 0 {
                    while kept.count < 60 { sched_yield() }
                    parent.close()
                } else {
                    for _ in 0..<300 { kept.append(parent.makeChild()) }
                }
            }
            #expect(finished)
            let children = kept.all
            #expect(children.count == 600)
            #expect(children.allSatisfy { isClosed($0) }, "a child made around close() was left open")
        }
    }

    /// An observer added while children are made on several threads watches every child: the ones made before
    /// through the lists, the ones made after by inheriting it.
    @Test func anObserverAddedWhileChildrenAreMadeWatchesEveryOne() {
        final class Quiet: ResolutionObserver, @unchecked Sendable {}
        for _ in 0..<10 {
            let parent = Container()
            let observer = Quiet()
            let kept = CLKept()
            let finished = runThreads(3) { index in
                if index == 0 {
                    while kept.count < 60 { sched_yield() }
                    parent.addObserver(observer)
                } else {
                    for _ in 0..<300 { kept.append(parent.makeChild()) }
                }
            }
            #expect(finished)
            let children = kept.all
            #expect(children.allSatisfy { $0.observers.contains { $0 === observer } }, "a child is not watched")
        }
    }
}
