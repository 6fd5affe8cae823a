import ArborTestSupport
import Testing

@testable import Arbor

// Runtime arguments and results of every shape (ArborTestSupport/ServiceShapes.swift) through the memory Arbor lays
// out itself: `ArgumentsTuple` (the arguments as one tuple in the caller's frame), `ResultSlot` (the result written
// straight into the caller's frame), and the entries' downcasts to the factory type the key names. Each value comes
// back as it went in, and nothing is retained or released once too often.

/// What a factory received as its argument.
private final class Echo: @unchecked Sendable {
    let argument: Any
    let number: Int
    init(_ argument: Any, _ number: Int) {
        self.argument = argument
        self.number = number
    }
}

@Suite struct ShapeArgumentsTests {
    @Test(arguments: Shapes.names)
    func argumentsTupleAndResultSlotHoldEveryShape(shape: String) {
        func check<Shape: ServiceShape>(_: Shape.Type) {
            let released = Shape.releasedAfter(21) { value in
                let read = ArgumentsTuple.with(value, 5) { tuple in tuple.load(as: (Shape.Service, Int).self) }
                #expect(Shape.serial(of: read.0) == Shape.serial(of: value) && read.1 == 5, "\(Shape.name)")
                let taken = ResultSlot.with(Shape.Service.self) { slot in
                    slot.initialize(to: value)
                    return slot.take()
                }
                #expect(Shape.serial(of: taken) == Shape.serial(of: value), "\(Shape.name): the slot's value")
                let discarded: Bool = ResultSlot.with(Shape.Service.self) { slot in
                    slot.initialize(to: value)
                    slot.discard()
                    return true
                }
                #expect(discarded)
            }
            #expect(released, "\(Shape.name): released exactly once")
        }
        check(Shapes.named(shape))
    }

    @Test(arguments: Shapes.names)
    func aFactoryGetsItsArgumentsAndResultOfEveryShape(shape: String) async throws {
        func check<Shape: ServiceShape>(_: Shape.Type) async throws {
            let container = Container()
            // The shape as an argument, with another after it.
            container.register(Echo.self) { (_, argument: Shape.Service, number: Int) in Echo(argument, number) }
            container.register(Echo.self, name: "async") { (_, argument: Shape.Service, number: Int) async in
                Echo(argument, number)
            }
            // The shape as the result of a factory with arguments: the resolve writes it into its caller's frame.
            container.register(Shape.Service.self) { (_, serial: Int) in Shape.make(serial) }
            container.register(Shape.Service.self, name: "async") { (_, serial: Int) async in Shape.make(serial) }
            let value = Shape.make(33)
            for echo in [
                try resolveSynchronously(Echo.self, from: container, arguments: value, 4),
                try await container.resolve(Echo.self, name: "async", arguments: value, 4),
            ] {
                #expect((echo.argument as? Shape.Service).flatMap(Shape.serial(of:)) == Shape.serial(of: value))
                #expect(echo.number == 4, "\(Shape.name): the argument after it")
                if let object = Shape.object(of: value) {
                    #expect(Shape.object(of: echo.argument as! Shape.Service) === object, "\(Shape.name)")
                }
            }
            let made: Shape.Service = try resolveSynchronously(Shape.Service.self, from: container, arguments: 44)
            let madeAsync: Shape.Service = try await container.resolve(Shape.Service.self, name: "async", arguments: 45)
            if Shape.serial(of: value) != nil {
                #expect(Shape.serial(of: made) == 44 && Shape.serial(of: madeAsync) == 45, "\(Shape.name): results")
            }
        }
        try await check(Shapes.named(shape))
    }
}

/// The synchronous `resolve` with runtime arguments, for `async` tests.
private func resolveSynchronously<Service, First, each Argument>(
    _ serviceType: Service.Type, name: String? = nil, from resolver: any Resolver, arguments first: First,
    _ argument: repeat each Argument
) throws -> Service {
    guard let name else { return try resolver.resolve(serviceType, arguments: first, repeat each argument) }
    return try resolver.resolve(serviceType, name: name, arguments: first, repeat each argument)
}
