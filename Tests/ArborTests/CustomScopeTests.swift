import Arbor
import Testing

// API.md §4 and §10.7: scopes of your own, made with `ObjectScope(name:retention:)` without touching Arbor.

extension ObjectScope {
    /// Shared like permanent until the user logs out.
    fileprivate static let userSession = ObjectScope(name: "user-session", retention: .strong)
    /// Another strong scope, reset on its own schedule.
    fileprivate static let tenant = ObjectScope(name: "tenant", retention: .strong)
    /// Shared while a screen holds it.
    fileprivate static let screen = ObjectScope(name: "screen", retention: .weak)
}

private final class Cart {}
private final class Profile {}
private final class Catalog {}
private final class ScreenModel {}

private final class Checkout {
    let cart: Cart
    let again: Cart
    init(cart: Cart, again: Cart) {
        self.cart = cart
        self.again = again
    }
}

@Suite struct CustomScopeTests {
    /// A scope of your own named like a built-in one that keeps instances otherwise, or with no name, says so in
    /// descriptions: printed as `[graph]`, it kept its instances like a permanent one.
    @Test func aScopeNamedLikeABuiltInOneSaysItIsYourOwn() {
        #expect("\(ObjectScope(name: "graph", retention: .strong))" == "graph (a scope of your own, strong)")
        #expect("\(ObjectScope(name: "permanent", retention: .weak))" == "permanent (a scope of your own, weak)")
        #expect("\(ObjectScope(name: "", retention: .strong))" == "unnamed (a scope of your own, strong)")
        // The same name and retention as a built-in one is that scope.
        #expect(ObjectScope(name: "permanent", retention: .strong) == .permanent)
        #expect("\(ObjectScope(name: "permanent", retention: .strong))" == "permanent")
        #expect("\(ObjectScope.userSession)" == "user-session")

        let container = Container()
        container.register(Cart.self) { _ in Cart() }.inObjectScope(ObjectScope(name: "transient", retention: .strong))
        #expect("\(container)".contains("Cart [transient (a scope of your own, strong)]"))
    }

    @Test func aStrongCustomScopeIsSharedLikePermanent() throws {
        let container = Container()
        let built = Counter()
        container.register(Cart.self) { _ in
            built.increment()
            return Cart()
        }.inObjectScope(.userSession)
        container.register(Checkout.self) { r in Checkout(cart: try r.resolve(), again: try r.resolve()) }

        let first = try container.resolve(Cart.self)
        let checkout = try container.resolve(Checkout.self)
        #expect(checkout.cart === first)
        #expect(checkout.again === first)
        #expect(try container.resolve(Cart.self) === first)
        #expect(built.value == 1)
    }

    @Test func resettingTheScopeDropsItsInstancesOnly() throws {
        let container = Container()
        container.register(Cart.self) { _ in Cart() }.inObjectScope(.userSession)
        container.register(Profile.self) { _ in Profile() }.inObjectScope(.permanent)
        container.register(Catalog.self) { _ in Catalog() }.inObjectScope(.tenant)
        let cart = try container.resolve(Cart.self)
        let profile = try container.resolve(Profile.self)
        let catalog = try container.resolve(Catalog.self)

        container.resetObjectScope(.userSession)  // log out

        let newCart = try container.resolve(Cart.self)
        #expect(newCart !== cart)
        #expect(try container.resolve(Cart.self) === newCart)  // shared again from now on
        #expect(try container.resolve(Profile.self) === profile)
        #expect(try container.resolve(Catalog.self) === catalog)

        container.resetObjectScope(.permanent)  // a custom scope is not permanent, even with the same retention
        #expect(try container.resolve(Cart.self) === newCart)
        #expect(try container.resolve(Profile.self) !== profile)
    }

