import ArborPrimitives
import Foundation
import Testing

/// A value whose box the tests publish.
private final class PVObject: Sendable {
    let generation: Int
    init(generation: Int) { self.generation = generation }
}

@Suite struct PublishedValueTests {
    @Test func aReaderCopiesWhatIsPublishedAndNothingOnceItIsWithdrawn() throws {
        let reclamation = Reclamation()
        let reader = Reclamation.Reader(of: reclamation)
        let publication = PublishedValue()
        defer { publication.deallocate() }
        #expect(throws: PublishedValue.NotPublished.self) {
            try publication.read(as: String.self, protectedBy: reader.hazard)
        }
        let box = StoredValue.make("permanent")
        publication.publish(box)
        #expect(publication.isPublished)
        #expect(try publication.read(as: String.self, protectedBy: reader.hazard) == "permanent")
        publication.withdraw(from: reclamation)
        #expect(!publication.isPublished)
        #expect(throws: PublishedValue.NotPublished.self) {
            try publication.read(as: String.self, protectedBy: reader.hazard)
        }
        publication.withdraw(from: reclamation)  // nothing published: nothing to do
    }

    @Test func aCopyOutlivesTheBoxItCameFrom() throws {
        let reclamation = Reclamation()
        let reader = Reclamation.Reader(of: reclamation)
        let publication = PublishedValue()
        defer { publication.deallocate() }
        var box: StoredValue? = StoredValue.make(PVObject(generation: 7))
        publication.publish(box!)
        let copy = try publication.read(as: PVObject.self, protectedBy: reader.hazard)
        publication.withdraw(from: reclamation)
        box = nil
        #expect(copy.generation == 7, "the reader's copy holds the object, not the box")
    }

    /// A writer that withdraws a box a reader protects returns only once the reader is done with it.
    @Test func withdrawingWaitsForTheReaderThatProtectsTheBox() {
        let reclamation = Reclamation()
        let publication = PublishedValue()
        defer { publication.deallocate() }
        let box = StoredValue.make(1)
        publication.publish(box)
        let address = Int(bitPattern: Unmanaged.passUnretained(box).toOpaque())

        let protected = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let readerDone = DispatchSemaphore(value: 0)
        Thread {
            let reader = Reclamation.Reader(of: reclamation)
            reader.hazard.protect(address)  // inside a read, between protecting and copying
            protected.signal()
            release.wait()
            reader.hazard.unprotect()
            readerDone.signal()
            withExtendedLifetime(reader) {}
        }.start()
        protected.wait()

        let withdrawn = AtomicWord(0)
        defer { withdrawn.deallocate() }
        let writerDone = DispatchSemaphore(value: 0)
        Thread {
            publication.withdraw(from: reclamation)
            withdrawn.store(1)
            writerDone.signal()
        }.start()
        // The writer has had time to return, had it not waited; it must not have.
        #expect(writerDone.wait(timeout: .now() + 0.2) == .timedOut)
        #expect(withdrawn.load() == 0, "withdraw() returned while a reader still protected the box")
        release.signal()
        #expect(writerDone.wait(timeout: .now() + 10) == .success)
        #expect(withdrawn.load() == 1)
        readerDone.wait()
        withExtendedLifetime(box) {}
    }

    /// Readers on three threads keep copying the published object while a writer publishes a new box, withdraws the
    /// old one and frees it at once. Every copy is an object the writer published; a copy from a freed box would read
    /// freed memory, which AddressSanitizer stops and ThreadSanitizer reports as a race with the free (CI runs this
    /// suite under both).
    @Test func noReaderEverCopiesFromABoxTheWriterLetGo() {
        let reclamation = Reclamation()
        let stop = AtomicWord(0)
        let violations = AtomicWord(0)
        let reads = AtomicWord(0)
        // The newest generation published: a copy's generation is never above it, nor below the one before it
        // when the copy began.
        let newest = AtomicWord(0)
        defer {
            stop.deallocate()
            violations.deallocate()
            reads.deallocate()
            newest.deallocate()
        }
        // Two publications, taking turns: one is withdrawn while the other is published, as a storage's box is
        // replaced when its instance is reset and built again.
        let publications = [PublishedValue(), PublishedValue()]
        defer { publications.forEach { $0.deallocate() } }
        var boxes: [StoredValue?] = [StoredValue.make(PVObject(generation: 0)), nil]
        publications[0].publish(boxes[0]!)

        let finished = startReaders(3, of: reclamation, until: stop) { reader in
            for publication in publications {
                let oldest = newest.loadInTotalOrder() - 1
                do throws(PublishedValue.NotPublished) {
                    let object = try publication.read(as: PVObject.self, protectedBy: reader.hazard)
                    let generation = object.generation
                    if generation < oldest || generation > newest.loadInTotalOrder() {
                        _ = violations.fetchAdd(1)
                    }
                    _ = reads.fetchAdd(1)
                } catch {}
            }
        }

        var generation = 0
        let writerStarted = Date()
        func goesOn() -> Bool {
            let elapsed = Date().timeIntervalSince(writerStarted)
            if reads.load() <= 1_000 { return elapsed < 60 }
            return elapsed < 5 && (generation < 5_000 || reads.load() < 20_000)
        }
        while goesOn() {
            generation += 1
            let next = generation % 2
            let previous = 1 - next
            boxes[next] = StoredValue.make(PVObject(generation: generation))
            newest.storeInTotalOrder(generation)
            publications[next].publish(boxes[next]!)
            publications[previous].withdraw(from: reclamation)
            boxes[previous] = nil  // the box, and with it the last reference to its object, freed at once
        }
        stop.store(1)
        #expect(finished.wait(timeout: .now() + 10) == .success)
        publications.forEach { $0.withdraw(from: reclamation) }

        #expect(violations.load() == 0, "\(violations.load()) copies were of no object the writer published then")
        #expect(reads.load() > 1_000, "the readers did not get going (\(reads.load()) reads)")
        #expect(generation > 100, "the writer replaced the box only \(generation) times")
    }
}
