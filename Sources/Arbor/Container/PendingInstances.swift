internal import ArborPrimitives

/// An instance registration (`register(_:instance:)`) that its container keeps as it was given, without the entry and
/// the storage a registration has: a request's values — its user, its identifier — registered in its child before
/// anything looked the child up.
///
/// A resolve of it, while nothing watches, reads the box under the container's lock: a nested one in
/// `Resolution.resolve(_:name:)` (`Container.pendingInstance(_:as:)`), a top-level one in its look-up
/// (`Resolution.lookUpTopLevel`, `Container.pendingBox(_:)`). Everything else that reads the container's registrations
/// files it first, as the entry it would have had (``Registry/fileInstances(in:)``): so it behaves as an instance
/// registration in every way, by construction, and a request that only resolves it pays for neither of the two
/// objects, nor their look-up, cache slot and release. (Measured: `request_values` 7,479 → 4,631 instructions,
/// `request_scope` 15,498 → 12,293, and its distinct instructions of Arbor's code 2,447 → 1,919; every nested resolve
/// checks one word for it, `request_scope_per_container` 19,992 → 20,186. Read at the top level too:
/// `request_value_resolved` 11,188 → 5,003 and 1,982 → 1,073; a top-level look-up the thread's cache does not answer
/// checks the same word, and one it answers nothing.)
///
/// Only an instance registered without a name is kept so: what a request's values are. Each container's registry keeps
/// room for two of these, so they are small: three words, the key derived from the box.
struct PendingInstance {
    /// The instance, boxed as the key's service type.
    let box: StoredValue
    let token: RegistrationToken
    /// `NullaryEntry<Service>.self`, which makes the entry, with a factory that gives `box` back after a reset.
    let entryType: ServiceEntry.Type

    /// The registration's key: its box's type, no name, no arguments.
    var key: ServiceKey { ServiceKey(serviceType: box.valueType, name: nil, argumentsType: Void.self) }

    /// Its build sequence, the order `close()` releases instances in: the number its token took when it was
    /// registered, from the same counter (`UniqueNumber`) as every build's.
    var sequence: UInt64 { UInt64(token.value) }
}

/// The instance registrations a container keeps pending: at most two, the values of a request, in fields of their
/// own. A third files them all (``Container/keepPending(_:)``).
struct PendingInstances {
    private var first: PendingInstance?
    private var second: PendingInstance?
    /// How many there are: what every registration and look-up asks first, an integer compared, not an optional's tag
    /// read. (Not measured apart: the +2.9% on `register_1000` that a first version showed came from accessors on the
    /// registry's table, see `Registry.entries`, and stayed with this count.)
    private var count = 0

    var isEmpty: Bool { count == 0 }

    /// Whether `key` is among them. Every look-up in the container asks: the count inline, the keys out of line.
    @inline(__always)
    func contains(_ key: ServiceKey) -> Bool {
        count > 0 && keysContain(key)
    }

    private func keysContain(_ key: ServiceKey) -> Bool {
        box(for: key) != nil
    }

    /// Adds `instance`, whose key is not among them; `false`, having added nothing, when two are kept already.
    mutating func add(_ instance: PendingInstance) -> Bool {
        internalInvariant(!contains(instance.key), "one pending instance a key")
        switch count {
        case 0: first = instance
        case 1: second = instance
        default: return false
        }
        count += 1
        return true
    }

    /// The instance under `key`, a key of `Service`; throws when there is none. (Not an optional: in the generic
    /// resolve that reads it, `Service?` is a look-up of its metadata in the runtime. And not through `box(for:)`,
    /// whose box it would retain and release: measured, `request_scope` 12,145 → 12,340 instructions.)
    @inline(__always)
    func load<Service>(_ key: ServiceKey, as _: Service.Type) throws(NotHeld) -> Service {
        if let first, first.key == key { return first.box.load(as: Service.self) }
        if let second, second.key == key { return second.box.load(as: Service.self) }
        throw NotHeld()
    }

    /// The box of the instance under `key`, if there is one: the one place that matches a key with them.
    @inline(__always)
    func box(for key: ServiceKey) -> StoredValue? {
        if let first, first.key == key { return first.box }
        if let second, second.key == key { return second.box }
        return nil
    }

    /// Takes every instance out, in the order they were registered.
    mutating func removeAll() -> [PendingInstance] {
        defer { (first, second, count) = (nil, nil, 0) }
        return [first, second].compactMap { $0 }
    }
}

extension Container {
    /// Keeps `instance`, an instance registration, pending (``PendingInstance``); `false`, having done nothing, when it
    /// must be registered as an entry: the container was looked up or has children (threads may have cached what the
    /// registration changes), is closed or watched, already has the key, or keeps two pending.
    func keepPending(_ instance: PendingInstance) -> Bool {
        let key = instance.key
        return registry.withLock { registry in
            guard !registry.isLookedUp, !registry.isClosed, registry.diagnostics == nil, childStripesAddress == nil,
                !registry.pending.contains(key), !registry.hasEntry(for: key),
                registry.pending.add(instance)
            else { return false }
            recordRegistration(of: key.serviceType)
            registeredTypes.store(registeredTypes.load() | Self.pendingInstancesBit)
            return true
        }
    }

    /// Records that the container keeps no instance pending any more. Call with the lock held.
    func pendingInstancesFiled() {
        registeredTypes.store(registeredTypes.load() & ~Self.pendingInstancesBit)
    }

    /// Whether this container may keep an instance pending under `key` (``PendingInstance``): read without the lock,
    /// `false` for every key of a type it did not register, and for every key once nothing is pending.
    @inline(__always)
    func mayKeepPending(_ key: ServiceKey) -> Bool {
        let bits = registeredTypes.load()
        return bits & Self.pendingInstancesBit != 0 && mayRegister(Self.typeWord(of: key.serviceType), bits: bits)
    }

    /// The instance registered under `key`, a key of `Service` without arguments, if this container keeps it pending,
    /// is open and nothing watches it (``Registry/mayReadPending``): a nested resolve's answer. Throws to send the
    /// resolve the usual way, which files it. Ask ``mayKeepPending(_:)`` first: the lock, and the error, are for the
    /// keys it lets through.
    func pendingInstance<Service>(_ key: ServiceKey, as _: Service.Type) throws(NotHeld) -> Service {
        do {
            return try registry.withLock { registry in
                guard registry.mayReadPending else { throw NotHeld() }
                return try registry.pending.load(key, as: Service.self)
            }
        } catch {
            throw NotHeld()
        }
    }

    /// The box of the instance registered under `key`, if this container keeps it pending, is open and nothing watches
    /// it: a top-level resolve's answer, read by its look-up (`Resolution.lookUpTopLevel`), which has no `Service`.
    /// `nil` sends the resolve the usual way, which files it. Ask ``mayKeepPending(_:)`` first.
    func pendingBox(_ key: ServiceKey) -> StoredValue? {
        registry.withLock { registry in registry.mayReadPending ? registry.pending.box(for: key) : nil }
    }
}
