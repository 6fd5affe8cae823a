import Arbor
import Foundation

/// A shop's checkout, as a session container: validated before use, drawn as a dependency graph, and closed on
/// logout, which releases its connection.
enum CheckoutSession {
    final class Database: @unchecked Sendable {
        let name: String
        init(name: String) { self.name = name }
    }

    final class Connection: @unchecked Sendable {
        private(set) var isOpen = true
        func disconnect() { isOpen = false }
    }

    final class Cart: @unchecked Sendable {
        let connection: Connection
        init(connection: Connection) { self.connection = connection }
    }

    final class PriceCache: @unchecked Sendable {}

    final class Checkout: @unchecked Sendable {
        let cart: Cart
        let database: Database
        weak var receipt: Receipt?
        init(cart: Cart, database: Database) {
            self.cart = cart
            self.database = database
        }
    }

    final class Receipt: @unchecked Sendable {
        let checkout: Checkout
        init(checkout: Checkout) { self.checkout = checkout }
    }

    final class Pricing: @unchecked Sendable {
        let cache: PriceCache
        init(cache: PriceCache) { self.cache = cache }
    }

    static func run() throws {
        let shop = Container()
        shop.register(Database.self) { _ in Database(name: "shop") }.inObjectScope(.permanent)
        shop.register(PriceCache.self) { _ in PriceCache() }.inObjectScope(.weak)
        // A mistake validation catches: a permanent service holding on to a weak-scoped cache.
        shop.register(Pricing.self) { r in Pricing(cache: try r.resolve()) }.inObjectScope(.permanent)

        let released = Flag()
        let session = shop.makeChild()
        session.register(Connection.self) { _ in Connection() }
            .inObjectScope(.permanent)
            .onRelease { connection in
                connection.disconnect()
                released.set()
            }
        session.register(Cart.self) { r in Cart(connection: try r.resolve()) }
        session.register(Checkout.self) { r in Checkout(cart: try r.resolve(), database: try r.resolve()) }
            .initCompleted { r, checkout in checkout.receipt = try r.resolve(Receipt.self) }
        session.register(Receipt.self) { r in Receipt(checkout: try r.resolve()) }

        print("validate():")
        let report = session.validate()
        print(report.description.split(separator: "\n").map { "  \($0)" }.joined(separator: "\n"))
        try require(report.problems.count == 1, "validation should find the one captive dependency")

        print("dependencyGraphDOT() (render with `dot -Tsvg`):")
        let dot = session.dependencyGraphDOT()
        print(dot.split(separator: "\n").map { "  \($0)" }.joined(separator: "\n"))
        try require(dot.contains("style=dashed"), "the initCompleted edge should be dashed")

        let checkout = try session.resolve(Checkout.self)
        print(
            "checkout uses the \(checkout.database.name) database; connection open: \(checkout.cart.connection.isOpen)")
        session.close()
        print("after close(): connection open: \(checkout.cart.connection.isOpen), released: \(released.isSet)")
        try require(!checkout.cart.connection.isOpen && released.isSet, "close() should release the connection")
        do {
            _ = try session.resolve(Checkout.self)
        } catch {
            print("resolving again throws: \(error)")
        }
    }

    /// A flag the release hook sets.
    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        var isSet: Bool { lock.withLock { value } }
        func set() { lock.withLock { value = true } }
    }
}
