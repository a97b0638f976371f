import Foundation
import Testing
@testable import WebImage

@Suite struct DiskCacheTests {
    func makeCache(_ directory: TemporaryDirectory, _ configure: (inout ImageCacheConfig) -> Void = { _ in }) throws -> DiskCache {
        var config = ImageCacheConfig(diskSweepInterval: nil)
        configure(&config)
        return try DiskCache(directory: directory.url, config: config)
    }

    func setDates(of path: String, to date: Date) throws {
        try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
    }

    @Test func storedBytesReadBackAndAreCounted() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        let bytes = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0) })
        try await cache.store(bytes, forKey: "https://example.com/a.png")
        #expect(try await cache.data(forKey: "https://example.com/a.png") == bytes)
        #expect(await cache.contains("https://example.com/a.png"))
        #expect(await cache.count() == 1)
        #expect(await cache.totalSize() == 8192)   // two 4 KiB blocks on ext4
        #expect(try await cache.data(forKey: "https://example.com/other.png") == nil)
        #expect(directory.files() == [(cache.path(forKey: "https://example.com/a.png") as NSString).lastPathComponent])
    }

    @Test func directoryIsPrivateAndFilesAreOwnerOnly() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        try await cache.store(Data([1, 2, 3]), forKey: "k")
        let directoryMode = try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int
        let fileMode = try FileManager.default.attributesOfItem(atPath: cache.path(forKey: "k"))[.posixPermissions] as? Int
        #expect(directoryMode == 0o700)
        #expect(fileMode == 0o600)
    }

    @Test func replacingAnEntryKeepsTheSizeRight() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        try await cache.store(Data(count: 10_000), forKey: "k")
        try await cache.store(Data(count: 100), forKey: "k")
        #expect(await cache.totalSize() == 4096)
        #expect(await cache.count() == 1)
    }

    @Test func aFileDeletedBehindTheCachesBackIsAMiss() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        try await cache.store(Data([1]), forKey: "k")
        unlink(cache.path(forKey: "k"))
        #expect(try await cache.data(forKey: "k") == nil)
        #expect(await !cache.contains("k"))
        #expect(await cache.totalSize() == 0)
    }

    @Test func removeAndRemoveAll() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        for index in 0..<5 { try await cache.store(Data([UInt8(index)]), forKey: "k\(index)") }
        await cache.remove(forKey: "k0")
        #expect(await cache.count() == 4)
        #expect(try await cache.data(forKey: "k0") == nil)
        await cache.removeAll()
        #expect(await cache.count() == 0)
        #expect(await cache.totalSize() == 0)
        #expect(directory.files().isEmpty)
    }

    @Test func metadataIsStoredWithTheEntry() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        let metadata = DiskCacheMetadata(entityTag: "\"abc\"", lastModified: "Wed, 21 Oct 2015 07:28:00 GMT", maxAge: 60,
                                         extendedData: Data("user data".utf8))
        try await cache.store(Data([1, 2]), forKey: "k", metadata: metadata)
        #expect(await cache.metadata(forKey: "k") == metadata)
        try await cache.store(Data([3]), forKey: "k")
        #expect(await cache.metadata(forKey: "k") == nil, "a new entry must not inherit the old metadata")
    }

    @Test func metadataTooLargeForAnExtendedAttributeGoesToASidecar() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        let big = DiskCacheMetadata(extendedData: Data(repeating: 7, count: 100_000))
        try await cache.store(Data([1]), forKey: "k", metadata: big)
        #expect(await cache.metadata(forKey: "k") == big)
        #expect(directory.files().contains { $0.hasPrefix(DiskFile.sidecarPrefix) })
        #expect(await cache.count() == 1, "sidecars are not entries")
        await cache.remove(forKey: "k")
        #expect(directory.files().isEmpty)
    }

    @Test func aSweepRemovesSidecarsWhoseEntryIsGone() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        try await cache.store(Data([1]), forKey: "k", metadata: DiskCacheMetadata(extendedData: Data(count: 100_000)))
        unlink(cache.path(forKey: "k"))
        #expect(directory.files().count == 1)
        await cache.removeExpiredData()
        #expect(directory.files().isEmpty)
    }

    @Test func setMetadataReplacesItOnAnExistingEntry() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        #expect(try await !cache.setMetadata(DiskCacheMetadata(maxAge: 1), forKey: "missing"))
        try await cache.store(Data([9]), forKey: "k")
        #expect(try await cache.setMetadata(DiskCacheMetadata(entityTag: "v2"), forKey: "k"))
        #expect(await cache.metadata(forKey: "k")?.entityTag == "v2")
        #expect(try await cache.data(forKey: "k") == Data([9]))
    }

    @Test func entriesOlderThanTheMaxAgeAreSwept() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory) { $0.maxDiskAge = 1 }
        try await cache.store(Data([1]), forKey: "old")
        try await cache.store(Data([2]), forKey: "new")
        try setDates(of: cache.path(forKey: "old"), to: Date(timeIntervalSinceNow: -5))
        let report = await cache.removeExpiredData()
        #expect(report.expiredCount == 1 && report.evictedCount == 0 && report.remainingCount == 1)
        #expect(try await cache.data(forKey: "old") == nil)
        #expect(try await cache.data(forKey: "new") == Data([2]))
    }

    @Test func negativeMaxAgeNeverExpires() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory) { $0.maxDiskAge = -1 }
        try await cache.store(Data([1]), forKey: "ancient")
        try setDates(of: cache.path(forKey: "ancient"), to: Date(timeIntervalSinceNow: -1e8))
        #expect(await cache.removeExpiredData().removedCount == 0)
    }

    @Test func accessDateExpiryCountsFromTheLastHit() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory) { $0.maxDiskAge = 60; $0.diskExpireType = .accessDate }
        try await cache.store(Data([1]), forKey: "read")
        try await cache.store(Data([2]), forKey: "unread")
        for key in ["read", "unread"] { try setDates(of: cache.path(forKey: key), to: Date(timeIntervalSinceNow: -3600)) }
        _ = try await cache.data(forKey: "read")   // the hit records the access on the file
        let report = await cache.removeExpiredData()
        #expect(report.expiredCount == 1)
        #expect(await cache.contains("read"))
        #expect(await !cache.contains("unread"))
    }

    @Test func passingTheSizeLimitEvictsLeastRecentlyUsedDownToHalf() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory) { $0.maxDiskSize = 10 * 4096 }
        for index in 0..<10 {
            try await cache.store(Data([UInt8(index)]), forKey: "k\(index)")
            try setDates(of: cache.path(forKey: "k\(index)"), to: Date(timeIntervalSinceNow: Double(index - 100)))
        }
        _ = await cache.removeExpiredData()   // re-read the dates set behind the cache's back
        _ = try await cache.data(forKey: "k0")   // k0 becomes the most recently used
        try await cache.store(Data([10]), forKey: "k10")   // 11 blocks > 10: sweep down to 5
        #expect(await cache.totalSize() <= 5 * 4096)
        #expect(await cache.contains("k0"))
        #expect(await cache.contains("k10"))
        #expect(await cache.contains("k9"))
        #expect(await !cache.contains("k1"))
    }

    @Test func aNewCacheFindsWhatIsAlreadyOnDiskAndRemovesStaleTemporaryFiles() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let first = try makeCache(directory)
        for index in 0..<3 { try await first.store(Data(count: 5000), forKey: "k\(index)") }
        _ = FileManager.default.createFile(atPath: directory.path + "/" + DiskFile.temporaryPrefix + "leftover", contents: Data(count: 10))
        let second = try makeCache(directory)
        #expect(await second.count() == 3)
        #expect(await second.totalSize() == 3 * 8192)
        #expect(!directory.files().contains { $0.hasPrefix(DiskFile.temporaryPrefix) })
    }

    @Test func additionalReadPathsAreSearchedOnAMiss() async throws {
        let directory = TemporaryDirectory()
        let bundled = TemporaryDirectory("bundled")
        defer { directory.remove(); bundled.remove() }
        try FileManager.default.createDirectory(at: bundled.url, withIntermediateDirectories: true)
        let key = "https://example.com/logo.png"
        try Data([4, 2]).write(to: bundled.url.appendingPathComponent(DiskCacheFileName.make(forKey: key)))
        let cache = try makeCache(directory) { $0.additionalReadPaths = [bundled.url] }
        #expect(try await cache.data(forKey: key) == Data([4, 2]))
        #expect(await !cache.contains(key), "read-only paths are not entries of the cache")
    }

    @Test func aFileStoredWithoutItsExtensionIsFound() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let key = "https://example.com/photo.jpg"
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try Data([7]).write(to: directory.url.appendingPathComponent(MD5.hex(Array(key.utf8))))
        let cache = try makeCache(directory)
        #expect(try await cache.data(forKey: key) == Data([7]))
    }

    @Test func anUnusableDirectoryIsATypedError() {
        #expect(throws: DiskCacheError.self) {
            try DiskCache(directory: URL(fileURLWithPath: "/etc/hostname/cache"), config: ImageCacheConfig(diskSweepInterval: nil))
        }
    }

    @Test func aFailedWriteIsATypedErrorAndLeavesNothingBehind() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        try await cache.store(Data([1]), forKey: "kept")
        // A file where the directory was: unusable (a removed directory is made again, see below, so
        // the start-up sweep must be over first).
        await cache.waitForStartUpSweep()
        try FileManager.default.removeItem(at: directory.url)
        #expect(FileManager.default.createFile(atPath: directory.path, contents: Data([0])))
        await #expect(throws: DiskCacheError.self) { try await cache.store(Data([2]), forKey: "new") }
        #expect(await !cache.contains("new"))
    }

    @Test func concurrentStoresAndReadsOfTheSameAndDifferentKeys() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for step in 0..<50 {
                        let key = "k\((worker * 7 + step) % 20)"
                        let payload = Data(repeating: UInt8(step), count: 100 + step)
                        try await cache.store(payload, forKey: key)
                        if let read = try await cache.data(forKey: key) {
                            #expect(read.count >= 100 && read.allSatisfy { $0 == read.first })
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(await cache.count() == 20)
        #expect(directory.files().count == 20)
    }

    @Test func aRemovedDirectoryIsMadeAgainByTheNextStoreAndItsEntriesForgotten() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        try await cache.store(Data([1]), forKey: "gone")
        try FileManager.default.removeItem(at: directory.url)

        try await cache.store(Data([2]), forKey: "new")
        #expect(try await cache.data(forKey: "new") == Data([2]))
        #expect(await !cache.contains("gone"), "the index must not believe in a file that went with the directory")
        #expect(await cache.count() == 1)
        #expect(try await cache.data(forKey: "gone") == nil)
        var info = stat()
        #expect(stat(directory.path, &info) == 0 && info.st_mode & 0o777 == 0o700)
    }

    @Test func aSweepMakesARemovedDirectoryAgain() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        try await cache.store(Data([1]), forKey: "gone")
        try FileManager.default.removeItem(at: directory.url)

        let report = await cache.removeExpiredData()
        #expect(report.remainingCount == 0 && report.remainingBytes == 0)
        #expect(FileManager.default.fileExists(atPath: directory.path))
        #expect(await cache.count() == 0)
        #expect(await cache.totalSize() == 0)
    }

    @Test func anEmptyKeyIsNoKey() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        try await cache.store(Data([1]), forKey: "")
        #expect(directory.files().isEmpty, "nothing is written for an empty key")
        #expect(await cache.count() == 0)
        #expect(await !cache.contains(""))
        #expect(try await cache.data(forKey: "") == nil)
    }
}

