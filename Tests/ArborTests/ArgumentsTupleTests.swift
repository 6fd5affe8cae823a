import Testing

@testable import Arbor

private final class ATObject {
    let value: Int
    init(_ value: Int) { self.value = value }
}

/// The runtime arguments of a resolve, laid out once as a tuple: read back as that tuple, they are the values passed,
/// in order, and laying them out keeps no reference once the body returned.
@Suite struct ArgumentsTupleTests {
    @Test func argumentsReadBackAsTheTupleTheyWereLaidOutAs() {
        let read = ArgumentsTuple.with(1, "two", [3.0]) { $0.load(as: (Int, String, [Double]).self) }
        #expect(read.0 == 1 && read.1 == "two" && read.2 == [3.0])
        var tuple = (UInt8(4), ATObject(5))
        let object = ArgumentsTuple.with(tuple: &tuple) { $0.load(as: (UInt8, ATObject).self) }
        #expect(object.0 == 4 && object.1 === tuple.1)
        let single = ArgumentsTuple.with("only") { $0.load(as: String.self) }
        #expect(single == "only")
    }

    @Test func layingArgumentsOutKeepsNothingAlive() {
        weak var observed: ATObject?
        do {
            let object = ATObject(1)
            observed = object
            let value = ArgumentsTuple.with(object, 2) { $0.load(as: (ATObject, Int).self).0.value }
            #expect(value == 1)
        }
        #expect(observed == nil)
    }
}
