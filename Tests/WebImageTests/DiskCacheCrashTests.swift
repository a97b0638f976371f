import Foundation
import Testing
@testable import WebImage

/// A process killed with SIGKILL while it stores never leaves an entry that reads back half-written.
@Suite struct DiskCacheCrashTests {
    @Test func killingAStoringProcessNeverLeavesAPartialEntry() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var random = SplitMix(seed: 42)
        for _ in 0..<6 {
            let process = Process()
            process.executableURL = DecodeCommandTests.tool
            process.arguments = ["cache", "fill", directory.path, "--count", "100000", "--size", "96"]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            try await Task.sleep(for: .milliseconds(60 + Int(random.next() % 200)))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
        }
        let leftovers = directory.files().filter { $0.hasPrefix(DiskFile.temporaryPrefix) }
        let cache = try DiskCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil))
        #expect(!directory.files().contains { $0.hasPrefix(DiskFile.temporaryPrefix) }, "temporary files \(leftovers) survive a restart")
        let entries = directory.files()
        #expect(entries.count > 10, "the child should have stored some entries")
        var expectedBytes = 0
        for name in entries {
            let path = directory.path + "/" + name
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let image = try CoderRegistry.shared.decode(data)
            #expect(image.width == 96 && image.height == 96, "\(name)")
            expectedBytes += DiskFile.allocatedSize(path) ?? -1
        }
        #expect(await cache.count() == entries.count)
        #expect(await cache.totalSize() == expectedBytes)
    }
}
