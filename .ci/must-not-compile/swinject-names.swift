// expect: Arbor's containers are safe to use from any thread and task as they are: use the container itself
// Swinject's names that Arbor has no member for are unavailable, with what to use instead; the files beside this one
// check the others, one each.
import Arbor

final class Engine {}

func port(_ container: Container) {
    _ = container.synchronize()
}