/// Reads off the actor (the warm path of encoded variants).
@Suite struct DiskCacheReadWithoutWaitingTests {
    @Test func readsBytesAndMetadataAndCountsAsAnAccessForEviction() async throws {
        let probeDirectory = TemporaryDirectory(), directory = TemporaryDirectory()
        defer { probeDirectory.remove(); directory.remove() }
        let bytes = Data(repeating: 7, count: 3000)
        let probe = try DiskCache(directory: probeDirectory.url, config: ImageCacheConfig(diskSweepInterval: nil))
        try await probe.store(bytes, forKey: "probe")
        let perEntry = await probe.totalSize()   // what one entry occupies on this file system
        let cache = try DiskCache(directory: directory.url, config: ImageCacheConfig(maxDiskSize: perEntry * 5 - 1, diskSweepInterval: nil))
        let metadata = DiskCacheMetadata(entityTag: "\"e\"", pixelSize: PixelSize(width: 2, height: 3))
        for index in 1...4 { try await cache.store(bytes, forKey: "k\(index)", metadata: metadata) }
        let hit = try #require(try cache.readWithoutWaiting(forKey: "k1"))
        #expect(hit.data == bytes && hit.metadata == metadata)
        #expect(try cache.readWithoutWaiting(forKey: "absent") == nil)
        try await cache.store(bytes, forKey: "k5")   // over the limit: down to half, least recently used first
        #expect(await cache.contains("k1"), "k1 was read after k2...k4 were stored, so it is not the least recently used")
        #expect(await cache.contains("k5"))
        #expect(await !cache.contains("k2"))
    }

