import ArborTestSupport
import Foundation
import Testing

@testable import Arbor

private final class CLService: Sendable {}

/// A parent keeps its live children in a list linked through the children (`ChildList`): a child links itself
/// when made and unlinks itself in its deinit, and `close()`, leak trackers and registration changes reach the
/// children still linked.
@Suite struct ChildListTests {
    private func linkedCount(_ container: Container) -> Int {
        container.registry.withLock { $0.children.count }
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
}
