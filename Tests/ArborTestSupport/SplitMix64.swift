/// A small seedable random number generator (SplitMix64, Steele, Lea and Flood 2014) for the randomized suites of every test target.
///
/// Every random choice goes through the helpers below, which reduce `next()` themselves instead of calling the
/// standard library's `Int.random(in:using:)`, whose algorithm may change between releases: a printed seed rebuilds
/// the same graph and the same operations on any toolchain.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    package private(set) var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `range` (the modulo bias is far below anything a test could notice).
    package mutating func int(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next() % span)
    }

    package mutating func int(in range: Range<Int>) -> Int {
        int(in: range.lowerBound...(range.upperBound - 1))
    }

    /// `true` with the given probability.
    package mutating func chance(_ probability: Double) -> Bool {
        Double(next() >> 11) / Double(UInt64(1) << 53) < probability
    }

    package mutating func pick<Element>(_ items: [Element]) -> Element {
        items[int(in: 0..<items.count)]
    }

    /// One of the choices, each as likely as its weight.
    package mutating func weighted<Element>(_ choices: [(Element, Int)]) -> Element {
        var roll = int(in: 0..<choices.reduce(0) { $0 + $1.1 })
        for (choice, weight) in choices {
            if roll < weight { return choice }
            roll -= weight
        }
        return choices[choices.count - 1].0
    }

    package mutating func shuffle<Element>(_ items: inout [Element]) {
        guard items.count > 1 else { return }
        for index in stride(from: items.count - 1, to: 0, by: -1) {
            items.swapAt(index, int(in: 0...index))
        }
    }

    /// `true` in `percent` of the calls.
    package mutating func percent(_ percent: Int) -> Bool {
        int(in: 0..<100) < percent
    }

    /// A seed for the `stream`-th sub-generator of `seed`: graph `n` of a run, thread `n` of a soak.
    package static func derive(_ seed: UInt64, _ stream: UInt64) -> UInt64 {
        var generator = SplitMix64(seed: seed ^ (stream &* 0xD1B5_4A32_D192_ED03))
        _ = generator.next()
        return generator.next()
    }
}
