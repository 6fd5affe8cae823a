extension ResolutionError {
    /// For ``Reason/notRegistered`` of a named key: the registered alternative whose name is nearly the asked-for
    /// one (a typo, another case), with the same argument types, nearest container first; and how the names differ.
    var suggestion: (key: ServiceKey, difference: String)? {
        guard let name = key.name else { return nil }
        for candidate in registeredAlternatives where candidate.argumentsType == key.argumentsType {
            guard let other = candidate.name else { continue }
            if other.lowercased() == name.lowercased() { return (candidate, "The names differ only in case.") }
            // A slip of a letter or two; short names differ in too few letters to be mistaken for each other.
            let limit = min(name.count, other.count) >= 8 ? 2 : min(name.count, other.count) >= 4 ? 1 : 0
            if limit > 0, Self.editDistance(name.lowercased(), other.lowercased(), atMost: limit) <= limit {
                return (candidate, "The names are spelled nearly the same.")
            }
        }
        return nil
    }

    /// The Levenshtein distance of two strings, by characters; anything over `limit` comes back as `limit + 1`.
    static func editDistance(_ first: String, _ second: String, atMost limit: Int) -> Int {
        let first = Array(first)
        let second = Array(second)
        guard abs(first.count - second.count) <= limit else { return limit + 1 }
        var previous = Array(0...second.count)
        for (row, character) in first.enumerated() {
            var current = [row + 1] + Array(repeating: 0, count: second.count)
            for column in second.indices {
                let substitution = previous[column] + (character == second[column] ? 0 : 1)
                current[column + 1] = min(substitution, previous[column + 1] + 1, current[column] + 1)
            }
            guard current.min()! <= limit else { return limit + 1 }
            previous = current
        }
        return min(previous[second.count], limit + 1)
    }
}
