import Foundation
import Synchronization
import Testing
@testable import WebImage

/// A process killed with SIGKILL while it stores never leaves an entry that reads back half-written,
/// never loses an entry it reported stored, and never leaves a cache whose size accounting is wrong.
@Suite struct DiskCacheCrashTests {
    static let kills = 50
    static let pixels = 96
    /// The most entries a child may write: far more than it has time for before it is killed.
    static let fillCount = 20_000
    /// Entry file names of the keys the child stores (`fill-N.png`), mapped back to N.
    static let numbersByFileName: [String: Int] = Dictionary(
        uniqueKeysWithValues: (0..<fillCount).map { (DiskCacheFileName.make(forKey: "fill-\($0).png"), $0) })

    /// The pixels `webimage cache fill` stores under `fill-N.png` (see `CacheCommand.fill`).
    static func expectedPixels(_ number: Int) -> [UInt8] {
        (0..<(pixels * pixels)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ number) }
    }

    /// What identifies one version of a file: a rewrite (temporary file + rename) is a new inode
    /// with new times, and writing into a file in place changes its times.
    struct FileVersion: Hashable {
        var inode: UInt64
        var size: Int
        var modified: [Int]
        var changed: [Int]

        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            inode = UInt64(info.st_ino)
            size = Int(info.st_size)
            modified = [info.st_mtim.tv_sec, info.st_mtim.tv_nsec]
            changed = [info.st_ctim.tv_sec, info.st_ctim.tv_nsec]
        }
    }

    static func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    static func rows(of image: Image) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(image.height * image.width * image.pixelFormat.bytesPerPixel)
        for y in 0..<image.height {
            image.withUnsafeRow(y) { bytes += $0.prefix(image.width * image.pixelFormat.bytesPerPixel) }
        }
        return bytes
    }

    @Test func killingAStoringProcessFiftyTimesNeverLeavesAPartialOrLostEntry() async throws {
        let directory = TemporaryDirectory()
        let logs = TemporaryDirectory("logs")
        defer {
            directory.remove()
            logs.remove()
        }
        try FileManager.default.createDirectory(at: logs.url, withIntermediateDirectories: true)
        var random = SplitMix(seed: 42)
        var acknowledged = Set<Int>()
        var verified: [String: FileVersion] = [:]
        var leftoverRounds = 0
        var lateRoundsWithoutAStore = 0
        for round in 0..<Self.kills {
            // One kill in five lands anywhere from the child's start (its own start-up cleanup
            // included); the others land 0–40 ms after its first store has been reported.
            let early = random.next() % 5 == 0
            let delay = Duration.microseconds(Int64(random.next() % (early ? 30_000 : 40_000)))
            let log = logs.url.appendingPathComponent("round-\(round).log")
            let reported = try await runAndKill(storingInto: directory, log: log, afterFirstStore: !early, delay: delay)
            acknowledged.formUnion(reported)
            if !early && reported.isEmpty { lateRoundsWithoutAStore += 1 }
            if directory.files().contains(where: { $0.hasPrefix(DiskFile.temporaryPrefix) }) { leftoverRounds += 1 }
            try await verify(directory, acknowledged: acknowledged, verified: &verified, round: round)
        }
        // Every late kill waited for its child's first reported store, so each of those rounds stored
        // something however slowly the machine runs (a count of keys reached in 40 ms was a guess that
        // a loaded machine broke: 8 instead of more than 10).
        #expect(lateRoundsWithoutAStore == 0, "a kill after the first store must find it reported")
        #expect(!acknowledged.isEmpty, "the children should have stored some entries")
        // Informational: how many kills caught a write between its temporary file and its rename.
        print("DiskCacheCrashTests: \(Self.kills) kills, \(acknowledged.count) keys acknowledged, temporary files left by \(leftoverRounds) kills")
    }

    /// Starts `webimage cache fill`, kills it with SIGKILL after `delay` (counted from its first
    /// reported store when `afterFirstStore`), and returns the numbers of the keys it reported stored.
    func runAndKill(storingInto directory: TemporaryDirectory, log: URL, afterFirstStore: Bool, delay: Duration) async throws -> Set<Int> {
        try Data().write(to: log)
        let output = try FileHandle(forWritingTo: log)
        let process = SpawnedProcess()
        process.executableURL = ChildProcess.tool
        process.arguments = ["cache", "fill", directory.path, "--count", String(Self.fillCount), "--size", String(Self.pixels)]
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let child = Child()
        let (exited, exit) = AsyncStream<Never>.makeStream()
        process.terminationHandler = { _ in
            child.exited()
            exit.finish()
        }
        try process.run()
        try output.close()
        child.kill(process.processIdentifier, after: delay, from: afterFirstStore ? log.path : nil)
        for await _ in exited {}
        #expect(process.terminationReason == .uncaughtSignal, "the child ended on its own (status \(process.terminationStatus))")

        // Each key is printed only after its rename, so every complete line is an entry on disk.
        let lines = String(decoding: try Data(contentsOf: log), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        return Set(lines.dropLast().compactMap { line in
            line.hasPrefix("fill-") && line.hasSuffix(".png") ? Int(line.dropFirst(5).dropLast(4)) : nil
        })
    }

    /// Kills a child process from a thread of its own: the cooperative pool, which a loaded machine
    /// (the whole suite on two cores) can hold up for seconds, never decides when the kill lands.
    final class Child: Sendable {
        private let hasExited = Mutex(false)

        /// Called once the child has exited: no signal is sent after that (its pid may be reused).
        func exited() {
            hasExited.withLock { $0 = true }
        }

        /// Sends SIGKILL to `pid` after `delay`, counted from the moment the file at `log` (if given) is
        /// no longer empty.
        func kill(_ pid: pid_t, after delay: Duration, from log: String?) {
            let thread = Thread { [self] in
                if let log {
                    let deadline = ContinuousClock.now + busyMachineBound
                    while DiskCacheCrashTests.fileSize(log) == 0, !hasExited.withLock({ $0 }), ContinuousClock.now < deadline {
                        usleep(200)
                    }
                }
                usleep(UInt32(delay / .microseconds(1)))
                hasExited.withLock { exited in
                    if !exited { _ = Glibc.kill(pid, SIGKILL) }
                }
            }
            thread.name = "DiskCacheCrashTests.killer"
            thread.start()
        }
    }

    /// Opens a new cache over `directory` (as a restarted process would) and checks it: no temporary
    /// file survives, every entry decodes to exactly the pixels stored under its key, every
    /// acknowledged key is there, and the cache's count and size match the files. The pixels of a
    /// file that is the very version checked after an earlier kill (`verified`) are not compared again.
    func verify(_ directory: TemporaryDirectory, acknowledged: Set<Int>, verified: inout [String: FileVersion], round: Int) async throws {
        let cache = ImageCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil))
        let disk = try #require(cache.diskCache, "round \(round): \(String(describing: cache.diskError))")
        let files = directory.files()
        #expect(!files.contains { $0.hasPrefix(".") }, "round \(round): temporary or hidden files survive a restart: \(files.filter { $0.hasPrefix(".") })")
        let entries = files.filter { !$0.hasPrefix(".") }
        var expectedBytes = 0
        for name in entries {
            let path = directory.path + "/" + name
            expectedBytes += DiskFile.allocatedSize(path) ?? -1
            guard let number = Self.numbersByFileName[name] else {
                Issue.record("round \(round): \(name) is no entry the child could have written")
                continue
            }
            let version = FileVersion(path)
            do {
                let image = try CoderRegistry.shared.decode(Data(contentsOf: URL(fileURLWithPath: path)))
                #expect(image.width == Self.pixels && image.height == Self.pixels && image.pixelFormat == .gray8,
                        "round \(round): fill-\(number) (\(name)) is \(image.width)×\(image.height) \(image.pixelFormat)")
                // Comparing every pixel is the slow part in a debug build: done once per version of a file.
                if version == nil || verified[name] != version {
                    verified[name] = nil
                    let identical = Self.rows(of: image) == Self.expectedPixels(number)
                    #expect(identical, "round \(round): fill-\(number) (\(name)) has other pixels than the image stored under its key")
                    if identical, let version, FileVersion(path) == version { verified[name] = version }
                }
            } catch {
                Issue.record("round \(round): fill-\(number) (\(name)) does not decode: \(error)")
            }
        }
        #expect(await disk.count() == entries.count, "round \(round)")
        #expect(await disk.totalSize() == expectedBytes, "round \(round)")
        let stored = Set(entries.compactMap { Self.numbersByFileName[$0] })
        let lost = acknowledged.subtracting(stored)
        #expect(lost.isEmpty, "round \(round): keys reported stored are missing: \(lost.sorted().prefix(10))")
        // Through the cache itself, as a restarted process reads them.
        for number in acknowledged.sorted().suffix(3) {
            let hit = try await cache.query(forKey: "fill-\(number).png", query: ImageCacheQuery(cacheType: .disk))
            #expect(hit?.cacheType == .disk, "round \(round): fill-\(number) is not served from disk")
        }
    }
}
