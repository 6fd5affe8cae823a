import ArborPrimitives
import ArborTestSupport
import Testing

// The primitives that read a value's type or layout, over every shape of service type a registration can have
// (ArborTestSupport/ServiceShapes.swift): each answer is the one the runtime gives (`as AnyObject`, `as?`), and nothing
// is retained or released once too often. A trick that is right for a class registered as itself may be wrong for the
// same class behind `any Animal`: `object(in:)` was, reading the first word of an `Any` that held a boxed existential.

/// The runtime's own answer to "which class instance is this value, if any".
private func runtimeObject<Value>(in value: Value) -> AnyObject? {
    type(of: value as Any) is AnyClass ? (value as Any) as AnyObject : nil
}

@Suite struct ShapeTricksTests {
    @Test(arguments: Shapes.names)
    func objectInAValueIsTheRuntimesAnswer(shape: String) {
        func check<Shape: ServiceShape>(_: Shape.Type) {
            let released = Shape.releasedAfter(7) { value in
                let expected = Shape.object(of: value)
                #expect(object(in: value) === expected, "\(Shape.name): object(in:) as the registered type")
                #expect(object(in: value) === runtimeObject(in: value), "\(Shape.name): the runtime's answer")
                // Erased to `Any` in generic code, as a storage or a reflected property hands it over.
                func erased<Erased>(_ value: Erased) -> Any { value }
                #expect(object(in: erased(value)) === expected, "\(Shape.name): object(in:) through Any")
                #expect((object(in: value) == nil) == !Shape.isObject)
            }
            #expect(released, "\(Shape.name): object(in:) retained the instance once too often")
        }
        check(Shapes.named(shape))
    }

    @Test(arguments: Shapes.names)
    func aStoredValueGivesBackWhatWasStored(shape: String) {
        func check<Shape: ServiceShape>(_: Shape.Type) {
            let released = Shape.releasedAfter(11) { value in
                let stored = StoredValue.make(value)
                #expect(
                    ObjectIdentifier(stored.valueType) == ObjectIdentifier(Shape.Service.self),
                    "\(Shape.name): the type")
                #expect(Shape.serial(of: stored.load(as: Shape.Service.self)) == Shape.serial(of: value))
                #expect(stored.object === Shape.object(of: value), "\(Shape.name): the object inside")
                let any = stored.asAny
                #expect((any as? Shape.Service).flatMap(Shape.serial(of:)) == Shape.serial(of: value))
            }
            #expect(released, "\(Shape.name): the stored copy was released exactly once")
        }
        check(Shapes.named(shape))
    }

    @Test(arguments: Shapes.names)
    func reinterpretingAValueAsItsOwnTypeKeepsIt(shape: String) {
        func check<Shape: ServiceShape>(_: Shape.Type) {
            let released = Shape.releasedAfter(13) { value in
                let same = reinterpret(value, as: Shape.Service.self)
                #expect(Shape.serial(of: same) == Shape.serial(of: value))
                if let object = Shape.object(of: value) { #expect(Shape.object(of: same) === object) }
            }
            #expect(released, "\(Shape.name): reinterpret copied with the type's own retains")
        }
        check(Shapes.named(shape))
    }

    @Test func aValueStackKeepsEveryShapeWithItsOwnType() {
        var stack = ValueStack()
        defer { stack.deallocate() }
        func push<Shape: ServiceShape>(_: Shape.Type) -> Int { stack.push(Shape.make(stack.count)) }
        func read<Shape: ServiceShape>(_: Shape.Type, at position: Int) -> Int? {
            Shape.serial(of: stack.value(at: position, as: Shape.Service.self))
        }
        let positions = Shapes.all.map { push($0) }
        for (shape, position) in zip(Shapes.all, positions) where shape.name != MetatypeShape.name {
            #expect(read(shape, at: position) == position, "\(shape.name) at \(position)")
        }
        stack.removeAll()
    }

    @Test func movingAClassInstanceOutOfAWeakLoadHandsOverItsReference() {
        func check<Object: AnyObject>(_ make: () -> Object) {
            weak var observed: Object?
            var moved: Object?
            do {
                let object = make()
                observed = object
                var loaded: AnyObject? = object
                moved = moveObject(out: &loaded, as: Object.self)
                #expect(loaded == nil)
            }
            #expect(moved != nil && observed != nil)
            moved = nil
            #expect(observed == nil, "\(Object.self): moved, not copied")
        }
        // The shapes whose weak loads are moved: a class registered as itself (a generic one and an actor too).
        check { SCat(serial: 1) }
        check { SBox(serial: 2, value: 2) }
        check { SActor(serial: 3) }
    }

    @Test func theProbeSeesWeakAndUnownedReferencesToEveryKindOfObject() {
        final class WeakHolder {
            weak var object: AnyObject?
            init(_ object: AnyObject) { self.object = object }
        }
        final class UnownedHolder {
            unowned let object: AnyObject
            init(_ object: AnyObject) { self.object = object }
        }
        for object in [SCat(serial: 1), SBox(serial: 2, value: 2), SActor(serial: 3)] as [AnyObject] {
            #expect(!ReferenceCountProbe.hasUnownedOrWeakReferences(object), "\(type(of: object)): none yet")
            let unowned = UnownedHolder(object)
            #expect(ReferenceCountProbe.hasUnownedOrWeakReferences(object), "\(type(of: object)): unowned")
            withExtendedLifetime(unowned) {}
            let weak = WeakHolder(object)
            #expect(ReferenceCountProbe.hasUnownedOrWeakReferences(object), "\(type(of: object)): weak")
            withExtendedLifetime(weak) {}
        }
    }
}
