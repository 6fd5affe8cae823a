internal import ArborPrimitives

// The plain `async` path, split around its one `await` so that the `Resolver` conveniences an `async` factory calls
// (`try await r.resolve()`) can await the dependency's factory in their own frame.
//
// Every `async` function a nested resolve passes through allocates its frame from the task and hops to its executor
// when it starts: through the protocol requirement, a dependency cost a witness thunk's frame and the resolve's
// frame before its factory's. Here the bookkeeping before and after the factory is synchronous, and the convenience,
// inlined into the factory that calls it, awaits the dependency's factory itself. It covers what the resolve's own
// plain path covers — an `async` or main-actor factory, transient or graph-scoped, no runtime arguments, while nothing
// watches — for the resolution's own task; anything else takes the protocol requirement.
//
// Measured: `async_graph_10` took 26,400 instructions through the requirement, 20,300 this way (3.3 times the
// hand-written `async` code, 2.8 times). The factory is read from an entry found under the service's own key whose
// factory kind is `async` or main-actor and that is no forward: an `AsyncNullaryEntry<Service>`, so its downcast is a
// reinterpretation. `finish` and `fail` are called only for a resolver `begin` answered `.build` for.

/// What an inlined `async` resolve does next: take the instance the graph already has, await the factory of the
/// build the resolution began and report back, or take the general path. Not generic: an enum generic over the
/// service would have its metadata looked up in the runtime on every resolve (measured: 4,500 of 25,700 instructions
/// of `async_graph_10`).
@usableFromInline
enum AsyncPlainStep {
    case inGraph(position: Int)
    case build(PlainBuild)
    case general
}

/// Begins an `async` resolve of `serviceType` for a convenience inlined into a factory: `.general` unless `resolver` is
/// a resolution, used by its own task, and the registration takes the plain path.
@usableFromInline
func beginAsyncPlainResolve(_ resolver: any Resolver, _ serviceType: Any.Type, name: String?) throws -> AsyncPlainStep {
    // `Resolution` is final: comparing the type is the whole check, and the downcast borrows the reference.
    guard type(of: resolver) == Resolution.self else { return .general }
    let resolution = knownDowncast(resolver, to: Resolution.self)
    guard resolution.isUsableByCurrentTask() else { return .general }
    let key = ServiceKey(serviceType: serviceType, name: name, argumentsType: Void.self)
    guard let found = resolution.find(key, in: resolution.context), resolution.isAsyncPlain(found) else {
        return .general
    }
    return try resolution.beginAsyncPlain(found, key: key, depth: resolution.depth + 1)
}

/// The instance at `position` in the graph of the resolution `resolver` is.
@usableFromInline
func asyncPlainGraphInstance<Service>(_ resolver: any Resolver, at position: Int, as _: Service.Type) -> Service {
    knownDowncast(resolver, to: Resolution.self).graphInstance(at: position, as: Service.self)
}

/// Awaits the factory of a build the plain path began, in the caller's frame, and ends the build: what both the
/// inlined conveniences and the resolution's own `async` resolve do with `.build`.
@inlinable
@inline(__always)
func awaitAsyncPlainBuild<Service>(
    _ resolver: any Resolver, _ build: PlainBuild, as _: Service.Type
) async throws -> Service {
    let instance: Service
    do {
        instance = try await AsyncNullaryEntry<Service>.asyncFactory(of: build.entry)(resolver)
    } catch {
        throw failAsyncPlainResolve(resolver, error, build)
    }
    finishAsyncPlainResolve(resolver, instance, build)
    return instance
}

/// Ends a build `beginAsyncPlainResolve` began, whose factory returned `instance`.
@usableFromInline
func finishAsyncPlainResolve<Service>(_ resolver: any Resolver, _ instance: Service, _ build: PlainBuild) {
    knownDowncast(resolver, to: Resolution.self).finishAsyncPlain(instance, build)
}

/// Ends a build `beginAsyncPlainResolve` began, whose factory threw `error`, and returns the error to throw.
@usableFromInline
func failAsyncPlainResolve(_ resolver: any Resolver, _ error: any Error, _ build: PlainBuild) -> any Error {
    knownDowncast(resolver, to: Resolution.self).failAsyncPlain(error, build)
}

extension Resolution {
    /// Whether `found` takes the plain `async` path: an `async` or main-actor factory without runtime arguments,
    /// transient or graph-scoped, while nothing watches.
    @inline(__always)
    func isAsyncPlain(_ found: Found) -> Bool {
        found.isPlain && found.factoryKind != .synchronous && takesFastPath(found)
    }

    /// The plain path's first step (``beginPlain(_:key:depth:)``), as the conveniences' step.
    @inline(__always)
    func beginAsyncPlain(_ found: Found, key: ServiceKey, depth: Int) throws -> AsyncPlainStep {
        switch try beginPlain(found, key: key, depth: depth) {
        case .inGraph(let position):
            return .inGraph(position: position)
        case .build(let build):
            beginUserAwait()
            return .build(build)
        }
    }

    /// The plain path after its `async` factory returned: back on this thread, leaves the frame, then
    /// ``keepPlain(_:_:)``.
    @inline(__always)
    func finishAsyncPlain<Service>(_ instance: Service, _ build: PlainBuild) {
        rebind()
        endUserAwait()
        leave(toDepth: build.outerDepth)
        keepPlain(instance, build)
    }

    /// The plain path after its `async` factory threw: back on this thread, then ``failPlain(_:_:)``.
    func failAsyncPlain(_ error: any Error, _ build: PlainBuild) -> any Error {
        rebind()
        endUserAwait()
        return failPlain(error, build)
    }
}
