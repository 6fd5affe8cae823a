/// Moves the reference out of `object` as a `Service`, and leaves `nil` behind: no retain, no release, no cast.
/// `Service` must be the object's own class (`type(of: object!) == Service.self`): the same single reference,
/// reinterpreted. An internal-checks build checks that.
///
/// A weakly referenced object keeps its counts in a side table, where a retain and a release cost more than the rest
/// of resolving a held weak instance; moving the reference a weak load returned saves both (measured in the
/// Performance article).
///
/// Safe because: `AnyObject?` holding an instance of class `Service` and a `Service` are the same one pointer; the
/// reference is moved out once and the optional is re-initialised to `nil`, so it is released exactly once, by the
/// caller's `Service`.
@inlinable
@inline(__always)
package func moveObject<Service>(out object: inout AnyObject?, as _: Service.Type) -> Service {
    internalInvariant(
        object.map { type(of: $0) == Service.self } == true, "moveObject(out:as:) needs an instance of \(Service.self)")
    internalInvariant(object as? Service != nil, "the runtime does not see a \(Service.self) in moveObject(out:as:)")
    return withUnsafeMutablePointer(to: &object) { pointer in
        let raw = UnsafeMutableRawPointer(pointer)
        let service = raw.assumingMemoryBound(to: Service.self).move()
        raw.initializeMemory(as: AnyObject?.self, repeating: nil, count: 1)
        return service
    }
}

/// `value` as a `Target`, which must be its own type (`From.self == Target.self`, checked by the caller at run time,
/// and again by an internal-checks build): a generic function that has just compared the types gets the value across
/// without a dynamic cast (measured: the cast cost as much as a whole nested resolve).
///
/// Safe because: the two types are the same type, so the value's bits are a valid `Target`; `unsafeBitCast` copies
/// it, with the one type's retains.
@inlinable
@inline(__always)
package func reinterpret<From, Target>(_ value: From, as _: Target.Type) -> Target {
    internalInvariant(From.self == Target.self, "reinterpret(_:as:) from \(From.self) to \(Target.self)")
    internalInvariant(value as? Target != nil, "the runtime does not see a \(Target.self) in reinterpret(_:as:)")
    return unsafeBitCast(value, to: Target.self)
}

/// The class instance `value` is or holds, or `nil` when it holds a value of another kind (a struct, an enum, an
/// optional, a tuple, a closure, a metatype).
///
/// `Value` may be the class itself (`Cat`), a superclass, or an existential that holds a class instance: a protocol
/// (`any Animal`), a class-bound one, a composition, `AnyObject` or `Any`.
///
/// - A class type: the value is the single reference, taken as it is (no runtime call).
/// - Anything else: the runtime looks through the existential to the dynamic type, and only a class instance is
///   cast. `value as AnyObject` alone would not do: on Linux it boxes a struct into an object of its own. Nor would
///   reading the first word of an `Any`: an `Any` made from a generic value whose type is an existential holds that
///   existential, boxed, and the first word is the box (measured: that read returned a box for `any Animal`, so weak
///   sharing and leak tracking missed every service registered under a protocol that is not class-bound).
///
/// Measured (a release build, one call): about 24 ns for a class type, 75–120 ns through an existential (a
/// `.weak` build makes one call, a leak tracker one per instance it records); reading the first word of an `Any`, as
/// before, took 50 ns, and was wrong for existentials.
///
/// An internal-checks build compares the answer with the runtime's own.
@inlinable
package func object<Value>(in value: Value) -> AnyObject? {
    let found: AnyObject?
    if Value.self is AnyClass {
        // The same one pointer: `unsafeBitCast` copies the reference, with its retain.
        found = unsafeBitCast(value, to: AnyObject.self)
    } else {
        let erased = value as Any
        found = type(of: erased) is AnyClass ? erased as AnyObject : nil
    }
    #if ARBOR_INTERNAL_CHECKS
    let runtime: AnyObject? = type(of: value as Any) is AnyClass ? (value as Any) as AnyObject : nil
    precondition(
        found === runtime,
        "object(in:) found \(String(describing: found)) in a \(Value.self), not \(String(describing: runtime))")
    #endif
    return found
}

/// `object` as a `Target`, a class the caller knows it is an instance of (by the key it was found under, or having
/// compared its type): `unsafeDowncast`, under a name that says so. An internal-checks build checks it with `is`.
///
/// Safe because: the caller's knowledge, checked by `is` in internal-checks builds (and by `unsafeDowncast` itself in
/// debug builds); the reference is the same one pointer either way.
@inlinable
@inline(__always)
package func knownDowncast<Target: AnyObject>(_ object: AnyObject, to _: Target.Type) -> Target {
    internalInvariant(object is Target, "knownDowncast(_:to:) of a \(type(of: object)) to \(Target.self)")
    return unsafeDowncast(object, to: Target.self)
}
