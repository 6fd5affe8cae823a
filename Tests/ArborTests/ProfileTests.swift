import Arbor
import ArborTestSupport
import Foundation
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

// `container.profile { }`: the figures against factories that sleep known durations, and the exports parsed as a
// browser and Perfetto would read them. Durations are checked from below (a sleep lasts at least as long as asked)
// and by how they add up, never against a deadline: the machine may be slow, never fast.

private final class Database: Sendable {}
private final class Repository: Sendable {
    let database: Database
    init(database: Database) { self.database = database }
}
private final class Analytics: Sendable {}
private final class AppModel: @unchecked Sendable {
    let repository: Repository
    let analytics: Analytics
    var wired = false
    init(repository: Repository, analytics: Analytics) {
        self.repository = repository
        self.analytics = analytics
    }
}
private final class Settings: Sendable {}
private enum Namespace {
    final class AVeryLongTypeNameThatSomeAppsReallyUseForTheirServicesAndThatNeedsClipping<Element>: Sendable {}
}

private func sleep(milliseconds: Int) {
    Thread.sleep(forTimeInterval: Double(milliseconds) / 1000)
}

/// AppModel (30 ms) → Repository (20 ms) → Database (permanent, 10 ms); AppModel → Analytics; AppModel's hook
/// (15 ms) resolves Settings (5 ms).
private func app() -> Container {
    let container = Container()
    container.register(Database.self) { _ in
        sleep(milliseconds: 10)
        return Database()
    }
    .inObjectScope(.permanent)
    container.register(Repository.self) { r in
        sleep(milliseconds: 20)
        return Repository(database: try r.resolve(Database.self))
    }
    container.register(Analytics.self) { _ in Analytics() }
    container.register(Settings.self) { _ in
        sleep(milliseconds: 5)
        return Settings()
    }
    container.register(AppModel.self) { r in
        sleep(milliseconds: 30)
        return AppModel(repository: try r.resolve(Repository.self), analytics: try r.resolve(Analytics.self))
    }
    .initCompleted { r, model in
        sleep(milliseconds: 15)
        _ = try r.resolve(Settings.self)
        model.wired = true
    }
    return container
}

extension ResolutionProfile {
    fileprivate func entry<Service>(_ type: Service.Type) throws -> Entry {
        try #require(entries.first { $0.key == ServiceKey(type) }, "no entry for \(type)")
    }
}

