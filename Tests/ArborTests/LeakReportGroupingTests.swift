import Arbor
import Foundation
import Testing

// A leak report groups alike leaks — the same type, scope, creation path and references — into one counted block,
// prints the largest groups up to a limit, and still gives every leak in code.

private final class GCart {
    var checkout: GCheckout?
}

private final class GCheckout {
    let cart: GCart
    init(cart: GCart) { self.cart = cart }
}

private final class GBadge {}

/// Holds what the test leaks on purpose, until the test ends.
private final class GKeeper {
    var objects: [AnyObject] = []
}

@Suite struct LeakReportGroupingTests {
    /// A container whose `GCheckout` and its `GCart` point at each other: every checkout resolved leaks two objects.
    private func shop() -> Container {
        let container = Container()
        container.register(GCart.self) { _ in GCart() }
        container.register(GCheckout.self) { r in GCheckout(cart: try r.resolve()) }
            .initCompleted { _, checkout in checkout.cart.checkout = checkout }
        container.register(GBadge.self) { _ in GBadge() }.inObjectScope(.transient)
        return container
    }

    @Test func fiveHundredAlikeLeaksPrintAsOneCountedBlock() throws {
        let container = shop()
        let tracker = LeakTracker(container)
        let keeper = GKeeper()
        for _ in 0..<500 { keeper.objects.append(try container.resolve(GBadge.self)) }

        let report = tracker.check()
        #expect(report.leaks.count == 500, "every leak is there in code")
        #expect(report.groups.count == 1)
        #expect(report.groups.first?.count == 500)
        let text = report.description
        #expect(text.hasPrefix("500 resolved instances are still alive (500 tracked), in 1 group of alike instances:"))
        #expect(text.contains("500 × GBadge (transient scope)"))
        #expect(text.count < 600, "printed \(text.count) characters")
    }

    @Test func fourHundredRequestsThatEachLeakACyclePrintTwoBlocks() throws {
        let container = shop()
        let tracker = LeakTracker(container)
        let keeper = GKeeper()
        for _ in 0..<400 {
            let request = container.makeChild()
            keeper.objects.append(try request.resolve(GCheckout.self))
            request.close()
        }
        let report = tracker.check()
        #expect(report.leaks.count == 800)
        #expect(report.groups.map(\.count) == [400, 400])
        let text = report.description
        #expect(text.contains("400 × GCheckout (graph scope)"))
        #expect(text.contains("400 × GCart (graph scope)"))
        #expect(text.contains("retain cycle"))
        #expect(text.count < 1_000, "printed \(text.count) characters")
        for case let checkout as GCheckout in keeper.objects { checkout.cart.checkout = nil }
    }

    @Test func thePrintedReportStopsAtTheLargestGroupsAndSaysHowManyMore() throws {
        let container = Container()
        let keeper = GKeeper()
        // 25 registrations of one type under different names: 25 groups, of sizes 1 to 25.
        for index in 1...25 {
            container.register(GBadge.self, name: "\(index)") { _ in GBadge() }.inObjectScope(.transient)
        }
        let tracker = LeakTracker(container)
        for index in 1...25 {
            for _ in 0..<index { keeper.objects.append(try container.resolve(GBadge.self, name: "\(index)")) }
        }
        let report = tracker.check()
        #expect(report.groups.count == 25)
        #expect(report.groups.map(\.count) == Array((1...25).reversed()), "largest first")
        let text = report.description
        #expect(text.contains("25 × GBadge as GBadge(name: \"25\")"))
        #expect(text.contains("6 × GBadge as GBadge(name: \"6\")"))
        #expect(!text.contains("5 × GBadge as GBadge(name: \"5\")"))
        #expect(text.contains("… and 5 more groups (15 instances)"))
    }

    @Test func leaksWithNothingAlikeKeepTheOrderOfCreationAndNoCounts() throws {
        let container = shop()
        let tracker = LeakTracker(container)
        let keeper = GKeeper()
        keeper.objects.append(try container.resolve(GCheckout.self))
        let text = tracker.check().description
        #expect(text.hasPrefix("2 resolved instances are still alive (2 tracked):\n\nGCart (graph scope)"))
        #expect(!text.contains("×"))
        for case let checkout as GCheckout in keeper.objects { checkout.cart.checkout = nil }
    }
}
