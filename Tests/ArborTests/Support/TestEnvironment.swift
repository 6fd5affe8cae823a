import ArborTestSupport
import Foundation

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
    static var runsUnderSanitizer: Bool { ArborTestSupport.runsUnderSanitizer }

    static func hex(_ seed: UInt64) -> String {
        "0x" + String(seed, radix: 16, uppercase: false)
    }
}
