import Arbor
import Testing

// API.md §6 and §10.13: every reason, paths written with →, alternatives for a missing key, ServiceKey.

private final class AppModel {
    init(repository: Repository) {}
}

private final class Repository {
    init(database: Database) {}
}

private final class Database {}

private struct Greeter {
    let text: String
}

private final class Loop {
    init(loop: Loop) {}
}

private final class Deep {
    init(next: Deep?) {}
}

@Suite struct ResolutionErrorTests {
    /// AppModel → Repository → Database(name: "primary"), where only other Databases exist.
    private static func appContainer() -> Container {
        let c = Container()
        c.register(AppModel.self) { r in AppModel(repository: try r.resolve()) }
        c.register(Repository.self) { r in Repository(database: try r.resolve(Database.self, name: "primary")) }
        c.register(Database.self) { _ in Database() }
        c.register(Database.self, name: "replica") { _ in Database() }
        return c
    }

    // MARK: notRegistered

    @Test func notRegisteredAtTheTopLevel() throws {
        let c = Container()
        let error = try #require(resolutionError { try c.resolve(Database.self) })
        #expect(error.kind == .notRegistered)
        #expect(error.key == ServiceKey(Database.self))
        #expect(error.path == [ServiceKey(Database.self)])
        #expect(error.registeredAlternatives.isEmpty)
        #expect(error.description.contains("Database"))
    }

