extension ResolutionProfile {
    /// The profile as Chrome trace-event JSON, which Perfetto (ui.perfetto.dev) and `chrome://tracing` open: each
    /// top-level resolve, factory and hook run as a slice, on the track of the thread (synchronous resolves) or the
    /// task (`async` ones) it ran on, nested as the resolution nested.
    ///
    /// ```swift
    /// try profile.chromeTraceJSON().write(toFile: "startup.json", atomically: true, encoding: .utf8)
    /// ```
    ///
    /// The slices' `args` hold the key, the scope and, for a resolve, its container and the error it threw.
    /// Timestamps are microseconds since the profile began.
    public func chromeTraceJSON() -> String {
        var events: [String] = []
        events.append(#"{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"Arbor"}}"#)
        for (number, name) in trackNames.enumerated() {
            events.append(
                #"{"name":"thread_name","ph":"M","pid":1,"tid":\#(number + 1),"args":{"name":\#(Self.json(name))}}"#)
        }
        for span in spans {
            let name: String
            var args = [#""key":\#(Self.json(span.key.description))"#]
            switch span.kind {
            case .resolve:
                name = "resolve \(span.key)"
                args.append(#""async":\#(span.isAsync)"#)
                if let container = span.container { args.append(#""container":\#(Self.json(container))"#) }
                if let error = span.error { args.append(#""error":\#(Self.json("\(error)"))"#) }
            case .factory:
                name = "\(span.key)"
            case .hooks:
                name = "\(span.key) initCompleted"
            }
            args.append(#""self_ms":\#(Self.fixed(Self.milliseconds(span.selfTime), 3))"#)
            let category =
                switch span.kind {
                case .resolve: "resolve"
                case .factory: "factory"
                case .hooks: "hooks"
                }
            events.append(
                #"{"name":\#(Self.json(name)),"cat":"\#(category)","ph":"X","#
                    + #""ts":\#(Self.fixed(Self.milliseconds(span.start) * 1000, 3)),"#
                    + #""dur":\#(Self.fixed(Self.milliseconds(span.duration) * 1000, 3)),"#
                    + #""pid":1,"tid":\#(span.track + 1),"args":{\#(args.joined(separator: ","))}}"#)
        }
        return "{\"traceEvents\":[\n" + events.joined(separator: ",\n")
            + "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"Arbor\"}}\n"
    }

    /// `text` as a JSON string literal.
    static func json(_ text: String) -> String {
        var escaped = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }
}
