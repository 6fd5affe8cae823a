/// Sees what a container does while it resolves: every top-level resolve, every instance built and every shared
/// instance reused, every hook run, and every instance released.
///
/// ```swift
/// final class SlowFactories: ResolutionObserver {
///     func instanceBuilt(_ event: InstanceBuilt) {
///         if event.factoryDuration > .milliseconds(50) {
///             print("\(event.key) took \(event.factoryDuration) to build, at \(event.path)")
///         }
///     }
/// }
///
/// let watcher = SlowFactories()
/// container.addObserver(watcher)      // this container and its children, present and future
/// …
/// container.removeObserver(watcher)
/// ```
///
/// Every requirement has a default that does nothing: implement the events you want. New events may come with new
/// defaults, so an observer written today keeps compiling. ``LeakTracker`` and ``Container/profile(_:)`` are observers.
///
/// **When and where the events come.** On the thread (or in the task) that resolves, in the order things happen,
/// outside Arbor's locks: a resolve's events come before the resolve returns, a release's while `close()` (or the
/// reset that releases) runs. Resolves on several threads report at once, so an observer that keeps state guards it.
///
/// **What an observer may do.** Anything quick: count, record, log, start a trace span. It may resolve from a container
/// — that is a resolution of its own, not part of the one it observes, and no observer is told of it (an observer that
/// resolves in ``resolveStarted(_:)`` would otherwise set itself off again). It must not block waiting for another
/// thread's resolve (that thread may wait for this one), and should not take long: the resolve waits for it, and while
/// observers are attached every resolve takes the general path instead of the fast one
/// (<doc:SeeingWhatTheContainerDoes> has what observing costs). Nothing an observer does can change a resolution's
/// outcome.
public protocol ResolutionObserver: AnyObject, Sendable {
    /// A top-level `resolve` began (from a container, or from a resolver used outside its resolution).
    func resolveStarted(_ event: ResolveStarted)
    /// A top-level `resolve` ended: with its instance, or with the error it threw.
    func resolveFinished(_ event: ResolveFinished)
    /// A factory returned a new instance. Its `initCompleted` hooks, if it has any, run later (``hooksRan(_:)``).
    func instanceBuilt(_ event: InstanceBuilt)
    /// The `initCompleted` hooks of an instance ran, after the outermost factory returned.
    func hooksRan(_ event: HooksRan)
    /// A resolve took an instance that already existed: the resolution's graph, or a container, kept it.
    func instanceReused(_ event: InstanceReused)
    /// A container stopped keeping an instance (closed, reset, or its registration replaced), and ran its
    /// `onRelease` hooks.
    func instanceReleased(_ event: InstanceReleased)
}

/// Every event does nothing unless the observer implements it: an observer writes only the events it wants.
extension ResolutionObserver {
    /// Does nothing. Implement it to hear of each top-level resolve as it starts.
    public func resolveStarted(_ event: ResolveStarted) {}
    /// Does nothing. Implement it to hear of each top-level resolve as it ends, with its duration or error.
    public func resolveFinished(_ event: ResolveFinished) {}
    /// Does nothing. Implement it to hear of each instance a factory returns.
    public func instanceBuilt(_ event: InstanceBuilt) {}
    /// Does nothing. Implement it to hear of each instance's `initCompleted` hooks having run.
    public func hooksRan(_ event: HooksRan) {}
    /// Does nothing. Implement it to hear of each instance a resolve took from its graph or a container.
    public func instanceReused(_ event: InstanceReused) {}
    /// Does nothing. Implement it to hear of each instance a container lets go.
    public func instanceReleased(_ event: InstanceReleased) {}
}
