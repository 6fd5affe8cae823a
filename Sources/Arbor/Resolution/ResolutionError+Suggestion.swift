extension ResolutionError {
    /// For ``Reason/notRegistered`` of a named key: the registered alternative whose name is nearest the asked-for
    /// one (another case, a typo), with the same argument types — the first of the nearest, nearest container first —
    /// and how the names differ.
    var suggestion: (key: ServiceKey, difference: String)? {
        guard let name = key.name?.lowercased() else { return nil }
        var best: (key: ServiceKey, distance: Int)?
        for candidate in registeredAlternatives where candidate.argumentsType == key.argumentsType {
            guard let other = candidate.name?.lowercased() else { continue }
            if other == name { return (candidate, "The names differ only in case.") }
            // A slip of a letter or two; short names differ in too few letters to be mistaken for each other.
            let shorter = min(name.count, other.count)
            let limit = min(shorter >= 8 ? 2 : shorter >= 4 ? 1 : 0, (best?.distance ?? 3) - 1)
            guard limit > 0 else { continue }
            let distance = Self.editDistance(name, other, atMost: limit)
            if distance <= limit { best = (candidate, distance) }
        }
        return best.map { ($0.key, "The names are spelled nearly the same.") }
    }

    /// The edit distance of two strings, by characters, with two letters swapped counting as one edit (the optimal
    /// string alignment distance); anything over `limit` comes back as `limit + 1`.
    static func editDistance(_ first: String, _ second: String, atMost limit: Int) -> Int {
        let first = Array(first)
        let second = Array(second)
        guard abs(first.count - second.count) <= limit else { return limit + 1 }
        // Rows of the table: `previous` for the characters of `first` before this one, `beforePrevious` one fewer.
        var beforePrevious: [Int] = []
        var previous = Array(0...second.count)
        for (row, character) in first.enumerated() {
            var current = [row + 1] + Array(repeating: 0, count: second.count)
            for column in second.indices {
                var best = min(
                    previous[column] + (character == second[column] ? 0 : 1), previous[column + 1] + 1,
                    current[column] + 1)
                if row > 0, column > 0, character == second[column - 1], first[row - 1] == second[column] {
                    best = min(best, beforePrevious[column - 1] + 1)
                }
                current[column + 1] = best
            }
            guard current.min()! <= limit else { return limit + 1 }
            (beforePrevious, previous) = (previous, current)
        }
        return min(previous[second.count], limit + 1)
    }
}
