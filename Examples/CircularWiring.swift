import Arbor

/// Circular graph wiring: a view, its presenter and the presenter's interactor point at each other. Each takes what it
/// owns in its initialiser; the back references (presenter → view, interactor → presenter) are weak, and set in
/// `initCompleted` hooks, which run once the whole graph is built. A `LeakTracker` shows that the triangle is
/// released when the screen goes away — and, with one back reference made strong, prints the leak report.
enum CircularWiring {
    // MARK: The screen's types

    final class View {
        let presenter: Presenter
        private(set) var shown: [String] = []
        init(presenter: Presenter) { self.presenter = presenter }
        func display(_ text: String) { shown.append(text) }
        func tapRefresh() { presenter.refresh() }
    }

    final class Presenter {
        let interactor: any Interactor
        weak var view: View?
        init(interactor: any Interactor) { self.interactor = interactor }
        func refresh() { interactor.fetch() }
        func didFetch(_ items: [String]) { view?.display(items.joined(separator: ", ")) }
    }

    protocol Interactor: AnyObject {
        var output: Presenter? { get set }
        func fetch()
    }

    final class GroceryInteractor: Interactor {
        weak var output: Presenter?
        func fetch() { output?.didFetch(["milk", "eggs"]) }
    }

    /// The same interactor with the usual mistake: it holds its presenter strongly.
    final class RetainingGroceryInteractor: Interactor {
        var output: Presenter?
        func fetch() { output?.didFetch(["milk", "eggs"]) }
    }

    /// Views that try to take their presenter in the initialiser, while the presenter takes the view in its own.
    final class EagerView {
        init(presenter: EagerPresenter) {}
    }

    final class EagerPresenter {
        init(view: EagerView) {}
    }

    // MARK: Wiring

    static func makeContainer(strongBackReference: Bool) -> Container {
        let container = Container()  // all graph-scoped: one triangle per resolve, shared by its hooks
        container.register(View.self) { r in View(presenter: try r.resolve()) }
        container.register(Presenter.self) { r in Presenter(interactor: try r.resolve()) }
            .initCompleted { r, presenter in presenter.view = try r.resolve(View.self) }
        container.register((any Interactor).self) { _ in
            if strongBackReference { return RetainingGroceryInteractor() }
            return GroceryInteractor()
        }
        .initCompleted { r, interactor in interactor.output = try r.resolve(Presenter.self) }
        return container
    }

    static func run() throws {
        // 1. Weak back references: the screen works, and nothing outlives it.
        let container = makeContainer(strongBackReference: false)
        let tracker = LeakTracker(container)
        do {
            let view = try container.resolve(View.self)
            try require(view.presenter.view === view, "the presenter's view should be the view")
            try require(view.presenter.interactor.output === view.presenter, "the interactor should report back")
            view.tapRefresh()
            print("weak back references: the view shows \"\(view.shown.joined())\"")
            try require(view.shown == ["milk, eggs"], "the refresh should reach the view")
        }
        let clean = tracker.check()
        print("  after closing the screen: \(clean)")
        try require(clean.isClean && clean.trackedCount == 3, "the triangle should be released")

        // 2. A strong back reference: the presenter and the interactor keep each other alive.
        let leaky = makeContainer(strongBackReference: true)
        let leakTracker = LeakTracker(leaky)
        weak var leakedPresenter: Presenter?
        do {
            let view = try leaky.resolve(View.self)
            view.tapRefresh()
            leakedPresenter = view.presenter
        }
        let report = leakTracker.check()
        print("strong back reference: after closing the screen,")
        let lines = report.description.split(separator: "\n", omittingEmptySubsequences: false)
        print(lines.map { $0.isEmpty ? "" : "  \($0)" }.joined(separator: "\n"))
        try require(
            report.leaks.map(\.typeName) == ["RetainingGroceryInteractor", "Presenter"], "the pair should leak")
        try require(report.description.contains("RetainingGroceryInteractor.output → Presenter"), "the report names it")
        try require(report.description.contains("Presenter.interactor → RetainingGroceryInteractor"), "and this one")

        // Breaking the cycle releases both.
        leakedPresenter?.interactor.output = nil
        try require(leakTracker.check().isClean, "breaking the cycle should release the pair")
        print("  once the interactor lets go of its output: \(leakTracker.check())")

        // 3. Asking for each other in the initialisers cannot work, and Arbor says what to do instead.
        let eager = Container()
        eager.register(EagerView.self) { r in EagerView(presenter: try r.resolve()) }
        eager.register(EagerPresenter.self) { r in EagerPresenter(view: try r.resolve()) }
        do {
            _ = try eager.resolve(EagerView.self)
            throw ExampleFailure(description: "a cycle through initialisers should throw")
        } catch let error as ResolutionError {
            print("initialisers both ways: \(error)")
            try require("\(error)".contains("initCompleted"), "the error should suggest initCompleted")
        }
    }
}
