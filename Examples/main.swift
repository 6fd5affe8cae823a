// Runs Arbor's examples: `swift run Examples` runs them all, `swift run Examples <name>` runs one.

import Foundation

let examples: [(name: String, summary: String, run: () throws -> Void)] = [
    ("news-app", "wire a small app, override its network client in a child, wire a circular pair", NewsApp.run)
]

let requested = Array(CommandLine.arguments.dropFirst())
let unknown = requested.filter { name in !examples.contains { $0.name == name } }
if !unknown.isEmpty {
    print("Unknown example: \(unknown.joined(separator: ", ")). Available:")
    for example in examples { print("  \(example.name) — \(example.summary)") }
    exit(2)
}

for example in examples where requested.isEmpty || requested.contains(example.name) {
    print("━━ \(example.name): \(example.summary)")
    try example.run()
    print()
}
