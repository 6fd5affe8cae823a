// expect: 'hasAnyRegistration(of:name:)' has been renamed to 'isRegistered(_:name:)'
import Arbor

final class Engine {}

func port(_ container: Container) -> Bool {
    container.hasAnyRegistration(of: Engine.self)
}
