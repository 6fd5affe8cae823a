extension ResolutionProfile {
    /// The registrations that cost the most, slowest self time first, with their counts, self and total times, and
    /// the path that first built them; then the resolves that failed. Fits a terminal 100 columns wide.
    ///
    /// ```text
    /// Resolution profile: 1 resolve, 5 instances built, 2 reused, in 61.8 ms
    /// Slowest first. self: its factories and hooks, less what they resolved; total: with it.
    ///
    ///       self      total  built  reused  service
    ///    40.5 ms    40.5 ms      1       0  Database
    ///             first built by AppModel → Repository → Database
    /// ```
    public var description: String {
        description(limit: 25)
    }

    /// ``description``, listing at most `limit` registrations.
    public func description(limit: Int) -> String {
        let width = 100
        let built = instanceCount
        let reused = entries.reduce(0) { $0 + $1.reuseCount }
        var lines = [
            "Resolution profile: \(resolveCount) resolve\(resolveCount == 1 ? "" : "s"), \(built) instance"
                + "\(built == 1 ? "" : "s") built, \(reused) reused, in \(Self.format(duration))",
            "Slowest first. self: its factories and hooks, less what they resolved; total: with it.",
            "",
        ]
        if entries.isEmpty {
            lines.append("Nothing was built.")
        } else {
            lines.append(Self.row("self", "total", "built", "reused", "service"))
        }
        // Each key described once: paths repeat keys, and `String(describing:)` of a type is slow.
        var names: [ServiceKey: String] = [:]
        func name(_ key: ServiceKey) -> String {
            if let name = names[key] { return name }
            let name = key.description
            names[key] = name
            return name
        }
        let indent = String(repeating: " ", count: 12)
        for entry in entries.prefix(limit) {
            lines.append(
                Self.clipped(
                    Self.row(
                        Self.format(entry.selfTime), Self.format(entry.totalTime), "\(entry.count)",
                        "\(entry.reuseCount)", name(entry.key)),
                    to: width))
            if entry.firstPath.count > 1 {
                let path = entry.firstPath.map(name).joined(separator: " → ")
                let label = "first built by "
                lines.append(indent + label + Self.clippedFromStart(path, to: width - indent.count - label.count))
            }
        }
        if entries.count > limit {
            lines.append("… and \(entries.count - limit) more (profile.entries lists them all)")
        }
        if !failures.isEmpty {
            lines.append("")
            lines.append("Failed:")
            for failure in failures {
                lines.append(Self.clipped("  resolve \(failure.key) threw:", to: width))
                for line in "\(failure.error)".split(separator: "\n", omittingEmptySubsequences: false).prefix(6) {
                    lines.append(Self.clipped("    " + line, to: width))
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func row(
        _ selfTime: String, _ total: String, _ built: String, _ reused: String, _ key: String
    )
        -> String
    {
        padded(selfTime, 10) + padded(total, 11) + padded(built, 7) + padded(reused, 8) + "  " + key
    }

    private static func padded(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    private static func clipped(_ text: String, to width: Int) -> String {
        text.count <= width ? text : String(text.prefix(width - 1)) + "…"
    }

    private static func clippedFromStart(_ text: String, to width: Int) -> String {
        text.count <= width ? text : "…" + String(text.suffix(width - 1))
    }

    /// `850 ns`, `12.4 µs`, `3.07 ms`, `1.25 s`: three significant figures.
    static func format(_ duration: Duration) -> String {
        let nanoseconds = Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
        let (value, unit): (Double, String) =
            switch abs(nanoseconds) {
            case ..<1e3: (nanoseconds, "ns")
            case ..<1e6: (nanoseconds / 1e3, "µs")
            case ..<1e9: (nanoseconds / 1e6, "ms")
            default: (nanoseconds / 1e9, "s")
            }
        let digits = abs(value) >= 100 || unit == "ns" ? 0 : abs(value) >= 10 ? 1 : 2
        return "\(fixed(value, digits)) \(unit)"
    }

    /// `value` with `digits` decimals, without Foundation.
    static func fixed(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        let sign = value < 0 && scaled > 0 ? "-" : ""
        guard digits > 0 else { return sign + "\(whole)" }
        let fraction = String(Int(scaled - Double(whole) * scale))
        return sign + "\(whole)." + String(repeating: "0", count: digits - fraction.count) + fraction
    }

    /// Milliseconds as a plain number, for JSON and SVG.
    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
    }
}
