import Foundation

// Every shape a service type can have — a class, a generic class, an actor, protocols (class-bound or not),
// compositions, `Any`, `AnyObject`, a struct, an enum, an optional, a closure, a metatype, a tuple — with a way to make
// an instance numbered `serial` and read the number back. The shape matrix and the property-based suite register
// services under these types, since a rule that holds for a class registered as itself may not hold for the same class
// registered as `any Animal` (a weak cache and a leak tracker once lost every such service).

package protocol SAnimal {
    var serial: Int { get }
}

package protocol SNamed {
    var name: String { get }
}

package protocol SClassAnimal: AnyObject {
    var serial: Int { get }
}

/// The class behind the object shapes. `loop` makes a retain cycle, for the leak tracker.
package final class SCat: SAnimal, SClassAnimal, SNamed, @unchecked Sendable {
    package let serial: Int
    package var name: String { "cat \(serial)" }
    package var loop: AnyObject?
    package init(serial: Int) { self.serial = serial }
}

package final class SBox<Value>: @unchecked Sendable {
    package let serial: Int
    package let value: Value
    package var loop: AnyObject?
    package init(serial: Int, value: Value) {
        self.serial = serial
        self.value = value
    }
}

package actor SActor {
    package let serial: Int
    nonisolated(unsafe) var loop: AnyObject?
    package init(serial: Int) { self.serial = serial }
}

package struct SPoint: Sendable {
    package let serial: Int
}

package enum SColor: Sendable {
    case numbered(Int)
}

/// A service type and how to make and recognise its instances.
package protocol ServiceShape: Sendable {
    associatedtype Service
    /// The shape's name in test output.
    static var name: String { get }
    static func make(_ serial: Int) -> Service
    /// The number `make` gave the instance; `nil` for a shape whose values all look alike (a metatype).
    static func serial(of service: Service) -> Int?
    /// The class instance the service is or holds: what weak sharing and leak tracking see. `nil` for value shapes.
    static func object(of service: Service) -> AnyObject?
}

extension ServiceShape {
    /// Whether the shape's instances are class instances, whatever the static type they are registered under.
    package static var isObject: Bool { object(of: make(0)) != nil }

    /// Runs `body` with a new instance numbered `serial`; whether the instance is gone after, as it must be when the
    /// body copied it only with its type's own retains and releases.
    package static func releasedAfter(_ serial: Int, _ body: (Service) -> Void) -> Bool {
        weak var observed: AnyObject?
        do {
            let value = make(serial)
            observed = object(of: value)
            body(value)
        }
        return observed == nil
    }

    /// Makes the instance keep itself alive, if it is an object: a leak.
    package static func makeLeak(_ service: Service) {
        switch object(of: service) {
        case let cat as SCat: cat.loop = cat
        case let box as SBox<Int>: box.loop = box
        case let actor as SActor: actor.loop = actor
        default: break
        }
    }

    /// Breaks the retain cycle `makeLeak` made.
    package static func breakLeak(_ service: Service) {
        switch object(of: service) {
        case let cat as SCat: cat.loop = nil
        case let box as SBox<Int>: box.loop = nil
        case let actor as SActor: actor.loop = nil
        default: break
        }
    }
}

package enum ClassShape: ServiceShape {
    package static let name = "SCat"
    package static func make(_ serial: Int) -> SCat { SCat(serial: serial) }
    package static func serial(of service: SCat) -> Int? { service.serial }
    package static func object(of service: SCat) -> AnyObject? { service }
}

package enum GenericClassShape: ServiceShape {
    package static let name = "SBox<Int>"
    package static func make(_ serial: Int) -> SBox<Int> { SBox(serial: serial, value: serial) }
    package static func serial(of service: SBox<Int>) -> Int? { service.serial }
    package static func object(of service: SBox<Int>) -> AnyObject? { service }
}

package enum ActorShape: ServiceShape {
    package static let name = "SActor"
    package static func make(_ serial: Int) -> SActor { SActor(serial: serial) }
    package static func serial(of service: SActor) -> Int? { service.serial }
    package static func object(of service: SActor) -> AnyObject? { service }
}

package enum ProtocolShape: ServiceShape {
    package static let name = "any SAnimal"
    package static func make(_ serial: Int) -> any SAnimal { SCat(serial: serial) }
    package static func serial(of service: any SAnimal) -> Int? { service.serial }
    package static func object(of service: any SAnimal) -> AnyObject? { service as? SCat }
}

package enum ClassBoundProtocolShape: ServiceShape {
    package static let name = "any SClassAnimal"
    package static func make(_ serial: Int) -> any SClassAnimal { SCat(serial: serial) }
    package static func serial(of service: any SClassAnimal) -> Int? { service.serial }
    package static func object(of service: any SClassAnimal) -> AnyObject? { service }
}

