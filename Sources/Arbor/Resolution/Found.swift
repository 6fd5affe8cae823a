internal import ArborPrimitives

/// What a look-up found: the registration, and the container that holds it.
///
/// Both unretained: a container keeps every entry it held while a thread may still resolve with it (see
/// ``Reclamation``), and the owner is the container the look-up started in or one of its ancestors, which the
/// caller keeps alive. (Measured: retaining them was a tenth of a resolve, and two threads retaining the same
/// entries slowed each other down.)
struct Found {
    let entry: Unretained<ServiceEntry>
    let ownerReference: Unretained<Container>

    init(entry: Unretained<ServiceEntry>, owner: Container) {
        self.entry = entry
        ownerReference = Unretained(owner)
    }

    init(entry: Unretained<ServiceEntry>, owner: Unretained<Container>) {
        self.entry = entry
        ownerReference = owner
    }

    var owner: Container { ownerReference.object }

    var shape: ServiceEntry.Shape { entry.withObject { $0.shape } }

    /// Whether a resolve needs the factory and the hooks only: a transient or graph-scoped registration.
    var isPlain: Bool { entry.withObject { $0.isPlain } }

    /// Whether the registration keeps its instance in a storage of its own: a permanent or weak one (a per-container
    /// registration's instances are kept by the containers that resolve it).
    var hasHeldStorage: Bool { entry.withObject { $0.heldStorage != nil } }

    var hasHooks: Bool { entry.withObject { $0.hasHooks } }

    var factoryKind: FactoryKind { entry.withObject { $0.factoryKind } }

    /// The instance the registration's permanent or weak storage holds; throws when it holds none.
    @inline(__always)
    func loadHeld<Service>(as _: Service.Type, protectedBy hazard: Reclamation.Hazard) throws(NotHeld) -> Service {
        guard let storage = entry.withObject({ $0.heldStorage }) else { throw NotHeld() }
        return try storage.loadHeld(as: Service.self, protectedBy: hazard)
    }

    var identity: Int { entry.withObject { $0.identity } }
}

/// What a look-up without the cache found, with the settings of the container it started in.
struct Lookup: ~Copyable {
    var found: Found?
    /// The starting container's version, read before the look-up.
    let version: Int
    /// The depth limit of the container the look-up started in.
    let depthLimit: Int
    /// Whether the container the look-up started in was closed.
    let isClosed: Bool
    /// What watches the container the look-up started in: usually nothing.
    let diagnostics: Diagnostics?

    init(version: Int, depthLimit: Int, isClosed: Bool, diagnostics: Diagnostics?) {
        self.version = version
        self.depthLimit = depthLimit
        self.isClosed = isClosed
        self.diagnostics = diagnostics
    }
}

extension Unretained where Object == InstanceStorage {
    /// The instance the storage holds, as the registration's `Service`; throws when it holds none.
    @inline(__always)
    func loadHeld<Service>(as _: Service.Type, protectedBy hazard: Reclamation.Hazard) throws(NotHeld) -> Service {
        var claimed = false
        return try loadHeld(as: Service.self, protectedBy: hazard, claimingFor: nil, claimed: &claimed)
    }

    /// The instance the storage holds, or — holding none — the storage claimed for `member`'s solo build if nothing
    /// else builds it (`claimed` set); throws when it holds none. `member` is asked only then; `nil` claims nothing.
    @inline(__always)
    func loadHeld<Service>(
        as _: Service.Type, protectedBy hazard: Reclamation.Hazard,
        claimingFor member: @autoclosure () -> CreationCoordinator.Member?, claimed: inout Bool
    ) throws(NotHeld) -> Service {
        do {
            return try withObject {
                try $0.loadHeld(as: Service.self, protectedBy: hazard, claimingFor: member(), claimed: &claimed)
            }
        } catch {
            throw NotHeld()
        }
    }
}
