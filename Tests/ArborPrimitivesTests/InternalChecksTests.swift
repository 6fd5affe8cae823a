import ArborPrimitives
import Testing

/// With `ARBOR_INTERNAL_CHECKS`, misuse that would corrupt memory in a normal build stops the program instead.
@Suite struct InternalChecksTests {
    @Test func modeMatchesTheBuild() {
        #if ARBOR_INTERNAL_CHECKS
        #expect(arborInternalChecksEnabled)
        #else
        #expect(!arborInternalChecksEnabled)
        #endif
    }

    #if ARBOR_INTERNAL_CHECKS
    @Test func popFromAnEmptyStackStops() async {
        await #expect(processExitsWith: .failure) {
            var stack = UnsafeStack<Int>()
            stack.pop()
        }
    }

    @Test func stackIndexOutOfBoundsStops() async {
        await #expect(processExitsWith: .failure) {
            var stack = UnsafeStack<Int>()
            stack.push(1)
            _ = stack[1]
        }
    }

    @Test func readingAValueStackValueAsAnotherTypeStops() async {
        await #expect(processExitsWith: .failure) {
            var stack = ValueStack()
            stack.push(UInt64(1))
            _ = stack.value(at: 0, as: Int64.self)
        }
    }

    @Test func readingAStoredValueAsAnotherTypeStops() async {
        await #expect(processExitsWith: .failure) {
            _ = StoredValue.make(1).load(as: UInt.self)
        }
    }

    @Test func deallocatingAnAtomicWordTwiceStops() async {
        await #expect(processExitsWith: .failure) {
            let word = AtomicWord(0)
            let copy = word
            word.deallocate()
            copy.deallocate()
        }
    }

    @Test func deallocatingTheWordsOfAProtectedStops() async {
        await #expect(processExitsWith: .failure) {
            let protected = Protected<Int>.make(with: { 0 }, words: (0, 0, 0, 0))
            protected.words.deallocate()
        }
    }

    @Test func readingWordsOfAProtectedMadeWithoutThemStops() async {
        await #expect(processExitsWith: .failure) {
            let protected = Protected.make(0)
            _ = protected.words.load()
        }
    }
    #endif
}
