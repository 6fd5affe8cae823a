import Arbor
import Foundation

/// A weak singleton: an image cache registered in the `.weak` scope. Every open screen shares the one cache; when the
/// last screen closes nothing holds it any more and it is released, with its images; the next screen gets a new one.
enum WeakCache {
    // MARK: The app's types

    /// Numbers the caches, so the output can tell them apart.
    final class Serials: @unchecked Sendable {
        private let lock = NSLock()
        private var last = 0
        func next() -> Int {
            lock.lock()
            defer { lock.unlock() }
            last += 1
            return last
        }
    }

    final class ImageCache {
        let serial: Int
        private var images: [String: String] = [:]
        private(set) var loads = 0

        init(serial: Int) {
            self.serial = serial
            print("       + image cache #\(serial) created")
        }

        deinit { print("       - image cache #\(serial) released, with its \(images.count) image(s)") }

        /// Returns the image, loading it only on the first request.
        func image(_ name: String) -> String {
            if let image = images[name] { return image }
            loads += 1
            let image = "<\(name).png>"
            images[name] = image
            return image
        }
    }

    final class PhotoScreen {
        let title: String
        let cache: ImageCache
        init(title: String, cache: ImageCache) {
            self.title = title
            self.cache = cache
        }
        func show(_ photo: String) {
            _ = cache.image(photo)
            print("       \(title) shows \(photo) from cache #\(cache.serial) (\(cache.loads) load(s) so far)")
        }
    }

    struct WeakReference<Object: AnyObject> {
        weak var object: Object?
        init(_ object: Object?) { self.object = object }
    }

    // MARK: Wiring

    static func makeContainer() -> Container {
        let container = Container()
        let serials = Serials()
        container.register(ImageCache.self) { _ in ImageCache(serial: serials.next()) }
            .inObjectScope(.weak)
        // A screen takes its title as a runtime argument: resolve(PhotoScreen.self, arguments: "Gallery").
        container.register(PhotoScreen.self) { (r, title: String) in PhotoScreen(title: title, cache: try r.resolve()) }
            .inObjectScope(.transient)
        return container
    }

    static func run() throws {
        let container = makeContainer()

        print("open Gallery")
        var gallery: PhotoScreen? = try container.resolve(PhotoScreen.self, arguments: "Gallery")
        gallery?.show("beach")

        print("open Detail")
        var detail: PhotoScreen? = try container.resolve(PhotoScreen.self, arguments: "Detail")
        detail?.show("beach")  // already loaded by Gallery: the cache is shared
        try require(detail?.cache === gallery?.cache, "open screens should share one cache")
        try require(detail?.cache.loads == 1, "the second screen should find the image cached")

        let firstCache = WeakReference(gallery?.cache)
        print("close Gallery")
        gallery = nil
        print("       cache #1 is still alive, Detail holds it: \(firstCache.object != nil)")
        try require(firstCache.object != nil, "the cache should live while a screen holds it")

        print("close Detail")
        detail = nil
        try require(firstCache.object == nil, "the cache should be released with the last screen")

        print("open Album")
        let album = try container.resolve(PhotoScreen.self, arguments: "Album")
        album.show("beach")  // a new, empty cache loads it again
        try require(album.cache.serial == 2 && album.cache.loads == 1, "a new screen should get a new cache")
    }
}
