import ArborPrimitives
import ArborTestSupport
import Foundation
import Testing

// The three things Arbor asks of the platform and the runtime below Swift's public API: where the thread's stack ends,
// which task runs, and whether this is the main thread. Each is checked against what the public API or the system
// says, so a change underneath fails here, loudly.

@Suite struct StackLimitTests {
    @Test func aThreadKnowsWhereItsStackEnds() {
        let limit = StackLimit.ofCurrentThread(margin: 32 * 1024)
        #if os(Linux) || canImport(Darwin)
        #expect(limit.lowestAddress > 0, "the system tells where the stack ends")
        #endif
        #expect(!limit.isReached, "a test's frame is far from the end of its stack")
        #expect(limit.bytesLeft > 32 * 1024)
    }

    @Test func theFrameGoesDownAsCallsNestAndTheLimitIsReachedNearTheEnd() {
        // On a thread of its own, with a small stack: recursing until the limit says stop never overflows it.
        let reached = onAnotherThread(stackSize: 256 * 1024) { () -> (depth: Int, shrank: Bool) in
            let limit = StackLimit.ofCurrentThread(margin: 32 * 1024)
            let first = limit.bytesLeft
            func recurse(_ depth: Int) -> Int {
                var padding = (0, 0, 0, 0, 0, 0, 0, 0)  // A frame of a few hundred bytes.
                padding.0 = depth
                if limit.isReached { return withExtendedLifetime(padding) { depth } }
                return withExtendedLifetime(padding) { recurse(depth + 1) }
            }
            let depth = recurse(0)
            return (depth, limit.bytesLeft <= first)
        }
        #expect(reached != nil, "the recursion stopped at the limit instead of overflowing the stack")
        #expect((reached?.depth ?? 0) > 10, "it went some way down first")
        #expect(reached?.shrank == true)
    }

    @Test func aLimitAtZeroIsNeverReached() {
        #expect(!StackLimit(lowestAddress: 0).isReached)
        #expect(StackLimit(lowestAddress: .max).isReached)
    }
}

@Suite struct CurrentTaskTests {
    @Test func outsideATaskThereIsNone() {
        let address = onAnotherThread(stackSize: 1 << 20) { CurrentTask.address.map(UInt.init(bitPattern:)) }
        #expect(address == .some(nil), "a plain thread runs no task")
    }

    @Test func itIsTheTaskTheRuntimesPublicAPIHandsOut() async {
        let publicAddress = withUnsafeCurrentTask { task in
            task.map { unsafeBitCast($0, to: UnsafeRawPointer.self) }
        }
        #expect(publicAddress != nil)
        #expect(CurrentTask.address == publicAddress, "swift_task_getCurrent agrees with withUnsafeCurrentTask")
    }

    @Test func itStaysTheSameAcrossSuspensionsAndDiffersBetweenTasks() async {
        let before = CurrentTask.address
        await Task.yield()
        try? await Task.sleep(nanoseconds: 1_000)
        #expect(CurrentTask.address == before, "one task, whatever thread it resumes on")
        let other = await Task.detached { CurrentTask.address.map(UInt.init(bitPattern:)) }.value
        #expect(other != nil && other != before.map(UInt.init(bitPattern:)), "another task has another identity")
    }
}

@Suite struct MainThreadTests {
    @MainActor
    @Test func theMainActorRunsOnTheMainThread() {
        #expect(MainThread.isCurrent == Thread.isMainThread)
    }

    @Test func aThreadOfItsOwnIsNotTheMainThread() {
        #expect(onAnotherThread(stackSize: 1 << 20) { MainThread.isCurrent } == false)
    }
}

/// Runs `body` on a new thread with `stackSize` bytes of stack, and waits for it.
private func onAnotherThread<Result: Sendable>(
    stackSize: Int, _ body: @escaping @Sendable () -> Result
) -> Result? {
    let result = ResultBox<Result>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        result.value = body()
        done.signal()
    }
    thread.stackSize = stackSize
    thread.start()
    guard done.wait(timeout: .now() + 60) == .success else { return nil }
    return result.value
}

private final class ResultBox<Value>: @unchecked Sendable {
    var value: Value?
}
