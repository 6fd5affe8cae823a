import Arbor
import Foundation

/// Plugins registered under names and resolved all at once with `resolveAll`, an editor autoregistered from its
/// initialiser, a test's child container that swaps one plugin and adds another, and `resetInstance` dropping the one
/// singleton a user's settings change.
enum EditorPlugins {
    // MARK: The app's types

    protocol Plugin: Sendable {
        var name: String { get }
        func process(_ text: String) -> String
    }

    struct Settings: Sendable {
        let language: String
    }

    struct SpellingPlugin: Plugin {
        let settings: Settings
        var name: String { "spelling (\(settings.language))" }
        func process(_ text: String) -> String { text.replacingOccurrences(of: "teh", with: "the") }
    }

    struct QuotesPlugin: Plugin {
        let name = "quotes"
        func process(_ text: String) -> String { text.replacingOccurrences(of: "\"", with: "”") }
    }

    struct ShoutPlugin: Plugin {
        let name = "shout"
        func process(_ text: String) -> String { text.uppercased() }
    }

    final class Editor: Sendable {
        let plugins: [any Plugin]
        let settings: Settings
        init(plugins: [any Plugin], settings: Settings) {
            self.plugins = plugins
            self.settings = settings
        }
        func run(_ text: String) -> String { plugins.reduce(text) { text, plugin in plugin.process(text) } }
    }

    // MARK: The wiring

    static func run() throws {
        let app = Container()
        let preferences = Preferences(language: "en")
        app.register(Settings.self) { _ in Settings(language: preferences.language) }.inObjectScope(.permanent)
        app.autoregister((any Plugin).self, name: "spelling", initializer: SpellingPlugin.init(settings:))
        app.register((any Plugin).self, name: "quotes") { _ in QuotesPlugin() }
        app.register(Editor.self) { r in
            Editor(plugins: try r.resolveAll((any Plugin).self), settings: try r.resolve())
        }

        let editor = try app.resolve(Editor.self)
        print("   1. the app's plugins, in registration order: \(editor.plugins.map(\.name).joined(separator: ", "))")
        let edited = editor.run("teh \"draft\"")
        print("      teh \"draft\" → \(edited)")
        try require(edited == "the ”draft”", "the plugins run in order")

        let test = app.makeChild()
        test.register((any Plugin).self, name: "quotes") { _ in ShoutPlugin() }
        test.register((any Plugin).self, name: "extra") { _ in QuotesPlugin() }
        let testEditor = try test.resolve(Editor.self)
        let names = testEditor.plugins.map(\.name)
        print("   2. a test's child replaces quotes in its place and adds one: \(names.joined(separator: ", "))")
        try require(names == ["spelling (en)", "shout", "quotes"], "the child's plugins: \(names)")

        preferences.language = "fr"
        app.resetInstance(of: Settings.self)
        let french = try app.resolve(Editor.self)
        print("   3. after resetInstance(of: Settings.self): \(french.plugins.map(\.name).joined(separator: ", "))")
        try require(french.settings.language == "fr", "the next resolve builds new settings")
    }

    /// What the user chose, read when `Settings` is built.
    final class Preferences: @unchecked Sendable {
        private let lock = NSLock()
        private var chosen: String
        init(language: String) { chosen = language }
        var language: String {
            get { lock.withLock { chosen } }
            set { lock.withLock { chosen = newValue } }
        }
    }
}
