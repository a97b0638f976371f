import Foundation
import Testing
@testable import WebImage

/// The entries a disk cache keeps open after a hit (`DiskOpenFiles`): a hit of an open entry reads
/// the same bytes and metadata as a first read, never an entry replaced or removed since (by the
/// cache or behind its back), and the number of open descriptors stays within the bound.
@Suite struct DiskOpenFilesTests {
    func makeCache(_ directory: TemporaryDirectory, maxOpenDiskFiles: Int = 128) throws -> DiskCache {
        try DiskCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil, maxOpenDiskFiles: maxOpenDiskFiles))
    }

    /// The process's open descriptors on files in `directory` (`/proc/self/fd`; other tests running
    /// at the same time open descriptors of their own, elsewhere).
    func openDescriptors(in directory: TemporaryDirectory) -> Int {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.filter { descriptor in
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + descriptor)
            return target?.hasPrefix(directory.path + "/") == true
        }.count
    }

    @Test func aSecondHitReadsTheOpenEntry() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        let bytes = Data((0..<30_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let metadata = DiskCacheMetadata(entityTag: "\"v1\"", pixelSize: PixelSize(width: 4, height: 5))
        try await cache.store(bytes, forKey: "k", metadata: metadata)
        #expect(cache.openFiles.count == 0)
        let first = try #require(try cache.readWithoutWaiting(forKey: "k"))
        #expect(cache.openFiles.count == 1, "the first hit keeps the entry open")
        let kept = try #require(cache.openFiles.file(forKey: "k"))
        let second = try #require(try cache.readWithoutWaiting(forKey: "k"))
        #expect(cache.openFiles.file(forKey: "k") === kept, "the second hit reads the same open file")
        #expect(first.data == bytes && second.data == bytes)
        #expect(first.metadata == metadata && second.metadata == metadata)
    }

    @Test func anEntryStoredAgainIsReadAnew() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        try await cache.store(Data([1, 2, 3]), forKey: "k", metadata: DiskCacheMetadata(entityTag: "\"old\""))
        _ = try cache.readWithoutWaiting(forKey: "k")
        try await cache.store(Data([4, 5, 6, 7]), forKey: "k", metadata: DiskCacheMetadata(entityTag: "\"new\""))
        #expect(cache.openFiles.count == 0, "storing the name closes what was open under it")
        let hit = try #require(try cache.readWithoutWaiting(forKey: "k"))
        #expect(hit.data == Data([4, 5, 6, 7]) && hit.metadata?.entityTag == "\"new\"")
        try await cache.setMetadata(DiskCacheMetadata(entityTag: "\"newer\""), forKey: "k")
        #expect(try cache.readWithoutWaiting(forKey: "k")?.metadata?.entityTag == "\"newer\"")
    }

    /// Another process sharing the directory replaces an entry the way the cache writes (a file renamed
    /// over it), with bytes of the same size: the open descriptor still reads the old inode, which
    /// only `fstat`'s link count and inode number tell apart.
    @Test func anEntryReplacedBehindTheCachesBackIsNotServedFromTheOldFile() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        try await cache.store(Data([1, 1, 1, 1]), forKey: "k", metadata: DiskCacheMetadata(entityTag: "\"a\""))
        #expect(try cache.readWithoutWaiting(forKey: "k")?.data == Data([1, 1, 1, 1]))
        let elsewhere = try DiskCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil))   // another process's cache
        try await elsewhere.store(Data([2, 2, 2, 2]), forKey: "k", metadata: DiskCacheMetadata(entityTag: "\"b\""))
        let hit = try #require(try cache.readWithoutWaiting(forKey: "k"))
        #expect(hit.data == Data([2, 2, 2, 2]) && hit.metadata?.entityTag == "\"b\"")
        #expect(cache.openFiles.count == 1, "the stale descriptor was replaced by the new file's")
    }

    @Test func anEntryRemovedBehindTheCachesBackIsAMiss() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        try await cache.store(Data([9, 9]), forKey: "k")
        #expect(try cache.readWithoutWaiting(forKey: "k") != nil)
        #expect(unlink(cache.path(forKey: "k")) == 0)
        #expect(try cache.readWithoutWaiting(forKey: "k") == nil)
        #expect(cache.openFiles.count == 0 && openDescriptors(in: directory) == 0, "the unlinked file's descriptor is closed, freeing its space")
    }

    @Test func aSweepClosesTheFilesAnotherProcessRemoved() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        for key in ["kept", "removed"] {
            try await cache.store(Data(repeating: 2, count: 100), forKey: key)
            _ = try cache.readWithoutWaiting(forKey: key)
        }
        #expect(unlink(cache.path(forKey: "removed")) == 0)
        #expect(openDescriptors(in: directory) == 2, "the unlinked file is still open, its space still taken")
        await cache.removeExpiredData()
        #expect(cache.openFiles.file(forKey: "removed") == nil && cache.openFiles.file(forKey: "kept") != nil)
        #expect(openDescriptors(in: directory) == 1)
    }

    @Test func removingEvictingAndEmptyingCloseTheDescriptors() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        for key in ["a", "b", "c"] {
            try await cache.store(Data(repeating: 1, count: 100), forKey: key)
            _ = try cache.readWithoutWaiting(forKey: key)
        }
        #expect(cache.openFiles.count == 3 && openDescriptors(in: directory) == 3)
        await cache.remove(forKey: "a")
        #expect(cache.openFiles.file(forKey: "a") == nil && cache.openFiles.count == 2)
        #expect(try cache.readWithoutWaiting(forKey: "a") == nil)
        await cache.removeAll()
        #expect(cache.openFiles.count == 0)
        #expect(openDescriptors(in: directory) == 0, "every descriptor the cache held is closed")
    }

    @Test func theNumberOfOpenDescriptorsIsBounded() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory, maxOpenDiskFiles: 4)
        let keys = (0..<20).map { "key-\($0)" }
        for key in keys { try await cache.store(Data(key.utf8), forKey: key) }
        for _ in 0..<3 {
            for key in keys { #expect(try cache.readWithoutWaiting(forKey: key)?.data == Data(key.utf8)) }
        }
        #expect(cache.openFiles.count == 4)
        #expect(openDescriptors(in: directory) == 4)
    }

    @Test func aCapacityOfZeroKeepsNothingOpen() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory, maxOpenDiskFiles: 0)
        try await cache.store(Data([1]), forKey: "k")
                #expect(try cache.readWithoutWaiting(forKey: "k")?.data == Data([1]))
        #expect(try cache.readWithoutWaiting(forKey: "k")?.data == Data([1]))
        #expect(cache.openFiles.count == 0 && openDescriptors(in: directory) == 0)
    }

    @Test func theCapacityIsAnEighthOfTheOpenFileLimitAtMost() {
        var limit = rlimit()
        #expect(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let expected = limit.rlim_cur == rlim_t.max ? Int.max : Int(limit.rlim_cur / 8)
        #expect(DiskOpenFiles(capacity: .max).capacity == expected)
        #expect(DiskOpenFiles(capacity: 3).capacity == min(3, expected))
        #expect(DiskOpenFiles(capacity: -1).capacity == 0)
    }

    /// A reader that opened a file before the cache dropped its name (a store renamed a new file over
    /// it meanwhile) must not keep that old file open.
    @Test func aFileOpenedBeforeADropIsNotKept() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let path = directory.url.appendingPathComponent("f").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data([1])))
        let files = DiskOpenFiles(capacity: 8)
        func opened() -> OpenDiskFile {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            var info = stat()
            _ = fstat(fd, &info)
            return OpenDiskFile(descriptor: fd, name: "f", info: info, metadata: nil)
        }
        let generation = files.generation()
        files.invalidate(name: "f")
        #expect(!files.insert(opened(), forKey: "k", opened: generation))
        #expect(files.file(forKey: "k") == nil)
        #expect(files.insert(opened(), forKey: "k", opened: files.generation()))
        #expect(files.file(forKey: "k") != nil)
    }

    /// Readers and a writer of one key at once: every read is one whole version, with its own metadata.
    @Test func concurrentReadsAndStoresNeverMixVersions() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = try makeCache(directory)
        func version(_ n: Int) -> Data { Data(repeating: UInt8(n), count: 8192 + n) }
        try await cache.store(version(0), forKey: "k", metadata: DiskCacheMetadata(entityTag: "\"0\""))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for n in 1...40 { try await cache.store(version(n), forKey: "k", metadata: DiskCacheMetadata(entityTag: "\"\(n)\"")) }
            }
            for _ in 0..<2 {
                group.addTask {
                    for _ in 0..<400 {
                        guard let hit = try cache.readWithoutWaiting(forKey: "k") else { continue }
                        let n = hit.data.count - 8192
                        #expect(hit.data == version(n) && hit.metadata?.entityTag == "\"\(n)\"")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try cache.readWithoutWaiting(forKey: "k")?.data == version(40))
    }
}
