extension ResolutionProfile {
    /// A flame graph of who built what, as a self-contained SVG that any browser opens.
    ///
    /// ```swift
    /// try profile.flameGraphSVG().write(toFile: "startup.svg", atomically: true, encoding: .utf8)
    /// ```
    ///
    /// Each top-level resolve is a grey bar at the bottom (red if it threw); above a bar stand the services its
    /// factory resolved, and the `initCompleted` hooks (blue) of the instances it built. A bar's width is its total
    /// time; the same path resolved several times is one bar, with the times added. Bars keep the order in which
    /// they first ran, left to right. Hover over a bar for its figures.
    public func flameGraphSVG() -> String {
        let graph = FlameGraph(self)
        let width = 1200.0
        let margin = 10.0
        let barHeight = 17.0
        let top = 58.0
        let levels = Double(graph.maxLevel + 1)
        let height = top + levels * barHeight + 30
        let scale = graph.total > .zero ? (width - 2 * margin) / Self.milliseconds(graph.total) : 0
        let built = instanceCount
        let caption =
            "\(resolveCount) resolve\(resolveCount == 1 ? "" : "s"), \(built) instance\(built == 1 ? "" : "s") "
            + "built: \(Self.format(graph.total)) of resolving, the full width (shares are of it), in the "
            + "\(Self.format(duration)) profiled."
        let legend = "Grey: a resolve; warm: factories; blue: initCompleted hooks. Hover over a bar for its figures."
        var svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" \
            font-size="11">
            <rect x="0" y="0" width="100%" height="100%" fill="#fdfdf8"/>
            <text x="\(margin)" y="20" font-size="15" font-weight="bold">Arbor resolution profile</text>
            <text x="\(margin)" y="36" fill="#555">\(Self.xmlEscaped(caption))</text>
            <text x="\(margin)" y="50" fill="#555">\(Self.xmlEscaped(legend))</text>

            """
        var x = [Double](repeating: margin, count: graph.nodes.count)
        for index in graph.nodes.indices {
            let node = graph.nodes[index]
            // Children start where their parent starts, one after the other.
            var childX = x[index]
            for child in node.children {
                x[child] = childX
                childX += Self.milliseconds(graph.nodes[child].total) * scale
            }
            guard index != 0 else { continue }  // The root stands for everything; it is not drawn.
            let barWidth = Self.milliseconds(node.total) * scale
            guard barWidth >= 0.3 else { continue }
            let y = top + (levels - Double(node.level)) * barHeight
            let share = graph.total > .zero ? Self.milliseconds(node.total) / Self.milliseconds(graph.total) * 100 : 0
            var title = "\(node.label)\ntotal \(Self.format(node.total)) (\(Self.fixed(share, 1))%)"
            title += ", self \(Self.format(node.selfTime))"
            switch node.kind {
            case .resolve: title += ", resolved \(node.count)×"
            case .factory: title += ", built \(node.count)×"
            case .hooks: title += ", ran \(node.count)×"
            }
            if let error = node.error { title += "\nthrew: \(error)" }
            svg += "<g><title>\(Self.xmlEscaped(title))</title>"
            svg += "<rect x=\"\(Self.fixed(x[index], 2))\" y=\"\(Self.fixed(y, 1))\" "
            svg += "width=\"\(Self.fixed(barWidth, 2))\" height=\"\(Self.fixed(barHeight - 1, 1))\" "
            svg += "fill=\"\(Self.color(of: node))\" rx=\"2\"/>"
            let characters = Int((barWidth - 6) / 6.7)
            if characters >= 3 {
                let text = node.label.count <= characters ? node.label : String(node.label.prefix(characters - 1)) + "…"
                svg += "<text x=\"\(Self.fixed(x[index] + 3, 2))\" y=\"\(Self.fixed(y + barHeight - 5, 1))\">"
                svg += "\(Self.xmlEscaped(text))</text>"
            }
            svg += "</g>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    /// Warm colours for factories, chosen by name so a service keeps its colour; blue for hooks; grey for resolves.
    private static func color(of node: FlameGraph.Node) -> String {
        switch node.kind {
        case .resolve:
            return node.error == nil ? "hsl(40, 8%, 78%)" : "hsl(0, 70%, 62%)"
        case .hooks:
            return "hsl(205, 60%, \(72 + stableHash(node.label) % 10)%)"
        case .factory:
            let hash = stableHash(node.label)
            return "hsl(\(12 + hash % 38), \(70 + hash / 38 % 20)%, \(58 + hash / 760 % 10)%)"
        }
    }

    /// FNV-1a of the UTF-8 bytes: the same in every run (`hashValue` is seeded per process).
    private static func stableHash(_ text: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return Int(hash % 1_000_003)
    }

    static func xmlEscaped(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

/// The spans of a profile merged by path: one node for each distinct stack of labels.
struct FlameGraph {
    struct Node {
        let label: String
        let kind: ResolutionProfile.Span.Kind
        let level: Int
        var total = Duration.zero
        var selfTime = Duration.zero
        var count = 0
        var error: (any Error)?
        var children: [Int] = []
    }

    /// The root, which stands for everything, first; every node after its parent.
    private(set) var nodes: [Node]
    var total: Duration { nodes[0].total }
    private(set) var maxLevel = 0

    init(_ profile: ResolutionProfile) {
        nodes = [Node(label: "all", kind: .resolve, level: 0)]
        var nodeOfSpan: [Int] = []
        nodeOfSpan.reserveCapacity(profile.spans.count)
        var childIndex: [Int: [String: Int]] = [:]
        for span in profile.spans {
            let parent = span.parent.map { nodeOfSpan[$0] } ?? 0
            let label =
                switch span.kind {
                case .resolve: "resolve \(span.key)"
                case .factory: "\(span.key)"
                case .hooks: "\(span.key) · initCompleted"
                }
            let node: Int
            if let existing = childIndex[parent]?[label] {
                node = existing
            } else {
                node = nodes.count
                let level = nodes[parent].level + 1
                maxLevel = max(maxLevel, level)
                nodes.append(Node(label: label, kind: span.kind, level: level))
                nodes[parent].children.append(node)
                childIndex[parent, default: [:]][label] = node
            }
            nodeOfSpan.append(node)
            nodes[node].total += span.duration
            nodes[node].selfTime += span.selfTime
            nodes[node].count += 1
            if let error = span.error { nodes[node].error = error }
            if span.parent == nil { nodes[0].total += span.duration }
        }
    }
}