@Suite("ResolutionProfile")
struct ProfileTests {
    @Test("self and total times add up, nested and in hooks, slowest self time first")
    func nestedFigures() throws {
        let container = app()
        let profile = try container.profile {
            _ = try container.resolve(AppModel.self)
            _ = try container.resolve(Repository.self)  // a second Repository; Database is reused
        }
        let model = try profile.entry(AppModel.self)
        let repository = try profile.entry(Repository.self)
        let database = try profile.entry(Database.self)
        let settings = try profile.entry(Settings.self)
        let analytics = try profile.entry(Analytics.self)
        #expect(profile.resolveCount == 2)
        #expect((model.count, repository.count, database.count, settings.count) == (1, 2, 1, 1))
        #expect(database.reuseCount == 1)
        // Self time: the factory's own sleep, plus its hook's.
        #expect(model.selfTime >= .milliseconds(45))
        #expect(repository.selfTime >= .milliseconds(40))
        #expect(database.selfTime >= .milliseconds(10))
        #expect(settings.selfTime >= .milliseconds(5))
        // Total time: self time and what it resolved — the first Repository (its Database included), the
        // Analytics, and the Settings its hook resolved. Repository's two builds resolved one Database between
        // them (the second reused it), so their total less their self time is exactly the Database's.
        #expect(model.totalTime - model.selfTime >= .milliseconds(20 + 10 + 5))
        #expect(model.totalTime >= model.selfTime + settings.totalTime + analytics.totalTime)
        #expect(repository.totalTime - repository.selfTime == database.totalTime)
        // Sorted, slowest self time first; paths of the first build.
        #expect(zip(profile.entries, profile.entries.dropFirst()).allSatisfy { $0.selfTime >= $1.selfTime })
        #expect(
            database.firstPath == [ServiceKey(AppModel.self), ServiceKey(Repository.self), ServiceKey(Database.self)])
        #expect(settings.firstPath.last == ServiceKey(Settings.self))
        #expect(profile.failures.isEmpty)
        #expect(container.observers.isEmpty, "profiling leaves no observer behind")
    }

    @Test("resolves on two threads at once are both in the profile, each on its own track")
    func twoThreads() throws {
        let container = app()
        let profile = container.profile {
            let finished = runThreads(2, timeout: Watchdog.patience) { _ in
                _ = try? container.resolve(Repository.self)
            }
            #expect(finished)
        }
        let repository = try profile.entry(Repository.self)
        #expect(repository.count == 2)
        #expect(repository.selfTime >= .milliseconds(40))
        #expect(try profile.entry(Database.self).count == 1, "one permanent instance, built once")
        let trace = try TraceFile(profile.chromeTraceJSON())
        let threads = Set(trace.slices.filter { $0.name == "resolve Repository" }.map(\.tid))
        #expect(threads.count == 2)
        #expect(trace.trackNames.values.contains("thread 2"))
    }

    @Test("async: figures of async factories, tracks named by task")
    func asyncFigures() async throws {
        let container = Container()
        container.register(Database.self) { _ async in
            try? await Task.sleep(for: .milliseconds(20))
            return Database()
        }
        container.register(Repository.self) { r async throws in
            try? await Task.sleep(for: .milliseconds(10))
            return Repository(database: try await r.resolve(Database.self))
        }
        let profile = try await container.profile {
            async let first = container.resolve(Repository.self)
            async let second = container.resolve(Repository.self)
            _ = try await (first, second)
        }
        let repository = try profile.entry(Repository.self)
        let database = try profile.entry(Database.self)
        #expect(repository.count == 2 && database.count == 2)
        #expect(database.selfTime >= .milliseconds(40))
        #expect(repository.selfTime >= .milliseconds(20))
        #expect(repository.totalTime - repository.selfTime == database.totalTime)
        let trace = try TraceFile(profile.chromeTraceJSON())
        #expect(trace.trackNames.values.contains("task 1") && trace.trackNames.values.contains("task 2"))
    }

    @Test("the flame graph is well-formed SVG that names the types and gives the figures")
    func flameGraph() throws {
        let container = app()
        let profile = try container.profile { _ = try container.resolve(AppModel.self) }
        let svg = profile.flameGraphSVG()
        let parsed = try SVGFile(svg)
        #expect(parsed.root == "svg")
        for name in ["resolve AppModel", "AppModel", "Repository", "Database", "Settings", "AppModel · initCompleted"] {
            #expect(parsed.titles.contains { $0.hasPrefix(name + "\n") }, "no bar for \(name)")
        }
        #expect(parsed.texts.contains("Repository"))
        let title = try #require(parsed.titles.first { $0.hasPrefix("Database\n") })
        #expect(title.contains("total ") && title.contains("self ") && title.contains("built 1×"))
        // Widths by time: the bar of AppModel's factory is wider than Database's.
        #expect(try parsed.width(of: "AppModel") > parsed.width(of: "Database"))
    }

    @Test("the Chrome trace parses, has traceEvents, names the types, and nests each slice in its parent")
    func chromeTrace() throws {
        let container = app()
        let profile = try container.profile { _ = try container.resolve(AppModel.self) }
        let trace = try TraceFile(profile.chromeTraceJSON())
        let names = Set(trace.slices.map(\.name))
        #expect(names.isSuperset(of: ["resolve AppModel", "AppModel", "Repository", "Database", "Settings"]))
        let resolve = try #require(trace.slices.first { $0.name == "resolve AppModel" })
        for slice in trace.slices where slice.name != resolve.name {
            #expect(slice.ts >= resolve.ts && slice.ts + slice.dur <= resolve.ts + resolve.dur + 0.001)
            #expect(slice.tid == resolve.tid)
        }
        let repository = try #require(trace.slices.first { $0.name == "Repository" })
        let database = try #require(trace.slices.first { $0.name == "Database" })
        #expect(database.ts >= repository.ts && database.ts + database.dur <= repository.ts + repository.dur + 0.001)
        #expect(repository.dur >= 30_000, "microseconds")
    }

    @Test("a failing resolve: its error in the text, the flame graph and the trace")
    func failure() throws {
        let container = app()
        container.register(Analytics.self) { _ in throw SetupError.offline }
        let profile = container.profile {
            _ = try? container.resolve(AppModel.self)
        }
        #expect(profile.failures.count == 1)
        #expect(profile.failures.first?.key == ServiceKey(AppModel.self))
        let text = profile.description
        #expect(text.contains("Failed:") && text.contains("resolve AppModel threw:") && text.contains("offline"))
        #expect(profile.flameGraphSVG().contains("threw: "))
        let trace = try TraceFile(profile.chromeTraceJSON())
        let resolve = try #require(trace.slices.first { $0.name == "resolve AppModel" })
        #expect(resolve.args["error"].map { "\($0)".contains("offline") } == true)
        // What was built before the failure is still in the profile.
        #expect(try profile.entry(Repository.self).count == 1)
    }

    @Test("a resolve from a closed container, or a child of one, is a failure of the profile")
    func closedContainer() throws {
        let container = app()
        let child = container.makeChild()
        let grandchild = child.makeChild()
        child.close()
        let profile = container.profile {
            _ = try? child.resolve(AppModel.self)
            _ = try? grandchild.resolve(Repository.self)
            _ = try? child.resolve(AppModel.self)  // the second time from the thread's look-up cache
        }
        #expect(
            profile.failures.map(\.key) == [
                ServiceKey(AppModel.self), ServiceKey(Repository.self), ServiceKey(AppModel.self),
            ])
        #expect(profile.failures.allSatisfy { ($0.error as? ResolutionError)?.kind == .containerClosed })
        #expect(profile.description.contains("the container was closed"))
    }

    @Test("the text fits 100 columns, long type names and paths included")
    func textWidth() throws {
        typealias Long = Namespace.AVeryLongTypeNameThatSomeAppsReallyUseForTheirServicesAndThatNeedsClipping
        let container = Container()
        container.register(Long<Int>.self) { _ in Long() }
        container.register(Long<String>.self) { r in
            _ = try r.resolve(Long<Int>.self)
            return Long()
        }
        container.register(Long<Double>.self) { r in
            _ = try r.resolve(Long<String>.self)
            return Long()
        }
        let profile = try container.profile { _ = try container.resolve(Long<Double>.self) }
        let lines = profile.description.split(separator: "\n")
        #expect(lines.allSatisfy { $0.count <= 100 }, "\(lines.map(\.count))")
        #expect(lines.contains { $0.contains("first built by …") })
        #expect(profile.entries.count == 3)
    }

    @Test("a body that throws rethrows, and leaves no observer behind")
    func bodyThrows() {
        let container = app()
        #expect(throws: SetupError.self) {
            _ = try container.profile { throw SetupError.offline }
        }
        #expect(container.observers.isEmpty)
    }
}

