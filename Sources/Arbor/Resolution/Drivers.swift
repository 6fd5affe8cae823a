internal import ArborPrimitives

// The two drivers of the engine: the synchronous one and the `async` one. Everything a resolve decides is written once,
// in the steps they share — the rules (Rules.swift), beginning, finishing and failing a build (Building.swift), the
// hooks' order and context (HookQueue.swift), claiming and publishing (CreationCoordinator) — and the drivers differ
// only in how they call a factory (synchronously, or awaiting it, hosted on the thread it runs on) and how they wait
// for an instance another resolution builds (blocking the thread, or suspending the task). So the two functions of
// each pair below look alike: that likeness is the price of Swift having no code generic over `async`, and everything
// either could get wrong on its own lives in the shared steps.

extension Resolution {
    // MARK: The synchronous driver

    /// Resolves `key` from what a look-up in `container` found, at `depth`: by the rules of its registration, looking it
    /// up again in `container` if the registration left meanwhile, or — with no registration — by `unregistered`.
    @inline(__always)
    func resolveRegistered<Service>(
        _ key: ServiceKey, found: Found?, in container: Unretained<Container>,
        byRules: (Found) throws -> Service, unregistered: () throws -> Service
    ) throws -> Service {
        var found = found
        while true {
            guard let registered = found else { return try unregistered() }
            do {
                return try byRules(registered)
            } catch is LookAgain {
                found = findUncached(key, in: container.object)
            }
        }
    }

    /// Resolves `key`, which the look-up found registered as `found`, at `depth`, by the rules of the registration's
    /// scope. `arguments` points at the runtime arguments, as a tuple of the key's argument types, or is `nil` for
    /// none. Throws ``LookAgain`` when the registration left its container after the look-up found it.
    func resolveByRules<Service>(
        _ key: ServiceKey, found: Found, depth: Int, arguments: ArgumentsTuple?
    ) throws -> Service {
        let building: Building
        switch try decide(key, found: found, depth: depth) {
        case .inGraph(let position):
            return graphInstance(at: position, as: Service.self)
        case .build(let slot, let keepsInGraph):
            building = try beginBuild(found, key: key, slot: slot, depth: depth, keepsInGraph: keepsInGraph)
            if isBare(building) { return try callBareFactory(building, arguments: arguments) }
        case .stored(let storage, let owner, let mayHold):
            if mayHold {
                do throws(NotHeld) { return try takeHeld(storage, found: found, depth: depth) } catch {}
            }
            let storage = storage.object
            let acquisition = acquire(storage, found: found)
            if let instance = try settle(consume acquisition, key: key) {
                reportReuse(found, depth: depth)
                return try cast(instance, key: key)
            }
            building = try beginClaimedBuild(found, key: key, storage: storage, owner: owner, depth: depth)
        case .claimed(let storage, let owner):
            building = try storage.withObject {
                try beginClaimedBuild(found, key: key, storage: $0, owner: owner, depth: depth)
            }
        }
        let instance: Service
        do {
            instance = try callFactory(building, arguments: arguments)
        } catch {
            throw failBuild(building, error)
        }
        finishBuild(building, instance)
        return instance
    }

    /// Runs the factory of a build — or, for a forward, resolves its target.
    @inline(__always)
    func callFactory<Service>(_ building: Building, arguments: ArgumentsTuple?) throws -> Service {
        try building.entry.withObject { entry in
            if entry.isForward {
                return try knownDowncast(entry, to: ForwardingEntry.self)
                    .forward(as: Service.self, in: self, arguments: arguments)
            }
            // The key names the service and argument types exactly: the entry is a `NullaryEntry<Service>` or an
            // `ArgumentsEntry<Service>`, and the downcast is a reinterpretation.
            guard let arguments else { return try NullaryEntry<Service>.build(entry, self) }
            return try ArgumentsEntry<Service>.build(entry, self, arguments: arguments)
        }
    }

    /// Runs the queued `initCompleted` hooks in their order (see ``HookQueue``). A resolve inside a hook goes one
    /// level deeper than the hook's instance, so a chain of hooks that never ends runs into the depth limit.
    func runPendingHooks() throws {
        var next = 0
        while let run = beginHook(&next) {
            defer { endHook(run) }
            for index in 0..<run.count { try runHook(run, index) }
        }
    }

    /// Runs one hook of a pending instance. (The hook copies its instance before it runs user code.)
    @inline(__always)
    func runHook(_ run: HookRun, _ index: Int) throws {
        do {
            try invokeHook(run, index)
        } catch {
            throw hookFailure(error, of: run.pending)
        }
    }

    /// Completes a resolution whose outermost resolve returned: runs the hooks it queued, then publishes the
    /// instances it built, then finishes. If that throws, call `failed`.
    @inline(__always)
    func complete(_ key: ServiceKey) throws {
        if hasPendingHooks { try runPendingHooks() }
        if hasClaims {
            let member = self.member
            try settle(withClaims { CreationCoordinator.shared.finish(member, claims: &$0, failure: nil) }, key: key)
        }
        finish()
    }

    /// Ends a resolution that failed: its creation group fails, and abandons what its members claimed. Finishes, and
    /// returns the error to throw.
    func failed(_ error: any Error) -> any Error {
        if hasClaims {
            let member = self.member
            _ = withClaims { CreationCoordinator.shared.finish(member, claims: &$0, failure: error) }
        }
        if diagnostics != nil { endObservation(error) }
        finish()
        return error
    }

    // MARK: The `async` driver