    @Test func aScopeIsIdentifiedByItsNameAndRetention() throws {
        let container = Container()
        container.register(Cart.self) { _ in Cart() }.inObjectScope(.userSession)
        let cart = try container.resolve(Cart.self)

        container.resetObjectScope(ObjectScope(name: "user-session", retention: .weak))  // not the same scope
        #expect(try container.resolve(Cart.self) === cart)
        container.resetObjectScope(ObjectScope(name: "user-session", retention: .strong))  // the same one
        #expect(try container.resolve(Cart.self) !== cart)

        #expect(ObjectScope.userSession == ObjectScope(name: "user-session", retention: .strong))
        #expect(ObjectScope.userSession != ObjectScope.permanent)
        #expect(ObjectScope.userSession.description == "user-session")
        #expect(ObjectScope.userSession.name == "user-session")
    }

    @Test func aWeakCustomScopeSharesWhileSomethingHoldsTheInstance() throws {
        let container = Container()
        container.register(ScreenModel.self) { _ in ScreenModel() }.inObjectScope(.screen)

        var held: ScreenModel? = try container.resolve(ScreenModel.self)
        #expect(try container.resolve(ScreenModel.self) === held)
        let watched = WeakRef(held!)
        held = nil
        #expect(watched.object == nil)  // the container did not keep it
        let next = try container.resolve(ScreenModel.self)
        #expect(try container.resolve(ScreenModel.self) === next)
    }

    @Test func resettingAWeakCustomScopeDropsTheSharedInstance() throws {
        let container = Container()
        container.register(ScreenModel.self) { _ in ScreenModel() }.inObjectScope(.screen)
        let held = try container.resolve(ScreenModel.self)
        container.resetObjectScope(.screen)
        let fresh = try container.resolve(ScreenModel.self)
        #expect(fresh !== held)
        #expect(try container.resolve(ScreenModel.self) === fresh)
    }

    @Test func childrenShareTheParentsInstance() throws {
        let parent = Container()
        parent.register(Cart.self) { _ in Cart() }.inObjectScope(.userSession)
        let left = parent.makeChild()
        let right = parent.makeChild()

        let cart = try left.resolve(Cart.self)
        #expect(try right.resolve(Cart.self) === cart)
        #expect(try parent.resolve(Cart.self) === cart)
        #expect(try left.makeChild().resolve(Cart.self) === cart)
    }

    @Test func resettingAChildDoesNotTouchTheParent() throws {
        let parent = Container()
        parent.register(Cart.self) { _ in Cart() }.inObjectScope(.userSession)
        let child = parent.makeChild()
        child.register(Profile.self) { _ in Profile() }.inObjectScope(.userSession)
        let cart = try child.resolve(Cart.self)
        let profile = try child.resolve(Profile.self)

        child.resetObjectScope(.userSession)

        #expect(try child.resolve(Cart.self) === cart)  // the parent's instance stays
        #expect(try parent.resolve(Cart.self) === cart)
        #expect(try child.resolve(Profile.self) !== profile)  // the child's own is dropped

        parent.resetObjectScope(.userSession)
        #expect(try child.resolve(Cart.self) !== cart)  // the parent's reset reaches every child's resolve
    }

    @Test func aChildCanKeepItsOwnSessionInstance() throws {
        let parent = Container()
        parent.register(Cart.self) { _ in Cart() }.inObjectScope(.userSession)
        let child = parent.makeChild()
        child.register(Cart.self) { _ in Cart() }.inObjectScope(.userSession)

        let parentCart = try parent.resolve(Cart.self)
        let childCart = try child.resolve(Cart.self)
        #expect(childCart !== parentCart)
        #expect(try child.resolve(Cart.self) === childCart)
        parent.resetObjectScope(.userSession)
        #expect(try child.resolve(Cart.self) === childCart)
    }

    @Test func aCustomScopeCanBeTheDefault() throws {
        let container = Container(defaultScope: .userSession)
        container.register(Cart.self) { _ in Cart() }
        #expect(try container.resolve(Cart.self) === container.resolve(Cart.self))
        #expect(container.makeChild().defaultScope == .userSession)
    }
}
