// expect: call implements(_:name:) on the registration: registration.implements(Other.self)
import Arbor

protocol Vehicle {}
final class Car: Vehicle {}

func port(_ container: Container) {
    let registration = container.register(Car.self) { _ in Car() }
    container.forward(Vehicle.self, to: registration)
}
