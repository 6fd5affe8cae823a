// Runs Arbor's examples: `swift run Examples` runs them all, `swift run Examples <name>` runs one.
// An example that fails a check throws; the run then stops with a non-zero exit status.

import Foundation

let examples: [(name: String, summary: String, run: () throws -> Void)] = [
    ("news-app", "wire a small app, override its network client in a child, wire a circular pair", NewsApp.run),
    (
        "test-overrides", "swap the network client in a child container; the app's singletons stay untouched",
        TestOverrides.run
    ),
    (
        "weak-cache", "an image cache shared by open screens, released with the last one, rebuilt for the next",
        WeakCache.run
    ),
    (
        "circular-wiring", "a view/presenter/interactor triangle wired with initCompleted, checked by LeakTracker",
        CircularWiring.run
    ),
    (
        "checkout-session", "a session container validated, drawn as a dependency graph, and closed on logout",
        CheckoutSession.run
    ),
    (
        "startup-profile", "profile an app's launch: the slowest registrations, a flame graph and a Perfetto trace",
        StartupProfile.run
    ),
    (
        "editor-plugins", "plugins resolved with resolveAll, an autoregistered editor, a child that swaps one, a reset",
        EditorPlugins.run
    ),
]

/// What an example throws when one of its checks fails.
struct ExampleFailure: Error, CustomStringConvertible {
    let description: String
}

/// Checks what an example demonstrates: throws, and so fails the run, when `condition` is false.
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    guard condition else { throw ExampleFailure(description: message()) }
}

let requested = Array(CommandLine.arguments.dropFirst())
let unknown = requested.filter { name in !examples.contains { $0.name == name } }
if !unknown.isEmpty {
    print("Unknown example: \(unknown.joined(separator: ", ")). Available:")
    for example in examples { print("  \(example.name) — \(example.summary)") }
    exit(2)
}

for example in examples where requested.isEmpty || requested.contains(example.name) {
    print("━━ \(example.name): \(example.summary)")
    do {
        try example.run()
    } catch {
        print("✘ \(example.name) failed: \(error)")
        exit(1)
    }
    print()
}
