import Foundation
import Testing
@testable import WebImage

#if canImport(Glibc)
import Glibc
#endif

/// A cache directory that stops taking writes, made as realistically as this machine allows, and
/// always undone. Every way really fails writes (``makeFull(under:)`` proves it with a probe write).
struct FullDisk {
    /// What the test asks for.
    enum Method: String, Sendable, CaseIterable {
        /// A real full file system when it can be had (root and `mount` works), else the best fallback.
        case mostRealistic
        /// The cache directory replaced by a regular file once the cache has opened it (works anywhere).
        case fileInPlaceOfDirectory
    }

    /// What was made.
    enum Kind: String, Sendable {
        /// A 64 KiB tmpfs mounted over a fresh folder and filled to all but 8 KiB: a write starts, then
        /// fails midway with ENOSPC.
        case tinyFileSystem
        /// The cache directory made read-only (mode 0555; not for root, whom modes do not stop): EACCES.
        case readOnlyDirectory
        /// The cache directory replaced by a regular file: every path in it fails with ENOTDIR.
        case fileInPlaceOfDirectory
    }

    let kind: Kind
    /// The mount point (for a tmpfs) or plain folder holding ``directory``.
    let root: TemporaryDirectory
    /// Bytes left free on the tmpfs once it is filled.
    static let headroom = 8 << 10

    /// Where the cache goes. Open the cache over it first, then call ``makeFull(under:)``.
    var directory: URL { root.url.appendingPathComponent("cache", isDirectory: true) }

    /// The `errno` a write into ``directory`` fails with once full.
    var expectedErrno: Int32 {
        switch kind {
        case .tinyFileSystem: ENOSPC
        case .readOnlyDirectory: EACCES
        case .fileInPlaceOfDirectory: ENOTDIR
        }
    }

    /// Runs `body` with a fresh directory that still takes writes until `makeFull(under:)`, and undoes
    /// everything afterwards (unmounting a tmpfs), whether `body` returns or throws.
    static func with(_ method: Method, _ body: (FullDisk) async throws -> Void) async throws {
        let disk = try await prepare(method)
        do {
            try await body(disk)
        } catch {
            await disk.release()
            throw error
        }
        await disk.release()
    }

    private static func prepare(_ method: Method) async throws -> FullDisk {
        let root = TemporaryDirectory("FullDisk")
        try FileManager.default.createDirectory(at: root.url, withIntermediateDirectories: true)
        var kind = Kind.fileInPlaceOfDirectory
        if method == .mostRealistic {
            if geteuid() != 0 {
                kind = .readOnlyDirectory
            } else if await run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", root.path]) == 0 {
                kind = .tinyFileSystem
            }
        }
        let disk = FullDisk(kind: kind, root: root)
        do {
            try FileManager.default.createDirectory(at: disk.directory, withIntermediateDirectories: false)
        } catch {
            await disk.release()
            throw error
        }
        return disk
    }

    /// Stops ``directory`` taking writes, once `cache`'s start-up sweep (which would make a removed
    /// directory again) has ended; then checks with a probe that a write there really fails.
    func makeFull(under cache: DiskCache) async throws {
        await cache.waitForStartUpSweep()
        switch kind {
        case .tinyFileSystem:
            let filler = root.path + "/filler"
            let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            try #require(fd >= 0, "cannot create \(filler): \(String(cString: strerror(errno)))")
            let block = [UInt8](repeating: 0xAB, count: 4096)
            var filled = 0
            while true {
                let written = write(fd, block, block.count)
                if written <= 0 { break }
                filled += written
            }
            let failure = errno
            // Give back a little, so that the next write starts and then runs out midway.
            let truncated = ftruncate(fd, off_t(max(0, filled - Self.headroom)))
            close(fd)
            try #require(failure == ENOSPC, "filling the tmpfs ended with \(String(cString: strerror(failure)))")
            try #require(truncated == 0)
            try #require(freeBytes() == Self.headroom, "free bytes on the tmpfs: \(freeBytes())")
        case .readOnlyDirectory:
            try #require(chmod(directory.path, 0o555) == 0)
        case .fileInPlaceOfDirectory:
            try FileManager.default.removeItem(at: directory)
            try Data("not a directory".utf8).write(to: directory)
        }
        let probe = directory.path + "/probe"
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        var failure = fd < 0 ? errno : 0
        if fd >= 0 {
            let bytes = [UInt8](repeating: 1, count: 64 << 10)
            if write(fd, bytes, bytes.count) != bytes.count { failure = errno }
            close(fd)
            unlink(probe)
        }
        try #require(failure == expectedErrno,
                     "a probe write into the \(kind) directory must fail with \(expectedErrno), got \(failure)")
    }

    /// Free bytes on the file system holding ``root``.
    func freeBytes() -> Int {
        var info = statvfs()
        guard statvfs(root.path, &info) == 0 else { return -1 }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    /// Waits (up to 10 s) for the file system to have `bytes` free. A process another test starts
    /// holds a copy of the descriptor table until it runs its program (when close-on-exec descriptors
    /// go): a temporary file unlinked and closed meanwhile keeps its blocks until then. Seen once in
    /// the whole suite: 0 bytes free where the failed write had given its 8 KiB back.
    func waitForBlocks(_ bytes: Int) async throws {
        try await waitUntil(timeout: .seconds(10)) { freeBytes() == bytes }
    }

    /// Every name in ``directory``, hidden ones included (none when it is not a directory).
    func entries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    private func release() async {
        switch kind {
        case .tinyFileSystem:
            if await Self.run("/bin/umount", [root.path]) != 0 {
                _ = await Self.run("/bin/umount", ["-l", root.path])   // busy: detach it anyway
            }
        case .readOnlyDirectory:
            chmod(directory.path, 0o700)
        case .fileInPlaceOfDirectory:
            break
        }
        root.remove()
    }

    /// Runs a tool to its end without blocking a thread: its exit status, or -1 if it cannot start.
    static func run(_ tool: String, _ arguments: [String]) async -> Int32 {
        (try? await ChildProcess.run(arguments, executable: URL(fileURLWithPath: tool)))?.status ?? -1
    }
}