    @Test func notRegisteredDescriptionShowsThePathWithArrows() throws {
        let error = try #require(resolutionError { try Self.appContainer().resolve(AppModel.self) })
        #expect(error.kind == .notRegistered)
        #expect(error.key == ServiceKey(Database.self, name: "primary"))
        #expect(
            error.path == [
                ServiceKey(AppModel.self), ServiceKey(Repository.self), ServiceKey(Database.self, name: "primary"),
            ])
        #expect(error.description.contains(#"AppModel → Repository → Database(name: "primary")"#))
    }

    @Test func aMissingNameListsTheRegistrationsOfThatType() throws {
        let error = try #require(resolutionError { try Self.appContainer().resolve(AppModel.self) })
        #expect(
            Set(error.registeredAlternatives) == [
                ServiceKey(Database.self), ServiceKey(Database.self, name: "replica"),
            ])
        #expect(error.description.contains(#"Database(name: "replica")"#))
        #expect(!error.description.contains("AppModel, "), "only registrations of the missing type are listed")
    }

    @Test func aWrongArgumentShapeListsTheShapesThatExist() throws {
        let c = Container()
        c.register(Greeter.self) { (_, name: String, times: Int) in Greeter(text: "\(name) ×\(times)") }
        c.register(Greeter.self, name: "formal") { (_, name: String) in Greeter(text: "Dear \(name)") }

        let error = try #require(resolutionError { try c.resolve(Greeter.self, arguments: "Ann") })
        #expect(error.kind == .notRegistered)
        #expect(error.key == ServiceKey(Greeter.self, arguments: String.self))
        #expect(
            Set(error.registeredAlternatives) == [
                ServiceKey(Greeter.self, arguments: String.self, Int.self),
                ServiceKey(Greeter.self, name: "formal", arguments: String.self),
            ])
        #expect(error.description.contains("Greeter(arguments: String, Int)"))
        #expect(error.description.contains(#"Greeter(name: "formal", arguments: String)"#))
    }

    @Test func alternativesIncludeAncestorRegistrations() throws {
        let parent = Container()
        let child = parent.makeChild()
        parent.register(Database.self, name: "replica") { _ in Database() }
        child.register(Database.self, name: "local") { _ in Database() }

        let error = try #require(resolutionError { try child.resolve(Database.self, name: "primary") })
        #expect(
            Set(error.registeredAlternatives) == [
                ServiceKey(Database.self, name: "replica"), ServiceKey(Database.self, name: "local"),
            ])
        #expect(error.description.contains(#"Database(name: "replica")"#))
        #expect(error.description.contains(#"Database(name: "local")"#))
    }

    /// A permanent or weak service is built in the container that registered it, which does not see a child's
    /// registrations: the text says so, where "nothing is registered" alone would send the reader to register again.
    @Test(arguments: [ObjectScope.permanent, .weak])
    func aSharedServiceThatNeedsAChildsRegistrationIsExplained(scope: ObjectScope) throws {
        let root = Container()
        root.register(AppModel.self) { r in AppModel(repository: try r.resolve()) }.inObjectScope(scope)
        root.register(Repository.self) { r in Repository(database: try r.resolve()) }  // graph, built where asked
        let request = root.makeChild()
        request.register(Database.self) { _ in Database() }

        let error = try #require(resolutionError { try request.resolve(AppModel.self) })
        #expect(error.kind == .notRegistered)
        #expect(error.path == [ServiceKey(AppModel.self), ServiceKey(Repository.self), ServiceKey(Database.self)])
        #expect(
            error.description.contains(
                "Database is registered where this resolve started, but AppModel is \(scope.name): it is built in the "
                    + "container that registered it"))
        #expect(error.description.contains("Give AppModel a scope that builds it where it is resolved"))
        #expect(!error.description.contains("Register it, e.g."))
        #expect(request.validate().description.contains("but AppModel is \(scope.name)"))

        // Resolved from the root, where Database is missing indeed, the usual advice stands.
        let fromRoot = try #require(resolutionError { try root.resolve(AppModel.self) })
        #expect(fromRoot.description.contains("Register it, e.g."))
        #expect(!fromRoot.description.contains("where this resolve started"))
    }

    @Test func alternativesIgnoreOtherTypesAndAChildsRegistrations() throws {
        let parent = Container()
        let child = parent.makeChild()
        parent.register(Repository.self) { _ in Repository(database: Database()) }
        child.register(Database.self) { _ in Database() }

        let error = try #require(resolutionError { try parent.resolve(Database.self) })
        #expect(error.registeredAlternatives.isEmpty)
    }

    // MARK: The other reasons

    @Test func circularDependencyDescription() throws {
        let c = Container()
        c.register(Loop.self) { r in Loop(loop: try r.resolve()) }
        c.register(AppModel.self) { r in AppModel(repository: try r.resolve()) }
        c.register(Repository.self) { r in
            _ = try r.resolve(Loop.self)
            return Repository(database: Database())
        }

        let error = try #require(resolutionError { try c.resolve(AppModel.self) })
        #expect(error.kind == .circularDependency)
        #expect(error.key == ServiceKey(Loop.self))
        #expect(
            error.path == [
                ServiceKey(AppModel.self), ServiceKey(Repository.self), ServiceKey(Loop.self), ServiceKey(Loop.self),
            ])
        #expect(error.description.contains("Loop → Loop"))
        #expect(error.description.contains("initCompleted"))
    }

    @Test func aServiceThatResolvesItselfWithOtherArgumentsIsACycleAndTheTextSaysWhy() throws {
        let c = Container()
        c.register(Deep.self) { (r, length: Int) in
            Deep(next: length == 0 ? nil : try r.resolve(Deep.self, arguments: length - 1))
        }

        let error = try #require(resolutionError { try c.resolve(Deep.self, arguments: 3) })
        #expect(error.kind == .circularDependency)
        #expect(error.path == [ServiceKey(Deep.self, arguments: Int.self), ServiceKey(Deep.self, arguments: Int.self)])
        #expect(error.description.contains("a cycle is the same key again,\n  whatever the values"))
        #expect(error.description.contains("Build the structure in a function of your\n  own that one factory calls"))
        // A cycle of keys without arguments keeps to the initCompleted advice.
        c.register(Loop.self) { r in Loop(loop: try r.resolve()) }
        let loop = try #require(resolutionError { try c.resolve(Loop.self) })
        #expect(!loop.description.contains("whatever the values"))
    }

    @Test func depthLimitExceededDescription() throws {
        let c = Container()
        c.maxResolutionDepth = 2
        for i in 0..<4 {
            c.register(Deep.self, name: "d\(i)") { r in
                Deep(next: i == 3 ? nil : try r.resolve(Deep.self, name: "d\(i + 1)"))
            }
        }

        let error = try #require(resolutionError { try c.resolve(Deep.self, name: "d0") })
        #expect(error.kind == .depthLimitExceeded)
        #expect(error.key == ServiceKey(Deep.self, name: "d3"))
        #expect(
            error.description.contains(#"Deep(name: "d0") → Deep(name: "d1") → Deep(name: "d2") → Deep(name: "d3")"#))
    }

    @Test func factoryFailedKeepsTheOriginalError() throws {
        let c = Container()
        c.register(AppModel.self) { r in AppModel(repository: try r.resolve()) }
        c.register(Repository.self) { _ in throw TestFailure("disk full") }

        let error = try #require(resolutionError { try c.resolve(AppModel.self) })
        #expect(error.kind == .factoryFailed)
        #expect(error.underlying as? TestFailure == TestFailure("disk full"))
        #expect(error.key == ServiceKey(Repository.self))
        #expect(error.path == [ServiceKey(AppModel.self), ServiceKey(Repository.self)])
        #expect(error.description.contains("AppModel → Repository"))
        #expect(error.description.contains("disk full"))
    }

    // `.typeMismatch` is not tested here: it is reachable only through `.implements` (a forward whose cast fails),
    // which TypeForwardingTests covers. Without a forward, a registration's key carries its exact service type, so
    // every resolve gets an instance of the type it asked for; and `ResolutionError`'s initialiser is internal, so a
    // test cannot construct one either.

    @Test func everyResolveErrorIsAResolutionError() {
        let c = Container()
        c.register(Repository.self) { _ in throw TestFailure() }
        // `resolutionError` records an issue for anything that is not a ResolutionError.
        #expect(resolutionError { try c.resolve(Repository.self) }?.kind == .factoryFailed)
        #expect(resolutionError { try c.resolve(Database.self) }?.kind == .notRegistered)
        #expect(
            resolutionError { try c.resolve(Database.self, name: "x", arguments: 1, "two") }?.kind == .notRegistered)
    }

    @Test func theErrorKeyNamesTypeNameAndArgumentTypes() throws {
        let c = Container()
        let error = try #require(resolutionError { try c.resolve(Greeter.self, name: "formal", arguments: "Ann", 3) })
        #expect(error.key == ServiceKey(Greeter.self, name: "formal", arguments: String.self, Int.self))
        #expect(error.description.contains(#"Greeter(name: "formal", arguments: String, Int)"#))
    }

    // MARK: ServiceKey

    @Test func serviceKeyDescription() {
        #expect(ServiceKey(Greeter.self).description == "Greeter")
        #expect(ServiceKey(Greeter.self, name: "formal").description == #"Greeter(name: "formal")"#)
        #expect(ServiceKey(Greeter.self, arguments: String.self).description == "Greeter(arguments: String)")
        #expect(
            ServiceKey(Greeter.self, name: "formal", arguments: String.self, Int.self).description
                == #"Greeter(name: "formal", arguments: String, Int)"#)
        #expect(
            String(describing: ServiceKey(Greeter.self, arguments: Int.self, Int.self))
                == "Greeter(arguments: Int, Int)")
    }

    @Test func serviceKeyEqualityAndHashUseTypeNameAndArgumentTypes() {
        let key = ServiceKey(Greeter.self, name: "formal", arguments: String.self, Int.self)
        let same = ServiceKey(Greeter.self, name: "formal", arguments: String.self, Int.self)
        #expect(key == same)
        #expect(key.hashValue == same.hashValue)

        let different = [
            ServiceKey(Database.self, name: "formal", arguments: String.self, Int.self),  // type
            ServiceKey(Greeter.self, name: "casual", arguments: String.self, Int.self),  // name
            ServiceKey(Greeter.self, arguments: String.self, Int.self),  // no name
            ServiceKey(Greeter.self, name: "formal", arguments: Int.self, String.self),  // argument order
            ServiceKey(Greeter.self, name: "formal", arguments: String.self),  // arity
            ServiceKey(Greeter.self, name: "formal"),  // no arguments
        ]
        for other in different {
            #expect(key != other, "\(other)")
        }
        #expect(Set(different + [key, same]).count == different.count + 1)
        #expect(ServiceKey(Greeter.self) == ServiceKey(Greeter.self, name: nil))
    }
}
