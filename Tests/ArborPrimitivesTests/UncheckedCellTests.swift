import ArborPrimitives
import Testing

private final class CellCanary {
    let onDeinit: () -> Void
    init(onDeinit: @escaping () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

@Suite struct UncheckedCellTests {
    private struct Counters {
        var depth = 0
        var names: [String] = []
    }

    @Test func valueIsReadAndChangedInPlaceAndCopiesShareIt() {
        let cell = UncheckedCell(Counters())
        cell.value.depth += 2
        cell.value.names.append("a")
        let copy = cell
        copy.value.names.append("b")
        #expect(cell.value.depth == 2)
        #expect(cell.value.names == ["a", "b"])
        cell.deallocate()
    }

    @Test func deallocateDestroysTheValue() {
        var released = false
        do {
            let cell = UncheckedCell(CellCanary { released = true })
            #expect(!released)
            cell.deallocate()
        }
        #expect(released)
    }
}