/// A disk that cannot take writes: stores fail with a typed error and leave nothing behind, and the
/// pipeline keeps working from the network and the memory tier.
@Suite struct DiskFullTests {
    let server: TestHTTPServer
    /// 96×96 RGB noise: about 27 KB, more than the tmpfs's headroom, so its write fails midway.
    let picture: Data

    init() throws {
        server = try TestHTTPServer()
        picture = try HostileServerTests.noisePNG(size: 96)
    }

    static let config = ImageCacheConfig(diskSweepInterval: nil)

    /// Nothing reached the disk: no entry, no temporary file, no sidecar, and on the tmpfs every byte
    /// of a failed write given back.
    func expectNothingOnDisk(_ disk: FullDisk, _ cache: DiskCache, key: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(disk.entries() == [], "left in the cache directory", sourceLocation: sourceLocation)
        #expect(try await cache.data(forKey: key) == nil, sourceLocation: sourceLocation)
        #expect(await !cache.contains(key), sourceLocation: sourceLocation)
        #expect(await cache.count() == 0, sourceLocation: sourceLocation)
        #expect(await cache.totalSize() == 0, sourceLocation: sourceLocation)
        if disk.kind == .tinyFileSystem {
            try await disk.waitForBlocks(FullDisk.headroom)
            #expect(disk.freeBytes() == FullDisk.headroom, "a failed write kept its blocks", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: FullDisk.Method.allCases)
    func aDiskCacheStoreFailsWithWriteFailedAndLeavesNothing(_ method: FullDisk.Method) async throws {
        try await FullDisk.with(method) { disk in
            let cache = try DiskCache(directory: disk.directory, config: Self.config)
            try await disk.makeFull(under: cache)
            let key = "http://example.com/full.png"
            for metadata in [nil, DiskCacheMetadata(entityTag: "\"v1\"", maxAge: 60)] {
                do throws(DiskCacheError) {
                    try await cache.store(picture, forKey: key, metadata: metadata)
                    Issue.record("a store on a full \(disk.kind) disk succeeded")
                } catch {
                    #expect(error == .writeFailed(path: cache.path(forKey: key), errno: disk.expectedErrno))
                    #expect(error.isNoSpace == (disk.kind == .tinyFileSystem))
                }
                try await expectNothingOnDisk(disk, cache, key: key)
            }
        }
    }

    @Test(arguments: FullDisk.Method.allCases)
    func aFailedReplacementKeepsTheOldEntryAndItsAccounting(_ method: FullDisk.Method) async throws {
        try await FullDisk.with(method) { disk in
            let cache = try DiskCache(directory: disk.directory, config: Self.config)
            let key = "http://example.com/kept.png"
            let old = try encodedPicture()
            let oldMetadata = DiskCacheMetadata(entityTag: "\"old\"")
            try await cache.store(old, forKey: key, metadata: oldMetadata)
            let oldFiles = disk.entries()
            let oldSize = await cache.totalSize()
            #expect(oldFiles.count == 1)
            try await disk.makeFull(under: cache)
            let free = disk.freeBytes()

            await #expect(throws: DiskCacheError.writeFailed(path: cache.path(forKey: key), errno: disk.expectedErrno)) {
                try await cache.store(picture, forKey: key, metadata: DiskCacheMetadata(entityTag: "\"new\""))
            }
            #expect(await cache.count() == 1)
            #expect(await cache.totalSize() == oldSize)
            if disk.kind == .fileInPlaceOfDirectory {
                #expect(try await cache.data(forKey: key) == nil)   // the directory itself is gone
            } else {
                #expect(disk.entries() == oldFiles, "a failed replacement left files behind")
                #expect(try await cache.data(forKey: key) == old)
                #expect(await cache.metadata(forKey: key) == oldMetadata)
                try await disk.waitForBlocks(free)
                #expect(disk.freeBytes() == free)
            }
        }
    }

    @Test(arguments: FullDisk.Method.allCases)
    func anImageCacheStoreFailsButTheMemoryTierKeepsTheImage(_ method: FullDisk.Method) async throws {
        try await FullDisk.with(method) { disk in
            let cache = ImageCache(directory: disk.directory, config: Self.config)
            let diskCache = try #require(cache.diskCache)
            try await disk.makeFull(under: diskCache)
            let image = try CoderRegistry.shared.decode(picture)
            let key = "http://example.com/kept.png"
            await #expect(throws: DiskCacheError.writeFailed(path: diskCache.path(forKey: key), errno: disk.expectedErrno)) {
                try await cache.store(image, data: picture, forKey: key)
            }
            #expect(cache.imageFromMemory(forKey: key) === image)
            #expect(await cache.containsImage(forKey: key) == .memory)
            #expect(await !cache.diskImageExists(forKey: key))
            await #expect(throws: DiskCacheError.self) {
                try await cache.storeInBackground(image, data: picture, forKey: key + "?background").value
            }
            await #expect(throws: DiskCacheError.self) { try await cache.storeData(picture, forKey: key + "?data") }
            #expect(cache.statistics.bytesWritten == 0)
            try await expectNothingOnDisk(disk, diskCache, key: key)
        }
    }

    @Test(arguments: FullDisk.Method.allCases)
    func waitStoreCacheFailsTheLoadButTheImageIsServedFromMemory(_ method: FullDisk.Method) async throws {
        server.route("/wait.png", .data(picture, contentType: "image/png"))
        try await FullDisk.with(method) { disk in
            let cache = ImageCache(directory: disk.directory, config: Self.config)
            let diskCache = try #require(cache.diskCache)
            let manager = WebImageManager(cache: cache, loader: Downloader())
            try await disk.makeFull(under: diskCache)
            let url = server.url("/wait.png")

            do {
                let result = try await manager.loadImage(url: url, options: .waitStoreCache)
                Issue.record("a load with .waitStoreCache on a full disk succeeded (\(result.cacheType))")
            } catch let error as WebImageError {
                guard case .cacheStoreFailed(let diskError, url: url) = error else {
                    Issue.record("expected cacheStoreFailed, got \(error)")
                    return
                }
                #expect(diskError == DiskCacheError.writeFailed(path: diskCache.path(forKey: url.absoluteString), errno: disk.expectedErrno))
                #expect(error.isTransient)
            }
            #expect(!manager.isFailedURL(url), "a full disk is no fault of the URL")
            let again = try await manager.loadImage(url: url)
            #expect(again.cacheType == .memory)
            #expect(again.image.size == PixelSize(width: 96, height: 96))
            #expect(server.requestCount(for: "/wait.png") == 1)
            await manager.shutdown()
            try await expectNothingOnDisk(disk, diskCache, key: try #require(manager.cacheKey(for: url)))
        }
    }

    @Test(arguments: FullDisk.Method.allCases)
    func withoutWaitingTheImageLoadsFromTheNetworkThenFromMemory(_ method: FullDisk.Method) async throws {
        server.route("/background.png", .data(picture, contentType: "image/png"))
        try await FullDisk.with(method) { disk in
            let cache = ImageCache(directory: disk.directory, config: Self.config)
            let diskCache = try #require(cache.diskCache)
            let manager = WebImageManager(cache: cache, loader: Downloader())
            try await disk.makeFull(under: diskCache)
            let url = server.url("/background.png")

            let first = try await manager.loadImage(url: url)
            #expect(first.cacheType == .none)
            #expect(first.data == picture)
            let second = try await manager.loadImage(url: url)
            #expect(second.cacheType == .memory)
            #expect(second.image === first.image)
            #expect(server.requestCount(for: "/background.png") == 1)

            // A thumbnail stores the original's bytes on disk first: that write fails the same way.
            let context = WebImageContext(thumbnailPixelSize: PixelSize(width: 32, height: 32))
            do {
                _ = try await manager.loadImage(url: url, options: [.waitStoreCache, .fromLoaderOnly], context: context)
                Issue.record("a thumbnail load with .waitStoreCache on a full disk succeeded")
            } catch let error as WebImageError {
                guard case .cacheStoreFailed(_, url: url) = error else {
                    Issue.record("expected cacheStoreFailed, got \(error)")
                    return
                }
            }
            // As for a plain load, the thumbnail reached memory before the disk write failed.
            let thumbnail = try await manager.loadImage(url: url, options: .fromCacheOnly, context: context)
            #expect(thumbnail.cacheType == .memory)
            #expect(thumbnail.image.size == PixelSize(width: 32, height: 32))
            // The first load's disk write runs in the background: let it fail before looking at the disk
            // (under load it can still be mid-write here, its blocks not yet given back). A shutdown
            // waits for the manager's background writes.
            await manager.shutdown()
            try await expectNothingOnDisk(disk, diskCache, key: try #require(manager.cacheKey(for: url)))
        }
    }
}
