import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A small seedable random number generator (SplitMix64, Steele, Lea and Flood 2014) for the randomized suites.
///
/// Every random choice goes through the helpers below, which reduce `next()` themselves instead of calling the
/// standard library's `Int.random(in:using:)`, whose algorithm may change between releases: a printed seed rebuilds
/// the same graph and the same operations on any toolchain.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `range` (the modulo bias is far below anything a test could notice).
    mutating func int(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next() % span)
    }

    mutating func int(in range: Range<Int>) -> Int {
        int(in: range.lowerBound...(range.upperBound - 1))
    }

    /// `true` with the given probability.
    mutating func chance(_ probability: Double) -> Bool {
        Double(next() >> 11) / Double(UInt64(1) << 53) < probability
    }

    mutating func pick<Element>(_ items: [Element]) -> Element {
        items[int(in: 0..<items.count)]
    }

    /// One of the choices, each as likely as its weight.
    mutating func weighted<Element>(_ choices: [(Element, Int)]) -> Element {
        var roll = int(in: 0..<choices.reduce(0) { $0 + $1.1 })
        for (choice, weight) in choices {
            if roll < weight { return choice }
            roll -= weight
        }
        return choices[choices.count - 1].0
    }

    mutating func shuffle<Element>(_ items: inout [Element]) {
        guard items.count > 1 else { return }
        for index in stride(from: items.count - 1, to: 0, by: -1) {
            items.swapAt(index, int(in: 0...index))
        }
    }

    /// A seed for the `stream`-th sub-generator of `seed`: graph `n` of a run, thread `n` of a soak.
    static func derive(_ seed: UInt64, _ stream: UInt64) -> UInt64 {
        var generator = SplitMix64(seed: seed ^ (stream &* 0xD1B5_4A32_D192_ED03))
        _ = generator.next()
        return generator.next()
    }
}

/// Seeds and sizes of the randomized suites, from the environment so a failure can be replayed.
///
/// - `ARBOR_SEED`: the base seed of every randomized suite (decimal or `0x…`). Unset: a fresh seed, printed.
/// - `ARBOR_GRAPH_SEED`: run a single graph with this seed (printed in every failure message).
/// - `ARBOR_GRAPHS`: how many graphs the property and fault-injection suites run (default 1,000 and 500; a quarter
///   of that under a sanitizer).
/// - `ARBOR_SOAK=long`: the soak runs 20 times as many operations, the memory loop 10 times as many resolves.
/// - `ARBOR_TRACE=1`: the randomized suites print every operation with the real and the expected outcome.
enum TestEnvironment {
    static func value(_ name: String) -> String? {
        guard let text = ProcessInfo.processInfo.environment[name], !text.isEmpty else { return nil }
        return text
    }

    static func parseSeed(_ text: String) -> UInt64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if trimmed.hasPrefix("0x") { return UInt64(trimmed.dropFirst(2), radix: 16) }
        return UInt64(trimmed)
    }

    /// The base seed: `ARBOR_SEED` if set, otherwise a random one.
    static var baseSeed: UInt64 {
        if let text = value("ARBOR_SEED"), let seed = parseSeed(text) { return seed }
        var system = SystemRandomNumberGenerator()
        return system.next()
    }

    /// `ARBOR_GRAPH_SEED`, if set: the one graph to replay.
    static var singleGraphSeed: UInt64? {
        value("ARBOR_GRAPH_SEED").flatMap(parseSeed)
    }

    static func count(_ name: String, default fallback: Int) -> Int {
        value(name).flatMap { Int($0) }.map { max(1, $0) } ?? fallback
    }

    static var isLongSoak: Bool { value("ARBOR_SOAK")?.lowercased() == "long" }

    /// Whether a sanitizer runtime is linked in (`swift test --sanitize=…`). Sanitizers slow single-threaded code
    /// down several times and keep freed memory in quarantine, so the randomized suites run fewer graphs there
    /// (the plain run covers the count) and the resident-set check is skipped.
    static let runsUnderSanitizer: Bool = {
        #if canImport(Glibc)
        guard let handle = dlopen(nil, RTLD_NOW) else { return false }
        defer { dlclose(handle) }
        let names: [String] = ["__asan_init", "__tsan_init", "__msan_init"]
        return names.contains { name in dlsym(handle, name) != nil }
        #else
        return false
        #endif
    }()

    static func hex(_ seed: UInt64) -> String {
        "0x" + String(seed, radix: 16, uppercase: false)
    }
}
