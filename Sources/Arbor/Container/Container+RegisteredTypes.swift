internal import ArborPrimitives

// What a container knows, without its lock, of the service types it registered: `registeredTypes` and
// `firstRegisteredType` (Container.swift), and the bits of the first word that say whether its settings are its own and
// whether it keeps instances pending. A look-up that needs nothing of the container skips its lock
// (`RegisteredTypesTests`).
extension Container {
    /// `type`'s metadata address, as ``firstRegisteredType`` keeps it: never 0.
    @inline(__always)
    static func typeWord(of type: Any.Type) -> Int {
        Int(bitPattern: ObjectIdentifier(type))
    }

    /// The bit of `registeredTypes` that stands for the type whose ``typeWord(of:)`` is `typeWord`: one of the lower 62
    /// (the top two are ``pendingInstancesBit`` and ``ownSettingsBit``), from its metadata's address.
    @inline(__always)
    static func typeBit(of typeWord: Int) -> Int {
        let mixed = UInt(bitPattern: typeWord) &* 0x9E37_79B9_7F4A_7C15
        return 1 &<< min(Int(mixed &>> 58), 61)
    }

    /// The bit of `registeredTypes` that says the container may keep instance registrations pending
    /// (``PendingInstance``): set and cleared under the lock, which is what a reader that sees it set then asks.
    static let pendingInstancesBit = 1 &<< 62

    /// The bit of `registeredTypes` that says the container's settings may differ from a new container's.
    static let ownSettingsBit = 1 &<< 63

    /// Whether this container may have a registration of `key`: `false` only if it has never had one of its
    /// service type.
    @inline(__always)
    func mayRegister(_ key: ServiceKey) -> Bool {
        mayRegister(Self.typeWord(of: key.serviceType), bits: registeredTypes.load())
    }

    /// `mayRegister(_:)` for the type whose ``typeWord(of:)`` is `type`, given `registeredTypes` as loaded: the bits
    /// first, since the first type is stored before any bit is, so a thread that sees a later registration's bit sees
    /// the first type too (both loads acquire).
    @inline(__always)
    func mayRegister(_ type: Int, bits: Int) -> Bool {
        bits & Self.typeBit(of: type) != 0 || firstRegisteredType.load() == type
    }

    /// Whether a top-level look-up of `key` that starts here finds what one that starts in the parent (if any) finds,
    /// with a new container's settings (``Registry/hasDefaultSettings``): `false` once the container has had a
    /// registration of the key's type or settings of its own.
    @inline(__always)
    func defersToParent(_ key: ServiceKey) -> Bool {
        let bits = registeredTypes.load()
        let deferring = bits & Self.ownSettingsBit == 0 && !mayRegister(Self.typeWord(of: key.serviceType), bits: bits)
        if arborInternalChecksEnabled, deferring {
            // The bit is set in the critical section that changes the settings: under the lock, settings of its
            // own come with the bit.
            registry.withLock { registry in
                internalInvariant(
                    registry.hasDefaultSettings || registeredTypes.load() & Self.ownSettingsBit != 0,
                    "a container's settings changed without markSettings(of:)")
            }
        }
        return deferring
    }

    /// Records in `registeredTypes` that the settings of `registry`, this container's, are its own, if they are.
    /// Call with the lock held, in every critical section that changes a setting (``Registry/hasDefaultSettings``).
    func markSettings(of registry: borrowing Registry) {
        guard !registry.hasDefaultSettings else { return }
        registeredTypes.store(registeredTypes.load() | Self.ownSettingsBit)
    }

    /// Records in ``firstRegisteredType`` or `registeredTypes` that this container has a registration of `type`. Call
    /// with the lock held.
    func recordRegistration(of type: Any.Type) {
        let word = Self.typeWord(of: type)
        switch firstRegisteredType.load() {
        case 0: firstRegisteredType.store(word)
        case word: break
        default: registeredTypes.store(registeredTypes.load() | Self.typeBit(of: word))
        }
    }
}