    /// `resolveRegistered`, in an `async` resolution.
    @inline(__always)
    func resolveRegisteredAsync<Service>(
        _ key: ServiceKey, found: Found?, in container: Unretained<Container>,
        byRules: (Found) async throws -> Service, unregistered: () async throws -> Service
    ) async throws -> Service {
        var found = found
        while true {
            guard let registered = found else { return try await unregistered() }
            do {
                return try await byRules(registered)
            } catch is LookAgain {
                found = findUncached(key, in: container.object)
            }
        }
    }

    /// The coordinator's `acquire` of `storage`, the storage of `found`'s instance, for this resolution, with what
    /// blocking its thread would hold up (``CreationCoordinator/Waiter``; a resolve hosted by an `async` resolution's
    /// synchronous code can only block). Out of line, as the slow path: the nested resolve's frame stays small.
    @inline(never)
    func acquire(_ storage: InstanceStorage, found: Found) -> CreationCoordinator.Acquisition {
        let member = self.member
        return withClaims { claims in
            CreationCoordinator.shared.acquire(storage, for: member, claims: &claims) {
                .blockingHere(
                    hosted: runsInHostedCode,
                    factoryIsSynchronous: found.entry.withObject { $0.factoryKind == .synchronous })
            }
        }
    }

    /// `resolveByRules`, in an `async` resolution: the factory awaited, and a wait for another resolution's build
    /// suspended. Inlined into its callers, which are kept out of line themselves (``resolveOutOfLine``): every
    /// `async` function a resolve passes through allocates a frame from its task.
    @inline(__always)
    func resolveByRulesAsync<Service>(
        _ key: ServiceKey, found: Found, depth: Int, arguments: AsyncArgumentsBox?
    ) async throws -> Service {
        let building: Building
        switch try decide(key, found: found, depth: depth) {
        case .inGraph(let position):
            return graphInstance(at: position, as: Service.self)
        case .build(let slot, let keepsInGraph):
            building = try beginBuild(found, key: key, slot: slot, depth: depth, keepsInGraph: keepsInGraph)
        case .stored(let storage, let owner, let mayHold):
            if mayHold {
                do throws(NotHeld) { return try takeHeld(storage, found: found, depth: depth) } catch {}
            }
            let storage = storage.object
            let acquisition = await CreationCoordinator.shared.acquireAsync(storage, for: self)
            rebind()
            if let instance = try settle(consume acquisition, key: key) {
                reportReuse(found, depth: depth)
                return try cast(instance, key: key)
            }
            building = try beginClaimedBuild(found, key: key, storage: storage, owner: owner, depth: depth)
        case .claimed(let storage, let owner):
            building = try storage.withObject {
                try beginClaimedBuild(found, key: key, storage: $0, owner: owner, depth: depth)
            }
        }
        let instance: Service
        do {
            instance = try await callFactoryAsync(building, arguments: arguments)
        } catch {
            throw failBuild(building, error)
        }
        finishBuild(building, instance)
        return instance
    }

    /// Runs the factory of a build in an `async` resolution: a synchronous one hosted on this thread, an `async` or
    /// main-actor one awaited — or, for a forward, resolves its target.
    func callFactoryAsync<Service>(_ building: Building, arguments: AsyncArgumentsBox?) async throws -> Service {
        // The resolution's reader keeps the entry alive while it is used, across suspensions (``Reclamation``).
        let entry = building.entry.object
        if entry.isForward {
            return try await knownDowncast(entry, to: ForwardingEntry.self)
                .forwardAsync(as: Service.self, in: self, arguments: arguments)
        }
        switch entry.factoryKind {
        case .synchronous:
            return try await awaitingBuildsInstead(inRun: true) {
                try hostingSynchronousCode {
                    guard let arguments else { return try NullaryEntry<Service>.build(entry, self) }
                    return try arguments.withArgumentsTuple {
                        try ArgumentsEntry<Service>.build(entry, self, arguments: $0)
                    }
                }
            }
        case .async, .mainActor:
            beginUserAwait()
            defer {
                rebind()
                endUserAwait()
            }
            guard let arguments else { return try await AsyncNullaryEntry<Service>.buildAsync(entry, self) }
            return try await AsyncArgumentsEntry<Service>.buildAsync(entry, self, arguments: arguments)
        }
    }

    /// `runPendingHooks`, awaiting `async` hooks.
    func runPendingHooksAsync() async throws {
        var next = 0
        while let run = beginHook(&next) {
            defer { endHook(run) }
            for index in 0..<run.count { try await runHookAsync(run, index) }
        }
    }

    /// `runHook`, hosted on this thread, then awaiting the work an `async` hook hands back (``AsyncHookRequest``).
    func runHookAsync(_ run: HookRun, _ index: Int) async throws {
        do {
            try await awaitingBuildsInstead(inRun: true) { try hostingSynchronousCode { try invokeHook(run, index) } }
        } catch let request as AsyncHookRequest {
            beginUserAwait()
            defer { endUserAwait() }
            do {
                try await request.work()
                rebind()
            } catch {
                rebind()
                throw hookFailure(error, of: run.pending)
            }
        } catch {
            throw hookFailure(error, of: run.pending)
        }
    }

    /// `complete`, in an `async` resolution: a member whose group has not finished waits for it suspended.
    func completeAsync(_ key: ServiceKey) async throws {
        if hasPendingHooks { try await runPendingHooksAsync() }
        if hasClaims {
            let outcome = await CreationCoordinator.shared.finishAsync(self, failure: nil)
            rebind()
            try settle(outcome, key: key)
        }
        finish()
    }

    /// `failed`, in an `async` resolution.
    func failedAsync(_ error: any Error) async -> any Error {
        if hasClaims {
            _ = await CreationCoordinator.shared.finishAsync(self, failure: error)
            rebind()
        }
        if diagnostics != nil { endObservation(error) }
        finish()
        return error
    }
}
