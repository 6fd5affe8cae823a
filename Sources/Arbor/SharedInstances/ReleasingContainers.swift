/// The containers a close let instances with release hooks (or observers) go from, each marked
/// ``Registry/isReleasing`` until the close has run their synchronous hooks.
///
/// A ``Container/closeAndWait()`` that finds one of them closed already, with no `async` hook's ``ReleaseLatch`` filed
/// under it, files a latch of its own and marks ``Registry/hasReleaseWaiter``; ending the release opens that latch.
/// Without it, the call returned while another thread's close was still running the synchronous hooks: an app's
/// service group could finish its shutdown before a connection had been handed back.
///
/// Usually one container, a request's child: kept without an array, as ``PerContainerStorages`` keeps its first
/// storage, so a request's close allocates nothing more for it.
struct ReleasingContainers {
    private var first: Container?
    private var more: [Container] = []

    /// Adds a container the close has just marked, under that container's lock.
    mutating func append(_ container: Container) {
        guard first != nil else {
            first = container
            return
        }
        more.append(container)
    }

    /// Ends the release of every container added: call once their synchronous hooks have run.
    @inline(__always)
    func end() {
        // Most closes let no hook go: no container, and nothing more to look at.
        guard let first else { return }
        first.endReleasing()
        for container in more { container.endReleasing() }
    }
}

extension Container {
    /// Unmarks the container's release, once its synchronous hooks have run, and opens the latch a `closeAndWait()`
    /// filed meanwhile, if one did.
    func endReleasing() {
        let hasWaiter = registry.withLock { registry in
            registry.isReleasing = false
            defer { registry.hasReleaseWaiter = false }
            return registry.hasReleaseWaiter
        }
        if hasWaiter { ReleaseLatch.filed(under: self)?.open() }
    }

    /// What a `closeAndWait()` of this container, found closed already, waits for: the latch of the `async` hooks that
    /// close let go, or one of its own, filed for that close to open, while the close still runs synchronous hooks;
    /// `nil` once the hooks have run.
    func earlierClose() -> ReleaseLatch? {
        registry.withLock { registry in
            if let latch = ReleaseLatch.filed(under: self) { return latch }
            guard registry.isReleasing else { return nil }
            let latch = ReleaseLatch()
            latch.file(under: self)
            registry.hasReleaseWaiter = true
            return latch
        }
    }
}
