import Dispatch
import Foundation

// Timing: a benchmark is an operation run in a loop. The harness calibrates the loop length to a
// target time, runs one warm-up repetition, then times a number of repetitions and reports the
// median and the minimum nanoseconds per operation.

/// How long and how often to measure.
struct MeasurementSettings {
    /// Wall time one repetition should take.
    var targetNanoseconds: UInt64
    /// Timed repetitions per benchmark (odd, so the median is one of them).
    var repetitions: Int

    static let full = MeasurementSettings(targetNanoseconds: 100_000_000, repetitions: 7)
    static let quick = MeasurementSettings(targetNanoseconds: 20_000_000, repetitions: 3)
}

/// Consumes every result of a timed loop so the optimiser cannot delete the work that produced it.
///
/// Storing the object in `last` makes it escape to the heap (no stack promotion, no dead-code
/// elimination of the allocation), and the checksum reads its address. Each thread has its own
/// sink, so there is no shared mutable state; the checksums are added up by the caller.
final class Sink {
    private(set) var checksum: UInt64 = 0
    private var last: AnyObject?

    @inline(__always)
    func consume(_ object: AnyObject) {
        checksum &+= UInt64(UInt(bitPattern: ObjectIdentifier(object)) >> 4 & 1)
        last = object
    }
}

/// One timed run of a benchmark.
struct Sample {
    var nanoseconds: UInt64
    var checksum: UInt64
}

/// A benchmark whose setup is done: `run` does only the work to time.
struct Benchmark {
    /// Operations (resolves, registrations) that one iteration of the loop performs.
    var operationsPerIteration: Int
    /// Threads running the loop at once, each `iterations` times.
    var threads: Int
    /// Ends what the benchmark started (its worker threads), once it has been measured.
    var stop: () -> Void = {}
    /// Runs the loop `iterations` times (on each thread) and returns the wall time it took.
    var run: (_ iterations: Int) throws -> Sample
    /// For a concurrent benchmark: the same loop on one worker thread, the baseline of its speed-up.
    var runOnOneThread: ((_ iterations: Int) throws -> Sample)?

    /// Calls `operation` in a loop on the current thread; `keepAlive` stays alive meanwhile.
    static func sequential<Output: AnyObject>(
        operationsPerIteration: Int = 1,
        keepingAlive keepAlive: AnyObject? = nil,
        _ operation: @escaping () throws -> Output
    ) -> Benchmark {
        Benchmark(operationsPerIteration: operationsPerIteration, threads: 1) { iterations in
            try withExtendedLifetime(keepAlive) {
                let sink = Sink()
                let start = now()
                for _ in 0..<iterations {
                    sink.consume(try operation())
                }
                let end = now()
                return Sample(nanoseconds: end - start, checksum: sink.checksum)
            }
        }
    }

    /// Calls `operation` in a loop on `threads` long-lived threads that start together; the time is
    /// the wall time from the start signal until the last thread has finished. The same loop on one
    /// long-lived thread is the baseline of the speed-up.
    static func concurrent<Output: AnyObject>(
        threads: Int,
        _ operation: @escaping @Sendable () throws -> Output
    ) -> Benchmark {
        let workers = Workers(count: threads, operation: operation)
        let single = Workers(count: 1, operation: operation)
        var benchmark = Benchmark(operationsPerIteration: 1, threads: threads) { iterations in
            try workers.run(iterations: iterations)
        }
        benchmark.runOnOneThread = { iterations in try single.run(iterations: iterations) }
        benchmark.stop = {
            workers.stop()
            single.stop()
        }
        return benchmark
    }
}

/// The result of measuring one benchmark.
struct Measurement {
    var medianNanosecondsPerOperation: Double
    var minimumNanosecondsPerOperation: Double
    var checksum: UInt64
    /// For a concurrent benchmark: the median over the repetitions of its throughput divided by the
    /// throughput of the same loop on one thread, measured right before or after it.
    var speedup: Double?
}

