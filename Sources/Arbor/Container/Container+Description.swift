extension Container: CustomStringConvertible {
    /// Lists the container's own registrations, sorted, with their scopes. A type forwarded with
    /// ``Registration/implements(_:name:)`` shows the scope of the registration it forwards to, and which one.
    ///
    /// ```text
    /// Container (2 registrations)
    ///   ReadingStore [permanent, forwards to SQLiteStore]
    ///   SQLiteStore [permanent]
    /// ```
    public var description: String {
        let own = entries
        let scopes = Dictionary(own.map { ($0.key, $0.scope) }, uniquingKeysWith: { first, _ in first })
        let lines = own.map { entry -> String in
            guard let target = entry.forwardTarget else { return "  \(entry.key) [\(entry.scope)]" }
            let scope = scopes[target].map(\.description) ?? "its target is not registered here"
            return "  \(entry.key) [\(scope), forwards to \(target)]"
        }
        .sorted()
        let header =
            "Container (\(lines.count) registration\(lines.count == 1 ? "" : "s")\(parent == nil ? "" : ", with a parent"))"
        return ([header] + lines).joined(separator: "\n")
    }
}
