/// Internal checks: assertions of the primitives' own invariants, compiled in only when the build defines
/// `ARBOR_INTERNAL_CHECKS` (`swift build -Xswiftc -DARBOR_INTERNAL_CHECKS`), in debug and release builds alike.
///
/// Off by default: the checks walk whole tables and stacks after each change, which would undo what the types are
/// for. With the condition set, a broken invariant stops the program where it broke instead of corrupting memory
/// somewhere later (modelled on swift-collections' `COLLECTIONS_INTERNAL_CHECKS`).

/// Whether this build checks the primitives' invariants.
@inlinable
@inline(__always)
package var arborInternalChecksEnabled: Bool {
    #if ARBOR_INTERNAL_CHECKS
    true
    #else
    false
    #endif
}

/// Stops the program if `condition` is false, in builds with `ARBOR_INTERNAL_CHECKS`; compiles to nothing otherwise.
@inlinable
@inline(__always)
package func internalInvariant(
    _ condition: @autoclosure () -> Bool,
    _ message: @autoclosure () -> String = String(),
    file: StaticString = #fileID,
    line: UInt = #line
) {
    #if ARBOR_INTERNAL_CHECKS
    precondition(condition(), message(), file: file, line: line)
    #endif
}
