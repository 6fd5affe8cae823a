import CHeapStatistics
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
    /// Whether the last result stays alive until the next one arrives; not for a weak instance that must die.
    private let keepsLast: Bool

    init(keepsLast: Bool = true) { self.keepsLast = keepsLast }

    @inline(__always)
    func consume(_ object: AnyObject) {
        checksum &+= UInt64(UInt(bitPattern: ObjectIdentifier(object)) >> 4 & 1)
        if keepsLast { last = object }
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
    /// Runs the loop `iterations` times (on each thread) and returns the wall time it took.
    var run: (_ iterations: Int) throws -> Sample
    /// For a concurrent benchmark: the same loop on the first of its worker threads alone, the
    /// baseline of its speed-up.
    var runOnOneThread: ((_ iterations: Int) throws -> Sample)?
    /// What the report's notes column says besides the timing (e.g. heap bytes).
    var notes: [String] = []

    /// Calls `operation` in a loop on the current thread; `keepAlive` stays alive meanwhile, and each result until the
    /// next one arrives, unless `keepingLast` is false.
    static func sequential<Output: AnyObject>(
        operationsPerIteration: Int = 1,
        keepingAlive keepAlive: AnyObject? = nil,
        keepingLast: Bool = true,
        _ operation: @escaping () throws -> Output
    ) -> Benchmark {
        Benchmark(operationsPerIteration: operationsPerIteration, threads: 1) { iterations in
            try withExtendedLifetime(keepAlive) {
                let sink = Sink(keepsLast: keepingLast)
                let start = now()
                for _ in 0..<iterations {
                    sink.consume(try operation())
                }
                let end = now()
                return Sample(nanoseconds: end - start, checksum: sink.checksum)
            }
        }
    }

    /// Calls `operation` in a loop in one task; the calling thread waits for it. The task starts once per run,
    /// outside the timed loop.
    static func sequentialAsync<Output: AnyObject>(
        keepingAlive keepAlive: AnyObject? = nil,
        _ operation: @escaping @Sendable () async throws -> Output
    ) -> Benchmark {
        Benchmark(operationsPerIteration: 1, threads: 1) { iterations in
            try withExtendedLifetime(keepAlive) {
                try runAsync {
                    let sink = Sink()
                    let start = now()
                    for _ in 0..<iterations {
                        sink.consume(try await operation())
                    }
                    let end = now()
                    return Sample(nanoseconds: end - start, checksum: sink.checksum)
                }
            }
        }
    }

    /// Calls `operation` in a loop on `threads` long-lived threads that start together; the time is
    /// the wall time from the start signal until the last thread has finished. The same loop on the
    /// first of those threads alone is the baseline of the speed-up.
    static func concurrent<Output: AnyObject>(
        threads: Int,
        keepingAlive keepAlive: AnyObject? = nil,
        _ operation: @escaping @Sendable () throws -> Output
    ) -> Benchmark {
        let workers = Workers(count: threads, operation: operation)
        var benchmark = Benchmark(operationsPerIteration: 1, threads: threads) { iterations in
            try withExtendedLifetime(keepAlive) { try workers.run(iterations: iterations) }
        }
        benchmark.runOnOneThread = { iterations in
            try withExtendedLifetime(keepAlive) { try workers.run(iterations: iterations, onThreads: 1) }
        }
        return benchmark
    }
}

/// Runs `operation` in a task, and waits on this thread for its result: how the synchronous harness times `async`
/// code.
func runAsync<Output>(_ operation: @escaping @Sendable () async throws -> Output) throws -> Output {
    let outcome = AsyncOutcome<Output>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do {
            outcome.result = .success(try await operation())
        } catch {
            outcome.result = .failure(error)
        }
        done.signal()
    }
    done.wait()
    return try outcome.result!.get()
}

/// The result of an `async` operation, handed to the waiting thread; the semaphore orders the accesses.
private final class AsyncOutcome<Output>: @unchecked Sendable {
    var result: Result<Output, any Error>?
}

/// The result of measuring one benchmark.
struct Measurement {
    var medianNanosecondsPerOperation: Double
    var minimumNanosecondsPerOperation: Double
    var checksum: UInt64
    /// For a concurrent benchmark: the median over the repetitions of its throughput divided by the
    /// throughput of the same loop on one thread, measured right before or after it.
    var speedup: Double?
    /// The benchmark's own notes (`Benchmark.notes`).
    var notes: [String] = []
}

/// Calibrates, warms up and times `benchmark`.
func measure(_ benchmark: Benchmark, settings: MeasurementSettings) throws -> Measurement {
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
        speedup: speedups.isEmpty ? nil : median(speedups),
        notes: benchmark.notes)
}

/// The middle value; the mean of the two middle values for an even count.
private func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Bytes the process has allocated with malloc and not freed (0 where the platform doesn't say).
func heapBytesInUse() -> Int {
    Int(arbor_benchmarks_heap_bytes_in_use())
}

/// Monotonic time in nanoseconds.
@inline(__always)
func now() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

// MARK: - Threads

/// Threads that run one concurrent benchmark's loops: made for the benchmark, reused by every
/// calibration run and repetition, and never ended, so that each library runs on threads of its own.
///
/// Threads ended after their benchmark measured the allocator as much as the library: a new thread
/// takes over the malloc arena of one that ended, and the threads that followed Swinject's ran 5-30x
/// slower in about half the runs, whichever library they ran (hand-written code included); the same
/// happened when one set of threads ran every library. Threads that live until the program exits
/// keep an arena of their own (glibc makes up to eight per core), and measure the steady state an
/// app or server has.
private final class Workers: @unchecked Sendable {
    // @unchecked: `iterations` is written before a `start` is signalled and read after it is waited
    // for; the semaphores order the accesses.
    private let start: [DispatchSemaphore]
    private let finished = DispatchSemaphore(value: 0)
    private let outcomes = ThreadOutcomes()
    private var iterations = 0
    let count: Int

    init<Output: AnyObject>(count: Int, operation: @escaping @Sendable () throws -> Output) {
        self.count = count
        start = (0..<count).map { _ in DispatchSemaphore(value: 0) }
        for index in 0..<count {
            Thread { [self] in  // Each thread keeps the pool alive: both last until the program exits.
                let sink = Sink()
                while true {
                    self.start[index].wait()
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
            }.start()
        }
    }

    /// Runs the loop `iterations` times on each of the first `threads` workers at once (all of them
    /// by default) and returns the wall time from the start signal until the last one has finished.
    ///
    /// The one-thread baseline of the speed-up runs on the first of the workers that run the
    /// concurrent loop, so both run on the same thread and memory: a separate thread ran its loop
    /// up to a third faster or slower from one run of the program to the next (its allocator's
    /// state), and the speed-up with it, by as much for hand-written code as for a library.
    func run(iterations: Int, onThreads threads: Int? = nil) throws -> Sample {
        let threads = threads ?? count
        self.iterations = iterations
        outcomes.removeAll()
        let begin = now()
        for index in 0..<threads { start[index].signal() }
        for _ in 0..<threads { finished.wait() }
        let end = now()
        var checksum: UInt64 = 0
        for outcome in outcomes.all {
            checksum &+= try outcome.get()
        }
        return Sample(nanoseconds: end - begin, checksum: checksum)
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
