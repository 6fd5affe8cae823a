/// The storages of registrations that left a container, retired under its lock: they build nothing more, and an
/// instance one of them is still building is released when it is published (``InstanceStorage``); resolutions
/// waiting for that instance then look their keys up again. `finish()`, after the lock, runs the release hooks of
/// the instances they held.
struct Retirement {
    private var released: [ReleasedInstance] = []

    /// Retires `storages`. Call with their container's lock held.
    init(_ storages: [InstanceStorage]) {
        released = storages.compactMap { $0.retireLocked() }
    }

    /// Retires `storage`, if there is one: the common case of a registration that replaced none, or a transient
    /// or graph-scoped one, costs nothing (measured: building and sorting an empty list was a tenth of a
    /// registration).
    init(_ storage: InstanceStorage?) {
        if let released = storage?.retireLocked() { self.released = [released] }
    }

    /// Call after the container's lock.
    func finish() {
        if !released.isEmpty { ReleasedInstance.run(released) }
    }
}