package enum CompositionShape: ServiceShape {
    package static let name = "any SAnimal & SNamed"
    package static func make(_ serial: Int) -> any SAnimal & SNamed { SCat(serial: serial) }
    package static func serial(of service: any SAnimal & SNamed) -> Int? { service.serial }
    package static func object(of service: any SAnimal & SNamed) -> AnyObject? { service as? SCat }
}

package enum ClassCompositionShape: ServiceShape {
    package static let name = "any SAnimal & AnyObject"
    package static func make(_ serial: Int) -> any SAnimal & AnyObject { SCat(serial: serial) }
    package static func serial(of service: any SAnimal & AnyObject) -> Int? { service.serial }
    package static func object(of service: any SAnimal & AnyObject) -> AnyObject? { service }
}

package enum SendableCompositionShape: ServiceShape {
    package static let name = "any SAnimal & Sendable"
    package static func make(_ serial: Int) -> any SAnimal & Sendable { SCat(serial: serial) }
    package static func serial(of service: any SAnimal & Sendable) -> Int? { service.serial }
    package static func object(of service: any SAnimal & Sendable) -> AnyObject? { service as? SCat }
}

package enum AnyShape: ServiceShape {
    package static let name = "Any"
    package static func make(_ serial: Int) -> Any { SCat(serial: serial) }
    package static func serial(of service: Any) -> Int? { (service as? SCat)?.serial }
    package static func object(of service: Any) -> AnyObject? { service as? SCat }
}

package enum AnyObjectShape: ServiceShape {
    package static let name = "AnyObject"
    package static func make(_ serial: Int) -> AnyObject { SCat(serial: serial) }
    package static func serial(of service: AnyObject) -> Int? { (service as? SCat)?.serial }
    package static func object(of service: AnyObject) -> AnyObject? { service }
}

package enum StructShape: ServiceShape {
    package static let name = "SPoint"
    package static func make(_ serial: Int) -> SPoint { SPoint(serial: serial) }
    package static func serial(of service: SPoint) -> Int? { service.serial }
    package static func object(of service: SPoint) -> AnyObject? { nil }
}

package enum EnumShape: ServiceShape {
    package static let name = "SColor"
    package static func make(_ serial: Int) -> SColor { .numbered(serial) }
    package static func serial(of service: SColor) -> Int? {
        switch service {
        case .numbered(let serial): serial
        }
    }
    package static func object(of service: SColor) -> AnyObject? { nil }
}

/// An optional is an enum: Arbor treats it as a value, also when it wraps a class instance.
package enum OptionalShape: ServiceShape {
    package static let name = "SCat?"
    package static func make(_ serial: Int) -> SCat? { SCat(serial: serial) }
    package static func serial(of service: SCat?) -> Int? { service?.serial }
    package static func object(of service: SCat?) -> AnyObject? { nil }
}

package enum ClosureShape: ServiceShape {
    package static let name = "@Sendable () -> Int"
    package static func make(_ serial: Int) -> @Sendable () -> Int { { serial } }
    package static func serial(of service: @Sendable () -> Int) -> Int? { service() }
    package static func object(of service: @Sendable () -> Int) -> AnyObject? { nil }
}

package enum MetatypeShape: ServiceShape {
    package static let name = "SCat.Type"
    package static func make(_ serial: Int) -> SCat.Type { SCat.self }
    package static func serial(of service: SCat.Type) -> Int? { nil }
    package static func object(of service: SCat.Type) -> AnyObject? { nil }
}

package enum TupleShape: ServiceShape {
    package static let name = "(Int, String)"
    package static func make(_ serial: Int) -> (Int, String) { (serial, "tuple \(serial)") }
    package static func serial(of service: (Int, String)) -> Int? { service.0 }
    package static func object(of service: (Int, String)) -> AnyObject? { nil }
}

/// Every shape, by name: what parameterised tests iterate over.
package enum Shapes {
    package static var all: [any ServiceShape.Type] {
        [
            ClassShape.self, GenericClassShape.self, ActorShape.self, ProtocolShape.self, ClassBoundProtocolShape.self,
            CompositionShape.self, ClassCompositionShape.self, SendableCompositionShape.self, AnyShape.self,
            AnyObjectShape.self, StructShape.self, EnumShape.self, OptionalShape.self, ClosureShape.self,
            MetatypeShape.self, TupleShape.self,
        ]
    }

    package static var names: [String] { all.map { $0.name } }

    package static func named(_ name: String) -> any ServiceShape.Type {
        all.first { $0.name == name }!
    }
}
