// expect: type 'Formatter' does not conform to the 'Sendable' protocol
// A main-actor factory's runtime arguments go to the main actor when an `async` resolve from another task builds it:
// a non-Sendable one would be shared between that task and the main actor.
import Arbor

final class Formatter {
    var uses = 0
}

@MainActor final class EditorModel {
    let formatter: Formatter
    init(formatter: Formatter) { self.formatter = formatter }
}

func wire(_ container: Container) {
    container.register(EditorModel.self) { @MainActor (_, formatter: Formatter) in EditorModel(formatter: formatter) }
}
