// expect: make the container, then register: let container = Container(); container.register(…) { … }
import Arbor

final class Engine {}

let container = Container { c in
    c.register(Engine.self) { _ in Engine() }
}
