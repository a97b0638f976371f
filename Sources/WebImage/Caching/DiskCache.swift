import Foundation
import Synchronization

/// A directory of files named by the MD5 of their keys, with an age limit and a size limit that
/// it enforces while the process runs.
///
/// - Writes are crash-safe: a temporary file in the same directory, renamed into place; a process
///   killed at any moment never leaves an entry that reads back half-written.
/// - An in-memory index of the directory (built at start, kept up to date) answers ``contains(_:)``
///   and ``totalSize()`` without a system call. It takes 53–107 bytes an entry (`DiskCacheIndex`):
///   a million entries cost 50–100 MiB of memory.
/// - Every hit records its access time on the file itself, so least-recently-used sweeps and
///   ``DiskExpireType/accessDate`` work on `relatime`/`noatime` mounts and across restarts.
/// - Sweeps (``removeExpiredData()``) run at start-up, every ``ImageCacheConfig/diskSweepInterval``,
///   and whenever a store pushes the total past ``ImageCacheConfig/maxDiskSize``: expired entries go
///   first, then least recently used ones until the total is at most half the limit.
///
/// - If the directory is removed while the process runs (a `tmp` cleaner, an operator), the next
///   store or sweep creates it again and forgets the entries that went with it.
/// - An empty key is no key: storing under it does nothing, and reading it is a miss.
///
/// Sizes are bytes allocated on disk (`st_blocks × 512`), which is what fills a disk.
public actor DiskCache {
    /// The directory holding this cache's files.
    public nonisolated let directory: URL
    /// `directory.path`, kept: URL's `path` is computed again on every call.
    nonisolated let directoryPath: String
    /// The limits and behaviour this cache was created with.
    public nonisolated let config: ImageCacheConfig

    private typealias Entry = DiskCacheIndex.Entry

    private var index = DiskCacheIndex()
    private var indexedBytes = 0
    private var sweepTask: Task<Void, Never>?
    /// Cleared for good by ``stopSweeping()`` (which ``runSweeps()`` calls): no sweep task of the cache's own after.
    private var ownsSweeping = true
    /// Where sweeps are reported (``ImageCache/observer`` sets it).
    nonisolated let observerSlot = ObserverSlot()
    /// Access times recorded by ``readWithoutWaiting(forKey:)`` off the actor, by file name, applied to
    /// the index before anything reads its access times (LRU eviction, sweeps).
    nonisolated let recentAccesses = Mutex<[String: Double]>([:])
    /// Entries kept open after a hit, by key (``ImageCacheConfig/maxOpenDiskFiles``).
    nonisolated let openFiles: DiskOpenFiles
    /// The start-up sweep, which `init` cannot run itself (it is isolated to the actor).
    private nonisolated let startUp = BackgroundTasks()

    /// Opens (creating if needed, mode 0700) the cache directory and indexes what it holds, then
    /// sweeps it in the background.
    ///
    /// - Parameters:
    ///   - namespace: the sub-folder of this cache under the base folder; default `"default"`.
    ///   - config: limits and the base folder (``ImageCacheConfig/diskCacheDirectory``, default
    ///     `$XDG_CACHE_HOME/WebImage` or `~/.cache/WebImage`).
    /// - Throws: ``DiskCacheError/directoryUnavailable(path:errno:)`` if the directory cannot be
    ///   created or read.
    public init(namespace: String = "default", config: ImageCacheConfig = ImageCacheConfig()) throws(DiskCacheError) {
        let base = config.diskCacheDirectory ?? ImageCacheConfig.defaultDiskCacheDirectory
        try self.init(directory: base.appendingPathComponent(namespace, isDirectory: true), config: config)
    }

    /// Opens (creating if needed, mode 0700) the cache in exactly `directory`.
    /// - Throws: ``DiskCacheError/directoryUnavailable(path:errno:)``.
    public init(directory: URL, config: ImageCacheConfig = ImageCacheConfig()) throws(DiskCacheError) {
        self.directory = directory
        self.config = config
        let path = directory.path
        self.directoryPath = path
        self.openFiles = DiskOpenFiles(capacity: config.maxOpenDiskFiles)
        try Self.makeDirectory(path)
        let listing = try DiskFile.list(path)
        var index = DiskCacheIndex()
        var total = 0
        for file in listing where !file.name.hasPrefix(".") {
            index[file.name] = Entry(allocatedBytes: file.allocatedBytes, accessTime: file.accessTime, modificationTime: file.modificationTime)
            total += file.allocatedBytes
        }
        self.index = index
        self.indexedBytes = total
        Self.removeLeftovers(in: path, listing: listing, index: index, temporaryGrace: 0)
        startUp.start { await self.startSweeping() }
    }

    /// Returns once the sweep started by `init` has ended. That sweep makes the directory again if it
    /// is gone, so code that takes the directory away on purpose (tests of a removed or full disk)
    /// waits for it first.
    func waitForStartUpSweep() async {
        await startUp.waitUntilIdle()
    }

    deinit {
        sweepTask?.cancel()
    }

    /// The path the entry for `key` is (or would be) stored at. Pure: no system call.
    public nonisolated func path(forKey key: String) -> String {
        directoryPath + "/" + DiskCacheFileName.make(forKey: key)
    }

    /// Whether an entry for `key` is in the cache, from the in-memory index (no system call).
    /// A file removed behind the cache's back is noticed at the next read or sweep.
    public func contains(_ key: String) -> Bool {
        indexedName(forKey: key) != nil
    }

    /// The bytes stored for `key`, or `nil` on a miss. Looks under the name with the key's
    /// extension, then without it, then in ``ImageCacheConfig/additionalReadPaths``. A hit records
    /// the access time. A file deleted behind the cache's back is a miss.
    /// - Throws: ``DiskCacheError/readFailed(path:errno:)`` when the file exists but cannot be read.
    public func data(forKey key: String) throws(DiskCacheError) -> Data? {
        guard !key.isEmpty else { return nil }
        if let name = indexedName(forKey: key) {
            let path = directoryPath + "/" + name
            if let data = try DiskFile.read(path) {
                DiskFile.touch(path)
                index[name]?.accessTime = Self.now()
                return data
            }
            DiskFile.remove(path)   // its sidecar, if any, must not outlive it
            forget(name)
        }
        let name = DiskCacheFileName.make(forKey: key)
        for folder in config.additionalReadPaths {
            for candidate in [name, DiskCacheFileName.withoutExtension(name)].compactMap({ $0 }) {
                if let data = try DiskFile.read(folder.path + "/" + candidate) { return data }
            }
        }
        return nil
    }

    /// Applies the access times ``readWithoutWaiting(forKey:)`` recorded.
    private func applyRecentAccesses() {
        let accesses = recentAccesses.withLock { accesses in
            defer { accesses.removeAll(keepingCapacity: true) }
            return accesses
        }
        for (name, time) in accesses where index[name] != nil {
            index[name]!.accessTime = max(index[name]!.accessTime, time)
        }
    }

    /// ``data(forKey:)`` and ``metadata(forKey:)`` in one call (one hop onto the actor): what a
    /// byte-level hit (an encoded variant) needs.
    /// - Throws: ``DiskCacheError/readFailed(path:errno:)`` when the file exists but cannot be read.
    public func dataAndMetadata(forKey key: String) throws(DiskCacheError) -> (data: Data, metadata: DiskCacheMetadata?)? {
        guard let data = try data(forKey: key) else { return nil }
        return (data, metadata(forKey: key))
    }

    /// The metadata stored with the entry for `key`, or `nil` when there is no entry or no metadata.
    public func metadata(forKey key: String) -> DiskCacheMetadata? {
        guard let name = indexedName(forKey: key),
              let bytes = DiskFile.metadata(of: directoryPath + "/" + name) else { return nil }
        return DiskCacheMetadata.decoded(from: bytes)
    }

    /// Stores `data` for `key` (replacing any entry) with optional metadata, crash-safely; then, if
    /// the total passes ``ImageCacheConfig/maxDiskSize``, sweeps down to half of it.
    /// - Throws: ``DiskCacheError/writeFailed(path:errno:)`` (disk full, read-only, ...); the cache
    ///   then holds exactly what it held before.
    public func store(_ data: Data, forKey key: String, metadata: DiskCacheMetadata? = nil) throws(DiskCacheError) {
        guard !key.isEmpty else { return }
        let name = DiskCacheFileName.make(forKey: key)
        let path = directoryPath + "/" + name
        let encoded = metadata?.encoded
        let size: Int
        do {
            // A sidecar can only exist for a name already on disk (the index knows every file at start).
            size = try DiskFile.write(data, to: path, metadata: encoded, durability: config.diskWriteDurability,
                                      replacing: index[name] != nil)
        } catch where error.errno == ENOENT {
            // The directory went away behind our back: make it again, and the entries with it are gone.
            guard try recreateDirectory() else { throw error }
            size = try DiskFile.write(data, to: path, metadata: encoded, durability: config.diskWriteDurability, replacing: false)
        }
        openFiles.invalidate(name: name)   // after the rename: a reader opening the name now gets the new file
        let now = Self.now()
        indexedBytes += size - (index[name]?.allocatedBytes ?? 0)
        index[name] = Entry(allocatedBytes: size, accessTime: now, modificationTime: now)
        if config.maxDiskSize > 0 && indexedBytes > config.maxDiskSize {
            let evicted = evictLeastRecentlyUsed(downTo: config.maxDiskSize / 2)
            let report = DiskCacheSweepReport(expiredCount: 0, evictedCount: evicted.count, removedBytes: evicted.bytes,
                                              remainingCount: index.count, remainingBytes: indexedBytes)
            observerSlot.emit { .diskSwept(report) }
        }
        checkInvariants()
    }

    /// Replaces the metadata of an existing entry (rewrites the entry crash-safely).
    /// - Returns: whether an entry existed.
    /// - Throws: ``DiskCacheError`` from reading or writing the entry.
    @discardableResult
    public func setMetadata(_ metadata: DiskCacheMetadata?, forKey key: String) throws(DiskCacheError) -> Bool {
        guard let name = indexedName(forKey: key), let data = try DiskFile.read(directoryPath + "/" + name) else { return false }
        try store(data, forKey: key, metadata: metadata)
        return true
    }

    /// Removes the entry for `key`, if any.
    public func remove(forKey key: String) {
        let name = DiskCacheFileName.make(forKey: key)
        for candidate in [name, DiskCacheFileName.withoutExtension(name)].compactMap({ $0 }) {
            DiskFile.remove(directoryPath + "/" + candidate)
            forget(candidate)
        }
        checkInvariants()
    }

    /// Removes every entry (the directory stays).
    public func removeAll() {
        if let listing = try? DiskFile.list(directoryPath) {
            for file in listing { unlink(directoryPath + "/" + file.name) }
        }
        index.removeAll()
        indexedBytes = 0
        openFiles.invalidateAll()
    }

    /// The bytes the entries occupy on disk, from the index (no system call).
    public func totalSize() -> Int { indexedBytes }

    /// The number of entries, from the index (no system call).
    public func count() -> Int { index.count }

    /// Re-reads the directory, removes entries older than ``ImageCacheConfig/maxDiskAge`` (by
    /// ``ImageCacheConfig/diskExpireType``), then, if the total still passes
    /// ``ImageCacheConfig/maxDiskSize``, removes least recently used entries until it is at most half.
    /// - Returns: what was removed and what remains.
    @discardableResult
    public func removeExpiredData() -> DiskCacheSweepReport {
        if let listing = currentListing() {
            var fresh = DiskCacheIndex()
            var total = 0
            for file in listing where !file.name.hasPrefix(".") {
                fresh[file.name] = Entry(allocatedBytes: file.allocatedBytes, accessTime: file.accessTime, modificationTime: file.modificationTime)
                total += file.allocatedBytes
            }
            index = fresh
            indexedBytes = total
            openFiles.invalidate { fresh[$0] == nil }   // files another process removed: their space comes back now
            Self.removeLeftovers(in: directoryPath, listing: listing, index: fresh, temporaryGrace: 60)
        }
        var report = DiskCacheSweepReport(expiredCount: 0, evictedCount: 0, removedBytes: 0, remainingCount: 0, remainingBytes: 0)
        if config.maxDiskAge >= 0 {
            let cutoff = Self.now() - config.maxDiskAge
            for (name, entry) in index.leastRecentlyUsed(where: { date(of: $0) < cutoff }) {
                DiskFile.remove(directoryPath + "/" + name)
                forget(name)
                report.expiredCount += 1
                report.removedBytes += entry.allocatedBytes
            }
        }
        if config.maxDiskSize > 0 && indexedBytes > config.maxDiskSize {
            let evicted = evictLeastRecentlyUsed(downTo: config.maxDiskSize / 2)
            report.evictedCount = evicted.count
            report.removedBytes += evicted.bytes
        }
        report.remainingCount = index.count
        report.remainingBytes = indexedBytes
        observerSlot.emit { [report] in .diskSwept(report) }
        checkInvariants()
        return report
    }

    /// Runs the sweeps in the calling task (every ``ImageCacheConfig/diskSweepInterval``) instead of
    /// the cache's own timer, until that task is cancelled; the timer does not come back after.
    /// Without an interval it only waits for cancellation.
    public func runSweeps() async {
        stopSweeping()
        guard let interval = config.diskSweepInterval else { return await waitForCancellation() }
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { return }
            removeExpiredData()
        }
    }

    /// Stops the cache's own sweep timer for good (``ImageCache/shutdown()`` calls it). Stores still
    /// sweep when they pass the size limit; ``removeExpiredData()`` still works.
    public func stopSweeping() {
        ownsSweeping = false
        sweepTask?.cancel()
        sweepTask = nil
    }

    // MARK: - Internals

    /// Creates `path` (mode 0700) and any missing parents with the same mode; an existing directory is fine.
    /// - Returns: whether `path` itself was created (`false`: something already had that name).
    /// - Throws: ``DiskCacheError/directoryUnavailable(path:errno:)``.
    @discardableResult
    private static func makeDirectory(_ path: String) throws(DiskCacheError) -> Bool {
        if mkdir(path, 0o700) == 0 { return true }
        guard errno != EEXIST else { return false }
        var partial = ""
        for component in path.split(separator: "/") {
            partial += "/" + component
            if mkdir(partial, 0o700) != 0 && errno != EEXIST {
                throw .directoryUnavailable(path: path, errno: errno)
            }
        }
        return true
    }

    /// Makes the directory again after it was removed and, once made, forgets every indexed entry:
    /// they went with it.
    /// - Returns: whether the directory was made (`false`: something has its name, so the failure
    ///   that led here was not a missing directory).
    /// - Throws: ``DiskCacheError/writeFailed(path:errno:)`` when the directory cannot be created.
    private func recreateDirectory() throws(DiskCacheError) -> Bool {
        let created: Bool
        do {
            created = try Self.makeDirectory(directoryPath)
        } catch {
            throw .writeFailed(path: directoryPath, errno: error.errno)
        }
        if created {
            index.removeAll()
            indexedBytes = 0
            openFiles.invalidateAll()
        }
        return created
    }

    /// The directory's files, making the directory again (and forgetting the index) if it is gone;
    /// `nil` when it cannot be listed.
    private func currentListing() -> [DiskFile.Listing]? {
        do {
            return try DiskFile.list(directoryPath)
        } catch where error.errno == ENOENT {
            guard (try? recreateDirectory()) == true else { return nil }
            return try? DiskFile.list(directoryPath)
        } catch {
            return nil
        }
    }

    private func startSweeping() {
        guard ownsSweeping else { return }
        removeExpiredData()
        guard let interval = config.diskSweepInterval, sweepTask == nil else { return }
        sweepTask = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, !Task.isCancelled else { return }
                await self.removeExpiredData()
            }
        }
    }

    private func indexedName(forKey key: String) -> String? {
        let name = DiskCacheFileName.make(forKey: key)
        if index[name] != nil { return name }
        if let bare = DiskCacheFileName.withoutExtension(name), index[bare] != nil { return bare }
        return nil
    }

    /// Traps (debug builds only) when the index disagrees with itself: its byte total must be the
    /// sum of its entries' sizes, none negative.
    private func checkInvariants() {
        #if DEBUG
        var total = 0
        for (_, entry) in index {
            precondition(entry.allocatedBytes >= 0, "DiskCache: an entry of negative size")
            total += entry.allocatedBytes
        }
        precondition(total == indexedBytes, "DiskCache: the index's total \(indexedBytes) differs from the sum \(total)")
        #endif
    }

    /// Drops `name` from the index and closes it if it was kept open (its file is gone or going).
    private func forget(_ name: String) {
        if let entry = index.removeValue(forKey: name) { indexedBytes -= entry.allocatedBytes }
        openFiles.invalidate(name: name)
    }

    private func date(of entry: Entry) -> Double {
        config.diskExpireType == .accessDate ? max(entry.accessTime, entry.modificationTime) : entry.modificationTime
    }

    private func evictLeastRecentlyUsed(downTo target: Int) -> (count: Int, bytes: Int) {
        applyRecentAccesses()
        var removed = (count: 0, bytes: 0)
        for (name, entry) in index.leastRecentlyUsed(upTo: indexedBytes - target) {
            DiskFile.remove(directoryPath + "/" + name)
            forget(name)
            removed.count += 1
            removed.bytes += entry.allocatedBytes
        }
        return removed
    }

    /// Removes temporary files a killed process left (older than `temporaryGrace` seconds, so that
    /// another process's write in flight is not disturbed) and sidecars whose entry is gone.
    private static func removeLeftovers(in directory: String, listing: [DiskFile.Listing], index: DiskCacheIndex,
                                        temporaryGrace: Double) {
        let cutoff = now() - temporaryGrace
        for file in listing {
            if file.name.hasPrefix(DiskFile.temporaryPrefix) && (temporaryGrace == 0 || file.modificationTime < cutoff) {
                unlink(directory + "/" + file.name)
            } else if file.name.hasPrefix(DiskFile.sidecarPrefix),
                      index[String(file.name.dropFirst(DiskFile.sidecarPrefix.count))] == nil {
                unlink(directory + "/" + file.name)
            }
        }
    }

    static func now() -> Double { Date().timeIntervalSince1970 }
}