/// Calibrates, warms up and times `benchmark`.
func measure(_ benchmark: Benchmark, settings: MeasurementSettings) throws -> Measurement {
    defer { benchmark.stop() }
    var checksum: UInt64 = 0

    // Calibration (which also warms up): double the loop until it takes a tenth of the target,
    // then scale it to the target.
    var iterations = 1
    while true {
        let sample = try benchmark.run(iterations)
        checksum &+= sample.checksum
        if sample.nanoseconds >= settings.targetNanoseconds / 10 || iterations >= 1 << 40 {
            let scale = Double(settings.targetNanoseconds) / Double(max(sample.nanoseconds, 1))
            iterations = max(1, Int((Double(iterations) * scale).rounded()))
            break
        }
        iterations *= 2
    }

    // One full-length warm-up repetition, discarded.
    checksum &+= try benchmark.run(iterations).checksum
    if let runOnOneThread = benchmark.runOnOneThread {
        checksum &+= try runOnOneThread(iterations).checksum
    }

    let operations = Double(iterations * benchmark.threads * benchmark.operationsPerIteration)
    var nanosecondsPerOperation: [Double] = []
    var speedups: [Double] = []
    for repetition in 0..<settings.repetitions {
        // A concurrent benchmark alternates with its one-thread baseline, in turn first and second, so
        // that both see the same conditions: the speed-up compares the two runs of one repetition.
        var baseline: UInt64?
        if let runOnOneThread = benchmark.runOnOneThread, repetition % 2 == 0 {
            let sample = try runOnOneThread(iterations)
            checksum &+= sample.checksum
            baseline = sample.nanoseconds
        }
        let sample = try benchmark.run(iterations)
        checksum &+= sample.checksum
        nanosecondsPerOperation.append(Double(sample.nanoseconds) / operations)
        if let runOnOneThread = benchmark.runOnOneThread, repetition % 2 == 1 {
            let sample = try runOnOneThread(iterations)
            checksum &+= sample.checksum
            baseline = sample.nanoseconds
        }
        if let baseline {
            // Each thread ran `iterations` loops: the threads did `threads` times the work of one.
            speedups.append(Double(benchmark.threads) * Double(baseline) / Double(max(sample.nanoseconds, 1)))
        }
    }
    return Measurement(
        medianNanosecondsPerOperation: median(nanosecondsPerOperation),
        minimumNanosecondsPerOperation: nanosecondsPerOperation.min()!,
        checksum: checksum,
        speedup: speedups.isEmpty ? nil : median(speedups))
}

/// The middle value; the mean of the two middle values for an even count.
private func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Monotonic time in nanoseconds.
@inline(__always)
private func now() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

// MARK: - Threads

/// Threads that run a concurrent benchmark's loops, made once per benchmark and reused by every
/// calibration run and repetition.
///
/// Starting new threads for each run measured thread start-up and, worse, the allocator's choice
/// of arena for each new thread: two new threads sometimes shared one, and every allocation then
/// contended with the other thread's (a library's result moved by 20x between identical runs).
/// Long-lived workers measure the steady state an app or server has.
private final class Workers: @unchecked Sendable {
    // @unchecked: `iterations` and `stopping` are written before `start` is signalled and read
    // after it is waited for; the semaphores order the accesses.
    private let start = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let outcomes = ThreadOutcomes()
    private var iterations = 0
    private var stopping = false
    let count: Int

    init<Output: AnyObject>(count: Int, operation: @escaping @Sendable () throws -> Output) {
        self.count = count
        for _ in 0..<count {
            Thread { [unowned self] in
                let sink = Sink()
                while true {
                    self.start.wait()
                    if self.stopping { break }
                    do {
                        for _ in 0..<self.iterations {
                            sink.consume(try operation())
                        }
                        self.outcomes.record(.success(sink.checksum))
                    } catch {
                        self.outcomes.record(.failure(error))
                    }
                    self.finished.signal()
                }
                self.finished.signal()
            }.start()
        }
    }

    /// Runs the loop `iterations` times on every worker at once and returns the wall time from the
    /// start signal until the last worker has finished.
    func run(iterations: Int) throws -> Sample {
        self.iterations = iterations
        outcomes.removeAll()
        let begin = now()
        for _ in 0..<count { start.signal() }
        for _ in 0..<count { finished.wait() }
        let end = now()
        var checksum: UInt64 = 0
        for outcome in outcomes.all {
            checksum &+= try outcome.get()
        }
        return Sample(nanoseconds: end - begin, checksum: checksum)
    }

    /// Lets the workers finish.
    func stop() {
        stopping = true
        for _ in 0..<count { start.signal() }
        for _ in 0..<count { finished.wait() }
    }
}

/// What each worker thread reports back: its checksum or its error.
private final class ThreadOutcomes: @unchecked Sendable {
    // @unchecked: every access to `outcomes` holds `lock`.
    private let lock = NSLock()
    private var outcomes: [Result<UInt64, any Error>] = []

    func removeAll() {
        lock.lock()
        defer { lock.unlock() }
        outcomes.removeAll()
    }

    func record(_ outcome: Result<UInt64, any Error>) {
        lock.lock()
        defer { lock.unlock() }
        outcomes.append(outcome)
    }

    var all: [Result<UInt64, any Error>] {
        lock.lock()
        defer { lock.unlock() }
        return outcomes
    }
}
