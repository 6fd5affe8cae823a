import Arbor
import Foundation

// A small shop app that the ArborTesting tests run against: a permanent price service, a graph-scoped cart, and a
// checkout screen wired both ways — with a weak back reference (clean) and with a strong one (a leak).

protocol PriceService: AnyObject, Sendable {
    func price(of item: String) -> Int
}

final class LivePrices: PriceService {
    func price(of item: String) -> Int { item.count * 100 }
}

final class StubPrices: PriceService {
    func price(of item: String) -> Int { 1 }
}

final class Cart {
    let prices: any PriceService
    var items: [String] = []
    init(prices: any PriceService) { self.prices = prices }
    var total: Int { items.reduce(0) { $0 + prices.price(of: $1) } }
}

final class CheckoutPresenter {
    let cart: Cart
    weak var view: CheckoutView?
    init(cart: Cart) { self.cart = cart }
}

final class CheckoutView {
    let presenter: CheckoutPresenter
    init(presenter: CheckoutPresenter) { self.presenter = presenter }
}

/// Code under test that resolves from the ambient `Container.current`.
final class Basket {
    @Inject var cart: Cart
}

/// The same pair with the mistake: the presenter holds its view strongly.
final class LeakyPresenter {
    var view: LeakyView?
}

final class LeakyView {
    let presenter: LeakyPresenter
    init(presenter: LeakyPresenter) { self.presenter = presenter }
}

enum Shop {
    /// The app's container, shared by tests the way an app's would be.
    static let shared = makeContainer()

    static func makeContainer() -> Container {
        let container = Container()
        container.register((any PriceService).self) { _ in LivePrices() }.inObjectScope(.permanent)
        container.register(Cart.self) { r in Cart(prices: try r.resolve()) }
        container.register(CheckoutPresenter.self) { r in CheckoutPresenter(cart: try r.resolve()) }
            .initCompleted { r, presenter in presenter.view = try r.resolve(CheckoutView.self) }
        container.register(CheckoutView.self) { r in CheckoutView(presenter: try r.resolve()) }
        container.register(LeakyPresenter.self) { _ in LeakyPresenter() }
            .initCompleted { r, presenter in presenter.view = try r.resolve(LeakyView.self) }
        container.register(LeakyView.self) { r in LeakyView(presenter: try r.resolve()) }
        return container
    }

    /// Breaks the strong cycle of a leaked view, so a test that leaks on purpose leaves nothing behind.
    static func release(_ view: LeakyView?) {
        view?.presenter.view = nil
    }
}

/// Collects what a reporter receives, from any thread.
final class Reports<Location>: @unchecked Sendable {
    private let lock = NSLock()
    private var received: [(report: LeakReport, location: Location)] = []

    func append(_ report: LeakReport, _ location: Location) {
        lock.holding { received.append((report, location)) }
    }

    var all: [(report: LeakReport, location: Location)] {
        lock.holding { received }
    }
}

/// A weak reference, to let a leaked object go at the end of a test.
struct WeakBox<Object: AnyObject>: @unchecked Sendable {
    weak var object: Object?
    init(_ object: Object?) { self.object = object }
}

struct Boom: Error, Equatable {}

/// A value shared with `@Sendable` closures.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.holding { stored } }
        set { lock.holding { stored = newValue } }
    }
}

extension NSLock {
    /// Runs `body` with the lock held. (`NSLock.withLock` needs macOS 14 on Apple platforms.)
    func holding<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}
