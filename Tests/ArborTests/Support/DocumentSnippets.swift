import Foundation

/// The fenced code blocks of a Markdown document in the repository, and the copies of its Swift blocks in a test
/// file: between a line `// <marker>: <title of the block's section>` and a line `// <marker> end`. A test compiles
/// and runs the copies, and checks that they and the document agree, whitespace apart. A block that needs a package
/// trait (an integration) is copied into a test of that integration instead, named in `alsoIn`. A block's `import`
/// lines are not copied, since a copy may sit inside a function: a test file must import each of them. A package
/// manifest (a block that starts with `// swift-tools-version`) is not copied, nor is a block that starts with one of
/// the lines in `leavingOut` (another library's code, shown for comparison): no test here can compile them.
struct DocumentSnippets: Sendable {
    struct Block {
        let section: String
        let language: String
        let lines: [String]

        /// Whether the block is a package manifest.
        var isManifest: Bool { firstLine.hasPrefix("// swift-tools-version") }

        /// The block's first line that is not blank, without its indentation.
        var firstLine: String {
            lines.lazy.map { $0.trimmingCharacters(in: .whitespaces) }.first { !$0.isEmpty } ?? ""
        }
    }

    /// The document, relative to the repository's root.
    let document: URL
    let marker: String
    let testFile: URL
    /// More test files with copies, relative to the repository's root.
    let otherTestFiles: [URL]
    /// The first lines of Swift blocks that are not copied.
    let leftOut: Set<String>

    init(
        document path: String, marker: String, testFile: URL, alsoIn others: [String] = [],
        leavingOut firstLines: Set<String> = []
    ) {
        let root = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        document = root.appendingPathComponent(path)
        self.marker = marker
        self.testFile = testFile
        otherTestFiles = others.map { root.appendingPathComponent($0) }
        leftOut = firstLines
    }

    /// The fenced blocks of the document, each with the title of the heading above it.
    func blocks() throws -> [Block] {
        let text = try String(contentsOf: document, encoding: .utf8)
        var blocks: [Block] = []
        var section = ""
        var open: (language: String, lines: [String])?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if let block = open {
                if line.trimmingCharacters(in: .whitespaces) == "```" {
                    blocks.append(Block(section: section, language: block.language, lines: block.lines))
                    open = nil
                } else {
                    open?.lines.append(line)
                }
            } else if line.hasPrefix("```") {
                open = (String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces), [])
            } else if line.hasPrefix("#") {
                section = String(line.drop { $0 == "#" }).trimmingCharacters(in: .whitespaces)
            }
        }
        return blocks
    }

    /// The text of the document's `text` block in `section` (what a snippet prints), or `nil` when it has none.
    func text(in section: String) throws -> String? {
        try blocks().first { $0.section == section && $0.language == "text" }?.lines.joined(separator: "\n")
    }

    /// The regions of `text`, the test files', between `// <marker>: <section>` and `// <marker> end`, by section, in
    /// order.
    private func copies(in text: String) -> [String: [[String]]] {
        let start = "// \(marker): "
        var copies: [String: [[String]]] = [:]
        var open: (section: String, lines: [String])?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let region = open {
                if trimmed == "// \(marker) end" {
                    copies[region.section, default: []].append(Self.normalized(region.lines))
                    open = nil
                } else {
                    open?.lines.append(trimmed)
                }
            } else if trimmed.hasPrefix(start) {
                open = (String(trimmed.dropFirst(start.count)), [])
            }
        }
        return copies
    }

    /// The problems with the copies: a Swift block of the document without an identical copy, or a copy whose section
    /// has no Swift block any more. Empty when they agree.
    func mismatches() throws -> [String] {
        let inDocument = try blocks().filter {
            $0.language == "swift" && !$0.isManifest && !leftOut.contains($0.firstLine)
        }
        guard !inDocument.isEmpty else { return ["\(document.lastPathComponent) has no Swift block"] }
        let shown = Dictionary(grouping: inDocument, by: \.section).mapValues { blocks in
            blocks.map { Self.normalized($0.lines.filter { !Self.isImport($0) }) }
        }
        let text = try testFilesText()
        let copies = copies(in: text)
        var problems: [String] = []
        let imported = Set(text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        for block in inDocument {
            for line in block.lines where Self.isImport(line) {
                let module = line.trimmingCharacters(in: .whitespaces)
                if !imported.contains(module) {
                    problems.append("\(fileNames) must have `\(module)`, as \"\(block.section)\" does.")
                }
            }
        }
        for (section, blocks) in shown.sorted(by: { $0.key < $1.key }) where copies[section] != blocks {
            problems.append(
                """
                The Swift code of \(document.lastPathComponent) in "\(section)" must be copied, whitespace apart, into \
                \(fileNames) between `// \(marker): \(section)` and `// \(marker) end`.
                """)
        }
        for section in copies.keys.sorted() where shown[section] == nil {
            problems.append(
                "\(fileNames) has a copy for \"\(section)\", which has no Swift block in "
                    + "\(document.lastPathComponent).")
        }
        return problems
    }

    /// The text of the test file, then of the others.
    private func testFilesText() throws -> String {
        var text = try String(contentsOf: testFile, encoding: .utf8)
        for other in otherTestFiles { text += "\n" + (try String(contentsOf: other, encoding: .utf8)) }
        return text
    }

    /// Whether `line` imports a module.
    private static func isImport(_ line: String) -> Bool {
        line.trimmingCharacters(in: .whitespaces).hasPrefix("import ")
    }

    /// The test file, or "A or B" with the others, each as `Tests/<target>/<file>`.
    private var fileNames: String {
        ([testFile] + otherTestFiles).map { $0.pathComponents.suffix(3).joined(separator: "/") }
            .joined(separator: " or ")
    }

    /// Lines without leading or trailing whitespace, runs of blanks inside them shortened to one, and no empty lines.
    static func normalized(_ lines: [String]) -> [String] {
        lines.map { line in
            line.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
        }
        .filter { !$0.isEmpty }
    }
}
