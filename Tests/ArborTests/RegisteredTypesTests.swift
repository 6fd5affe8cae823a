import Testing

@testable import Arbor

/// A service that says which container's registration built it.
private class Tagged: @unchecked Sendable {
    let origin: String
    required init(origin: String) { self.origin = origin }
}

/// A type of its own for every level of nesting: as many distinct service types as a test needs.
private final class Nested<Inner>: Tagged, @unchecked Sendable {}

/// `count` distinct service types: `Nested<Void>`, `Nested<Nested<Void>>`, …
private func distinctTypes(_ count: Int) -> [Any.Type] {
    var types: [Any.Type] = []
    func add<T>(_: T.Type, _ remaining: Int) {
        guard remaining > 0 else { return }
        types.append(T.self)
        add(Nested<T>.self, remaining - 1)
    }
    add(Nested<Void>.self, count)
    return types
}

private func key(_ type: Any.Type) -> ServiceKey {
    ServiceKey(serviceType: type, name: nil, argumentsType: Void.self)
}

/// What a container knows, without its lock, of the service types it registered (`Container.mayRegister`,
/// `defersToParent`): a look-up that needs nothing of a request's child takes its parent's answer, and one that does
/// reads the child.
@Suite struct RegisteredTypesTests {
    /// Two types that share a bit of the type filter: with 64 types and 62 bits there always are two.
    private static func typesSharingABit() -> (Any.Type, Any.Type) {
        var seen: [Int: Any.Type] = [:]
        for type in distinctTypes(64) {
            let bit = Container.typeBit(of: Container.typeWord(of: type))
            if let earlier = seen[bit] { return (earlier, type) }
            seen[bit] = type
        }
        preconditionFailure("64 types in 62 bits share one")
    }

    @Test func aChildThatRegisteredOneTypeNeedsNothingOfItselfForAnotherWhateverTheirBits() {
        let (registered, sharingItsBit) = Self.typesSharingABit()
        let root = Container()
        let request = root.makeChild()
        request.registerUnbuilt(registered)

        #expect(request.mayRegister(key(registered)))
        #expect(!request.defersToParent(key(registered)))
        // One bit a type would have said "maybe" here, and looked the child up under its lock on every request.
        #expect(!request.mayRegister(key(sharingItsBit)))
        #expect(request.defersToParent(key(sharingItsBit)))
        for type in distinctTypes(100) where type != registered {
            #expect(!request.mayRegister(key(type)), "\(type)")
        }
    }

    @Test func everyTypeAContainerRegisteredIsOneItMayHave() {
        let types = distinctTypes(100)
        let container = Container().makeChild()
        for (index, type) in types.enumerated() {
            container.registerUnbuilt(type)
            for earlier in types[...index] {
                #expect(container.mayRegister(key(earlier)), "\(earlier) after \(index + 1) registrations")
                #expect(!container.defersToParent(key(earlier)))
            }
        }
        // Registering the first type again changes nothing it answers.
        container.registerUnbuilt(types[0])
        #expect(types.allSatisfy { container.mayRegister(key($0)) })
    }

    @Test func aChildsOwnRegistrationIsFoundAndATypeSharingItsBitComesFromTheParent() throws {
        let (registered, sharingItsBit) = Self.typesSharingABit()
        let root = Container()
        root.registerTagged(registered, origin: "root")
        root.registerTagged(sharingItsBit, origin: "root")
        // Nested look-ups of both, from the container the resolve started in.
        root.register([Tagged].self) { r in
            [try r.resolveTagged(registered), try r.resolveTagged(sharingItsBit)]
        }
        #expect(try root.resolve([Tagged].self).map(\.origin) == ["root", "root"])  // cached for the root

        let child = root.makeChild()
        child.registerTagged(registered, origin: "child")
        #expect(try child.resolve([Tagged].self).map(\.origin) == ["child", "root"])
        #expect(try child.resolveTagged(registered).origin == "child")
        #expect(try child.resolveTagged(sharingItsBit).origin == "root")
        child.registerTagged(sharingItsBit, origin: "child")
        #expect(try child.resolve([Tagged].self).map(\.origin) == ["child", "child"])
    }
}

extension Container {
    /// Registers `type`, one of `distinctTypes`, built with `origin`.
    fileprivate func registerTagged(_ type: Any.Type, origin: String) {
        func open<T>(_: T.Type) {
            register(T.self) { _ in (T.self as! Tagged.Type).init(origin: origin) as! T }
        }
        _openExistential(type, do: open)
    }

    /// Registers `type` with a factory that these tests never call: what `add(_:)` records is all they look at.
    fileprivate func registerUnbuilt(_ type: Any.Type) {
        registerTagged(type, origin: "never built")
    }
}

extension Resolver {
    /// Resolves `type`, one of `distinctTypes`.
    fileprivate func resolveTagged(_ type: Any.Type) throws -> Tagged {
        func open<T>(_: T.Type) throws -> Tagged { try resolve(T.self) as! Tagged }
        return try _openExistential(type, do: open)
    }
}
