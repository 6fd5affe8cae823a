import ArborPrimitives
import Foundation
import Testing

/// An object readers find through a shared word, without a lock and without retaining it, as Arbor's look-up caches
/// find registrations. `isFreed` is set just before it is released: a reader that sees it set used a freed object.
private final class RCObject: @unchecked Sendable {
    let generation: Int
    private let state = AtomicWord(0)
    init(generation: Int) { self.generation = generation }
    deinit { state.deallocate() }
    var isFreed: Bool { state.load() == 1 }
    func markFreed() { state.store(1) }
}

/// The word readers find the current object through (its address), and the objects retired but not yet freed.
private final class RCShared: @unchecked Sendable {
    let current = AtomicWord(0)
    deinit { current.deallocate() }
}

@Suite struct ReclamationTests {
    @Test func aQuiescentDomainHasNoReaderInsideAndNestingHoldsItUp() {
        let reclamation = Reclamation()
        let reader = Reclamation.Reader(of: reclamation)
        #expect(reclamation.readerCount == 1)
        #expect(reclamation.isQuiescent(7))
        reader.enter(7)
        #expect(!reclamation.isQuiescent(7))
        #expect(reclamation.isQuiescent(8), "a reader in domain 7 holds up domain 7 only")
        reader.enter(7)  // nested, same domain
        reader.exit()
        #expect(!reclamation.isQuiescent(7), "the outer section is still open")
        reader.enter(8)  // nested, another domain: the reader now holds up every domain
        #expect(!reclamation.isQuiescent(7) && !reclamation.isQuiescent(8) && !reclamation.isQuiescent(9))
        reader.exit()
        reader.exit()
        #expect(reclamation.isQuiescent(7) && reclamation.isQuiescent(8) && reclamation.isQuiescent(9))
    }

    @Test func aReaderThatGoesAwayHoldsNothingUp() {
        let reclamation = Reclamation()
        do {
            let reader = Reclamation.Reader(of: reclamation)
            reader.enter(5)
            #expect(!reclamation.isQuiescent(5))
            reader.exit()
        }
        #expect(reclamation.readerCount == 0)
        #expect(reclamation.isQuiescent(5))
    }

    /// Readers on three threads keep finding the current object through the shared word and using it, unretained,
    /// while a writer replaces it and frees each replaced object as soon as `isQuiescent` says it may. No reader
    /// ever uses a freed object (under AddressSanitizer a use after free would also stop the test).
    @Test func noReaderEverUsesAnObjectTheWriterFreed() {
        let reclamation = Reclamation()
        let shared = RCShared()
        let domain = 42
        let stop = AtomicWord(0)
        let violations = AtomicWord(0)
        let reads = AtomicWord(0)
        defer {
            stop.deallocate()
            violations.deallocate()
            reads.deallocate()
        }
        var generation = 0
        shared.current.storeInTotalOrder(Int(bitPattern: Unmanaged.passRetained(RCObject(generation: 0)).toOpaque()))

        let finished = startReaders(3, of: reclamation, until: stop) { reader in
            reader.enter(domain)
            let address = shared.current.loadInTotalOrder()
            if let pointer = UnsafeRawPointer(bitPattern: address) {
                let object = Unmanaged<RCObject>.fromOpaque(pointer)
                let freed = object._withUnsafeGuaranteedRef { $0.isFreed || $0.generation < 0 }
                if freed { _ = violations.fetchAdd(1) }
            }
            reader.exit()
            _ = reads.fetchAdd(1)
            sched_yield()  // Mostly outside a section, as a resolving thread is between resolves.
        }

        // The writer: replace, retire, free when quiescent; until it has freed enough, for 5 seconds at most — or
        // up to 60 while it has nothing to show yet: the suites run side by side, and on a loaded machine the
        // readers may wait seconds for a core.
        var retired: [Unmanaged<RCObject>] = []
        var freedCount = 0
        let writerStarted = Date()
        func goesOn() -> Bool {
            let elapsed = Date().timeIntervalSince(writerStarted)
            if freedCount == 0 || reads.load() <= 1_000 { return elapsed < 60 }
            return elapsed < 5 && (freedCount < 2_000 || reads.load() < 20_000)
        }
        while goesOn() {
            generation += 1
            let next = Unmanaged.passRetained(RCObject(generation: generation))
            let old = shared.current.loadInTotalOrder()
            shared.current.storeInTotalOrder(Int(bitPattern: next.toOpaque()))
            retired.append(Unmanaged<RCObject>.fromOpaque(UnsafeRawPointer(bitPattern: old)!))
            if reclamation.isQuiescent(domain) {
                for object in retired {
                    object._withUnsafeGuaranteedRef { $0.markFreed() }
                    object.release()
                }
                freedCount += retired.count
                retired = []
            }
        }
        stop.store(1)
        #expect(finished.wait(timeout: .now() + 10) == .success)
        // Everyone is gone: what is left may be freed now.
        #expect(reclamation.isQuiescent(domain))
        for object in retired { object.release() }
        Unmanaged<RCObject>.fromOpaque(UnsafeRawPointer(bitPattern: shared.current.load())!).release()

        #expect(violations.load() == 0, "\(violations.load()) reads used an object the writer had freed")
        #expect(reads.load() > 1_000, "the readers did not get going (\(reads.load()) reads)")
        #expect(freedCount > 0, "the writer never found the domain quiescent, so the test proved nothing")
    }
}
