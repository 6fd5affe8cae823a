internal import ArborPrimitives

/// The registrations one thread found lately, so a resolve that finds one again takes no lock.
///
/// A slot remembers a key, the container the look-up started in, that container's version, and what the look-up
/// found: the entry, its owner, and the starting container's settings. A container gets a new version, a number
/// never used before by any container, whenever its registrations, settings or an ancestor's registrations
/// change, so a slot is valid exactly while its version is the container's current one; comparing versions also
/// tells containers apart.
///
/// Slots refer to entries and owners unretained, in every build: a container frees an entry that left its registry only once no
/// thread resolves in its tree (``Reclamation``), and an owner is the starting container or one of its
/// ancestors, which the caller keeps alive. So a hit retains nothing and writes nothing shared: threads resolving
/// the same services do not slow each other down.
///
/// Measured (callgrind, per resolve of a transient without dependencies): the look-up under the container's
/// lock cost about 600 instructions; a hit costs about 40. Two threads resolving a 10-node graph from one container
/// went from 0.6x to 1.8–1.9x the throughput of one.
final class LookupCache {
    struct Slot {
        /// The starting container's version when the slot was filled; 0 for an empty slot (no version is 0).
        var version = 0
        var serviceType = ObjectIdentifier(Never.self)
        var argumentsType = ObjectIdentifier(Never.self)
        var name: String?
        var entry: Unretained<ServiceEntry>?
        var owner: Unretained<Container>?
        var depthLimit = 0
        var isClosed = false
        /// Strong: the container may replace it meanwhile; the slot's version then no longer matches.
        var diagnostics: Diagnostics?
    }

    private static let capacity = 256
    private let slots: UnsafeMutablePointer<Slot>
    /// The thread's announcements: the root of the tree it resolves in, while it is inside a top-level resolve, so
    /// that a container knows when the registrations it replaced may be freed (``Reclamation``).
    let reader = Reclamation.Reader()

    init() {
        slots = .allocate(capacity: Self.capacity)
        slots.initialize(repeating: Slot(), count: Self.capacity)
    }

    deinit {
        slots.deinitialize(count: Self.capacity)
        slots.deallocate()
    }

    /// Marks the thread as resolving in `container`'s tree, before it looks anything up. Pair with
    /// `endResolving()`. A factory may call a container's `resolve`: sections nest.
    @inline(__always)
    func beginResolving(in container: Container) {
        reader.enter(container.root)
    }

    @inline(__always)
    func endResolving() {
        reader.exit()
    }

    /// A valid look-up the cache holds: read what you need from it before resolving anything else, which may reuse
    /// its slot.
    struct Hit {
        fileprivate let slot: UnsafeMutablePointer<Slot>

        /// The registration found, and its owner.
        var found: Found {
            Found(entry: Unretained(retaining: slot.pointee.entry!), owner: Unretained(retaining: slot.pointee.owner!))
        }
        /// The depth limit of the container the look-up started in.
        var depthLimit: Int { slot.pointee.depthLimit }
        /// Whether the container the look-up started in was closed.
        var isClosed: Bool { slot.pointee.isClosed }
        /// What watches the container the look-up started in: usually nothing. Copied only when there is one:
        /// copying `nil` still calls the runtime to retain and release it.
        var diagnostics: Diagnostics? {
            isWatched ? copyOfDiagnostics() : nil
        }

        /// Out of line, so the optimiser cannot fold the `nil` case into an unconditional retain (measured: it did,
        /// ten instructions on every cached resolve).
        @inline(never)
        private func copyOfDiagnostics() -> Diagnostics? { slot.pointee.diagnostics }
        /// Whether anything watches it, read without retaining it.
        var isWatched: Bool {
            // A pattern, not `!= nil`: the comparison copied the reference, a retain and a release.
            if case .none = slot.pointee.diagnostics { return false }
            return true
        }
    }

    /// The look-up of `key` from `container`, if a slot holds a valid one.
    ///
    /// The cache is two-way set associative: a key has two slots, the one it was stored in last first.
    @inline(__always)
    func hit(_ key: ServiceKey, in container: Container) -> Hit? {
        hit(key, in: Unretained(container, retainedInChecks: false))
    }