private enum SetupError: Error { case offline }

/// A Chrome trace as Perfetto reads it: `traceEvents`, complete slices and track names.
private struct TraceFile {
    struct Slice {
        let name: String
        let ts: Double
        let dur: Double
        let tid: Int
        let args: [String: Any]
    }

    let slices: [Slice]
    let trackNames: [Int: String]

    init(_ json: String) throws {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8))
        let root = try #require(object as? [String: Any])
        let events = try #require(root["traceEvents"] as? [[String: Any]])
        var slices: [Slice] = []
        var names: [Int: String] = [:]
        for event in events {
            let phase = try #require(event["ph"] as? String)
            let tid = try #require(event["tid"] as? Int)
            if phase == "M", event["name"] as? String == "thread_name" {
                names[tid] = (event["args"] as? [String: Any])?["name"] as? String
            } else if phase == "X" {
                slices.append(
                    Slice(
                        name: try #require(event["name"] as? String), ts: try #require(event["ts"] as? Double),
                        dur: try #require(event["dur"] as? Double), tid: tid,
                        args: event["args"] as? [String: Any] ?? [:]))
            }
        }
        self.slices = slices
        trackNames = names
    }
}

/// An SVG as a browser's XML parser reads it: the root element, every `<title>` and `<text>`, and each bar's width
/// by its title's first line.
private final class SVGFile: NSObject, XMLParserDelegate {
    private(set) var root: String?
    private(set) var titles: [String] = []
    private(set) var texts: [String] = []
    private var widths: [String: Double] = [:]
    private var characters = ""
    private var pendingTitle: String?

    init(_ svg: String) throws {
        super.init()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = self
        guard parser.parse() else { throw parser.parserError ?? CocoaError(.coderReadCorrupt) }
    }

    func width(of label: String) throws -> Double {
        try #require(widths[label], "no bar for \(label)")
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if root == nil { root = name }
        characters = ""
        if name == "rect", let title = pendingTitle, let width = attributes["width"].flatMap(Double.init) {
            let label = String(title.prefix { $0 != "\n" })
            widths[label] = max(widths[label] ?? 0, width)
            pendingTitle = nil
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        characters += string
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "title" {
            titles.append(characters)
            pendingTitle = characters
        }
        if name == "text" { texts.append(characters) }
    }
}
