// expect: Arbor throws a ResolutionError that says what went wrong
import Arbor

func port() {
    Container.loggingFunction = nil
}
