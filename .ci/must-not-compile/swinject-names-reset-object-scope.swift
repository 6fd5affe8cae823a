// expect: use resetInstance(of:name:)
import Arbor

final class Engine {}

func port(_ container: Container) {
    container.resetObjectScope(.permanent, serviceType: Engine.self)
}