    @Test func recordsTheAccessOnTheFileUnlessItIsRecent() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try DiskCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil))
        try await cache.store(Data([1, 2, 3]), forKey: "k", metadata: DiskCacheMetadata(entityTag: "\"e\""))
        let path = cache.path(forKey: "k")
        func setAccessTime(secondsAgo: Int) {
            var info = stat()
            _ = stat(path, &info)
            var times = [timespec(tv_sec: time(nil) - secondsAgo, tv_nsec: 0), info.st_mtim]
            _ = utimensat(AT_FDCWD, path, &times, 0)
        }
        func accessTime() -> Int {
            var info = stat()
            _ = stat(path, &info)
            return info.st_atim.tv_sec
        }
        setAccessTime(secondsAgo: 3600)
        #expect(try cache.readWithoutWaiting(forKey: "k")?.metadata?.entityTag == "\"e\"")
        #expect(abs(accessTime() - time(nil)) <= 5, "an hour-old access time is brought up to now")
        // A recent access time is left alone. It is set 30 s ahead: one set in the past would be older
        // than the change time utimensat gives the file, and a `relatime` mount updates such an
        // access time on the read itself.
        setAccessTime(secondsAgo: -30)
        let recent = accessTime()
        #expect(try cache.readWithoutWaiting(forKey: "k") != nil)
        #expect(accessTime() == recent, "an access time within the last minute is not written again")
    }
}
