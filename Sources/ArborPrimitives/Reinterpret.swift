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
    return unsafeBitCast(value, to: Target.self)
}

/// The class instance inside `value`, or `nil` when `value` holds a value of another kind (a struct, an enum, an
/// optional, a metatype).
///
/// `value as AnyObject` gives the same reference, but on Linux it goes through the runtime's bridging path (measured:
/// about 600 ns a call against 50 ns here, twice in every build of a weak instance).
///
/// Safe because: an `Any` whose dynamic type is a class stores the single reference at the start of its inline
/// buffer; the reference is copied out (retained), and `value` is left as it was.
@inlinable
package func object(in value: Any) -> AnyObject? {
    guard type(of: value) is AnyClass else { return nil }
    return withUnsafePointer(to: value) { UnsafeRawPointer($0).load(as: AnyObject.self) }
}
