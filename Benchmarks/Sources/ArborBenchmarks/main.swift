import Foundation

// Compares Arbor with Swinject and with hand-written wiring.
//
//     swift run -c release --package-path Benchmarks [ArborBenchmarks [--quick] [--filter <substring>]]
//
// --quick               shorter repetitions, for CI smoke runs (a few seconds)
// --filter <substring>  only the scenarios whose name contains <substring> (or the one it names exactly)
// --count <iterations> --library <name>
//                       no timing: runs each chosen scenario's loop once, that many times, for one library;
//                       for counting instructions, which are repeatable where time is not:
//
//     valgrind --tool=callgrind ArborBenchmarks --filter request_scope --library arbor --count 2000
//
//                       Run it with two counts: the difference, divided by the difference of the counts, is the
//                       cost of one operation without the setup.

let usage = "usage: ArborBenchmarks [--quick] [--filter <substring>] [--count <iterations> --library <name>]"

/// Every library in the report; the first one is the baseline of the "vs manual" column.
let libraries: [any LibraryAdapter] = [ManualAdapter(), SwinjectAdapter(), ArborAdapter()]

// MARK: - Arguments

var settings = MeasurementSettings.full
var mode = "full"
var filter: String?
var count: Int?
var libraryName: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--quick":
        settings = .quick
        mode = "quick"
    case "--filter":
        guard let value = arguments.popFirst() else { fail("--filter needs a value\n\(usage)") }
        filter = value
    case "--count":
        guard let value = arguments.popFirst().flatMap({ Int($0) }), value > 0 else {
            fail("--count needs a positive number\n\(usage)")
        }
        count = value
    case "--library":
        guard let value = arguments.popFirst() else { fail("--library needs a value\n\(usage)") }
        libraryName = value
    case "--help", "-h":
        print(usage)
        exit(0)
    default:
        fail("unknown argument \(argument)\n\(usage)")
    }
}

// A filter that names a scenario exactly picks that one alone (`request_scope`, not `request_scope_per_container`).
let every = allScenarios()
let namedExactly = every.contains { $0.name == filter }
let scenarios = every.filter { scenario in
    guard let filter else { return true }
    return namedExactly ? scenario.name == filter : scenario.name.contains(filter)
}
if scenarios.isEmpty {
    fail("no scenario matches --filter \(filter ?? "")")
}

// MARK: - Counting (no timing)

if let count {
    guard let library = libraries.first(where: { $0.name == libraryName }) else {
        fail("--count needs --library, one of: \(libraries.map(\.name).joined(separator: ", "))\n\(usage)")
    }
    for scenario in scenarios {
        guard let benchmark = try? scenario.prepare(library) else { continue }  // Not supported by the library.
        let sample = try benchmark.run(count)
        print("\(scenario.name) / \(library.name): \(count) iterations, checksum \(sample.checksum)")
    }
    exit(0)
}

// MARK: - Running

var results: [ScenarioResult] = []
for scenario in scenarios {
    var measurements: [(library: String, result: Result<Measurement, any Error>)] = []
    for library in libraries {
        printToStandardError("running \(scenario.name) / \(library.name)")
        measurements.append(
            (library.name, Result { try measure(scenario.prepare(library), settings: settings) }))
    }
    results.append(ScenarioResult(scenario: scenario, measurements: measurements))
}

// MARK: - Report

print(
    """
    Arbor benchmarks (\(mode): \(settings.repetitions) repetitions of ~\(settings.targetNanoseconds / 1_000_000) \
    ms each, after calibration and one warm-up repetition)
    median, min     nanoseconds per operation over the repetitions: per resolve; per registration in
                    register_1000; wall time / resolves by both threads in concurrent_graph_10
    vs manual       median / median of manual in the same scenario (lower is better)
    vs swinject     swinject median / this median (above 1: faster than Swinject)
    speedup         throughput with 2 threads / throughput of the same loop on the first of them
                    alone, the two measured alternately (median over the repetitions)

    """)
let report = Report(results: results, baselineLibrary: libraries[0].name, comparedLibrary: "swinject")
print(report.table)
print("")
print("checksum: \(report.checksum)")
if report.failures > 0 {
    fail("\(report.failures) benchmark(s) failed", status: 1)
}

// MARK: - Helpers

/// The measurements of one scenario, one per library, in library order.
struct ScenarioResult {
    var scenario: Scenario
    var measurements: [(library: String, result: Result<Measurement, any Error>)]

    func median(of library: String) -> Double? {
        let measurement = measurements.first { $0.library == library }
        return (try? measurement?.result.get())?.medianNanosecondsPerOperation
    }
}

/// The plain-text table of all results.
struct Report {
    var table = ""
    var checksum: UInt64 = 0
    var failures = 0

    init(results: [ScenarioResult], baselineLibrary: String, comparedLibrary: String) {
        let header = ["scenario", "library", "median ns/op", "min ns/op", "vs manual", "vs swinject", "notes"]
        var rows: [[String]] = []
        for result in results {
            for (library, outcome) in result.measurements {
                let measurement: Measurement
                switch outcome {
                case .success(let value):
                    measurement = value
                case .failure(let error as NotSupported):
                    rows.append([result.scenario.name, library, "n/a", "", "", "", "\(error)"])
                    continue
                case .failure(let error):
                    failures += 1
                    rows.append([result.scenario.name, library, "FAILED", "", "", "", "\(error)"])
                    continue
                }
                checksum &+= measurement.checksum
                let median = measurement.medianNanosecondsPerOperation
                var row = [
                    result.scenario.name, library, format(median),
                    format(measurement.minimumNanosecondsPerOperation),
                    result.median(of: baselineLibrary).map { format(median / $0, digits: 2) + "x" } ?? "",
                ]
                if library != baselineLibrary, library != comparedLibrary,
                    let compared = result.median(of: comparedLibrary)
                {
                    row.append(format(compared / median, digits: 2) + "x")
                } else {
                    row.append("")
                }
                let speedup = measurement.speedup.map { "speedup \(format($0, digits: 2))x vs 1 thread" }
                row.append(([speedup].compactMap { $0 } + measurement.notes).joined(separator: "; "))
                rows.append(row)
            }
        }
        table = Self.render([header] + rows)
    }

    /// Text columns left-aligned, numbers right-aligned, a rule under the header.
    private static func render(_ rows: [[String]]) -> String {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column < 2 || column == cells.count - 1 ? cell + padding : padding + cell
            }
            .joined(separator: "  ")
            .trimmingCharacters(in: .whitespaces)
        }
        let rule = widths.map { String(repeating: "-", count: $0) }
        return ([line(rows[0]), line(rule)] + rows.dropFirst().map(line)).joined(separator: "\n")
    }
}

private func format(_ value: Double, digits: Int = 1) -> String {
    String(format: "%.\(digits)f", value)
}

func printToStandardError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Exits with `status`: 2 for a usage error, 1 for a failed benchmark.
func fail(_ message: String, status: Int32 = 2) -> Never {
    printToStandardError(message)
    exit(status)
}
