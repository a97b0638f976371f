import Foundation
import Testing
@testable import WebImage

@Suite struct MemoryPressureMonitorTests {
    func monitor(_ directory: TemporaryDirectory, cache: ImageCache) -> MemoryPressureMonitor {
        MemoryPressureMonitor(cache: cache, interval: .milliseconds(20), cgroupUsageThreshold: 0.9, availableMemoryThreshold: 0.05,
                              cgroupDirectory: directory.path, meminfoPath: directory.path + "/meminfo")
    }

    func write(_ text: String, to path: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: path)) }

    func cacheHoldingAnImage() async throws -> ImageCache {
        let cache = ImageCache(directory: URL(fileURLWithPath: "/etc/hostname/none"), config: ImageCacheConfig(diskSweepInterval: nil))
        try await cache.store(try Image(width: 1, height: 1, pixelFormat: .gray8, pixels: [1]), forKey: "k", cacheType: .memory)
        return cache
    }

    @Test func trimsWhenTheCgroupNearsItsLimit() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let cache = try await cacheHoldingAnImage()
        let monitor = monitor(directory, cache: cache)
        try write("1000000\n", to: directory.path + "/memory.max")
        try write("500000\n", to: directory.path + "/memory.current")
        #expect(!monitor.check())
        #expect(cache.memoryCache.count == 1)
        try write("950000\n", to: directory.path + "/memory.current")
        #expect(monitor.check())
        #expect(cache.memoryCache.count == 0)
    }

    @Test func fallsBackToMemAvailableWithoutACgroupLimit() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let monitor = monitor(directory, cache: try await cacheHoldingAnImage())
        try write("max\n", to: directory.path + "/memory.max")
        try write("MemTotal:       1000000 kB\nMemFree:  10 kB\nMemAvailable:     400000 kB\n", to: directory.path + "/meminfo")
        #expect(!monitor.isUnderPressure)
        try write("MemTotal:       1000000 kB\nMemAvailable:      40000 kB\n", to: directory.path + "/meminfo")
        #expect(monitor.isUnderPressure)
    }

    @Test func pollsOnceStarted() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let cache = try await cacheHoldingAnImage()
        let monitor = monitor(directory, cache: cache)
        try write("100\n", to: directory.path + "/memory.max")
        try write("99\n", to: directory.path + "/memory.current")
        monitor.start()
        defer { monitor.stop() }
        let deadline = ContinuousClock.now + busyMachineBound
        while cache.memoryCache.count > 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(cache.memoryCache.count == 0)
    }
}
