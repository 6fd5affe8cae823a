import ArborPrimitives
import Testing

private protocol RIProtocol: AnyObject {}

private final class RIObject: RIProtocol {
    let value: Int
    init(_ value: Int) { self.value = value }
}

@Suite struct ReinterpretTests {
    @Test func moveObjectHandsOverTheOneReferenceAndLeavesNil() {
        weak var observed: RIObject?
        var moved: RIObject?
        do {
            let object = RIObject(5)
            observed = object
            var erased: AnyObject? = object
            moved = moveObject(out: &erased, as: RIObject.self)
            #expect(erased == nil)
        }
        #expect(moved?.value == 5)
        #expect(observed != nil)
        moved = nil
        #expect(observed == nil, "the moved reference was retained once too often")
    }

    @Test func reinterpretReturnsTheSameValueOfTheSameType() {
        func through<Value, Target>(_ value: Value, as target: Target.Type) -> Target? {
            Value.self == Target.self ? reinterpret(value, as: target) : nil
        }
        #expect(through([1, 2, 3], as: [Int].self) == [1, 2, 3])
        #expect(through("text", as: String.self) == "text")
        let object = RIObject(9)
        #expect(through(object, as: RIObject.self) === object)
        #expect(through(1, as: String.self) == nil)
    }

    @Test func objectInAnAnyIsTheInstanceItHoldsAndNilForOtherKindsOfValue() {
        weak var observed: RIObject?
        do {
            let object = RIObject(3)
            observed = object
            let asProtocol: any RIProtocol = object
            #expect(ArborPrimitives.object(in: object as Any) === object)
            #expect(ArborPrimitives.object(in: asProtocol as Any) === object)
            let subclassed: AnyObject = RISubclass(4)
            #expect(ArborPrimitives.object(in: subclassed as Any) === subclassed)
            #expect(ArborPrimitives.object(in: 7 as Any) == nil)
            #expect(ArborPrimitives.object(in: "text" as Any) == nil)
            #expect(ArborPrimitives.object(in: Optional(object) as Any) == nil)
            #expect(ArborPrimitives.object(in: RIObject.self as Any) == nil)
            #expect(ArborPrimitives.object(in: [object] as Any) == nil)
        }
        #expect(observed == nil, "object(in:) retained the instance once too often")
    }
}

private class RIBase {
    let value: Int
    init(_ value: Int) { self.value = value }
}

private final class RISubclass: RIBase {}