    /// `hit(_:in:)` for a container the caller keeps alive without retaining it.
    @inline(__always)
    func hit(_ key: ServiceKey, in container: Unretained<Container>) -> Hit? {
        hit(key, in: container, version: container.withObject { $0.version }.loadInTotalOrder())
    }

    /// `hit(_:in:)` for `container`, whose current version is `version`.
    @inline(__always)
    func hit(_ key: ServiceKey, in container: Unretained<Container>, version: Int) -> Hit? {
        let first = slots + Self.index(key, container.toOpaque())
        if Self.matches(first, key, version) { return Hit(slot: first) }
        let second = first + 1
        if Self.matches(second, key, version) { return Hit(slot: second) }
        return nil
    }

    @inline(__always)
    private static func matches(_ slot: UnsafeMutablePointer<Slot>, _ key: ServiceKey, _ version: Int) -> Bool {
        slot.pointee.version == version && holds(key, slot)
    }

    /// Whether `slot` holds a look-up of `key`, from whichever container and version.
    @inline(__always)
    private static func holds(_ key: ServiceKey, _ slot: UnsafeMutablePointer<Slot>) -> Bool {
        slot.pointee.serviceType == ObjectIdentifier(key.serviceType)
            && slot.pointee.argumentsType == ObjectIdentifier(key.argumentsType)
            && slot.pointee.name == key.name
    }

    /// Remembers a look-up, in the first of the key's two slots; what that slot held moves to the second, unless it
    /// is a look-up of the same key (from another container, or an older version), which the new one replaces.
    ///
    /// Why the exception: a server's request children are made one after the other at the same address, as a rule,
    /// and each looks up the values registered in it (the request's user) once, into the same two slots. Pushed
    /// down, the last request's look-up, valid never again, evicted whatever shared the slots with it — on every
    /// other request an app-wide service's look-up, taken again under the locks: a lottery of where the binary's
    /// types and the allocator's blocks lie (measured: `request_scope` 15,590 or 16,040 instructions by build, the
    /// difference a look-up from the root a request).
    ///
    /// `version` is the starting container's version read before the look-up began, so a change that raced with
    /// it leaves the slot stale rather than wrong.
    func store(_ key: ServiceKey, in container: Container, version: Int, found: Found, lookup: borrowing Lookup) {
        let slot = slots + Self.index(key, Unretained(container, retainedInChecks: false).toOpaque())
        // Moved, not copied: a copy retained the slot's name and diagnostics and released them again, through the
        // runtime's generic copy (measured: 150 instructions a store, 6 stores in a request_scope).
        // The same key only: a key's names of one length share its slots (the index mixes in the length), and two
        // such names looked up in turn from one container keep a slot each.
        if Self.holds(key, slot) {
            slot.deinitialize(count: 1)
        } else {
            (slot + 1).pointee = slot.move()
        }
        slot.initialize(
            to: Slot(
                version: version, serviceType: ObjectIdentifier(key.serviceType),
                argumentsType: ObjectIdentifier(key.argumentsType), name: key.name,
                entry: Unretained(found.entry.object, retainedInChecks: false),
                owner: Unretained(found.owner, retainedInChecks: false), depthLimit: lookup.depthLimit,
                isClosed: lookup.isClosed,
                diagnostics: lookup.diagnostics))
    }

    /// The first of the two slots of `key` looked up from `container`.
    static func index(_ key: ServiceKey, from container: Container) -> Int {
        index(key, Unretained(container, retainedInChecks: false).toOpaque())
    }

    @inline(__always)
    private static func index(_ key: ServiceKey, _ container: UnsafeMutableRawPointer) -> Int {
        let service = UInt(bitPattern: ObjectIdentifier(key.serviceType))
        let owner = UInt(bitPattern: container)
        var mixed = (service &* 0x9E37_79B9_7F4A_7C15) ^ (owner &* 0xC2B2_AE3D_27D4_EB4F)
        if key.argumentsType != Void.self {
            mixed ^= UInt(bitPattern: ObjectIdentifier(key.argumentsType)) &* 0x1656_67B1_9E37_79F9
        }
        if let name = key.name { mixed ^= UInt(name.utf8.count &+ 1) &* 0x27D4_EB2F_1656_67C5 }
        return Int(truncatingIfNeeded: mixed >> 40) & (capacity - 2)
    }
}
