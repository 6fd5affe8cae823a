// expect: compiles
// The control for the file beside it: the same registration with a Sendable argument compiles, so the other file
// fails for its argument, not for the way it is checked.
import Arbor

struct Style: Sendable {
    var bold = false
}

@MainActor final class EditorModel {
    let style: Style
    init(style: Style) { self.style = style }
}

func wire(_ container: Container) {
    container.register(EditorModel.self) { @MainActor (_, style: Style) in EditorModel(style: style) }
}
