import Foundation

/// The off-actor read of a byte-level hit (an encoded variant served again): no hop onto the
/// cache's actor, the entry kept open for the next hit (``DiskOpenFiles``).
extension DiskCache {
    /// ``data(forKey:)`` and ``metadata(forKey:)`` without going through the actor: the hot path of a
    /// byte-level hit (an encoded variant served again). Reads the cache's own directory only (not
    /// ``ImageCacheConfig/additionalReadPaths``; `nil` then, and ``dataAndMetadata(forKey:)`` looks
    /// there). Safe beside the actor's work: files are replaced by rename, so a read sees a whole
    /// entry or none, and its metadata is read from the same open file, so it belongs to those bytes
    /// (a sidecar, where the file system has no extended attributes, is read after them). The access
    /// time is recorded in the index before the next eviction or sweep, and on the file unless the
    /// file's own is less than a minute old (a hot entry is not written on every read). The entry is
    /// then kept open (up to ``ImageCacheConfig/maxOpenDiskFiles``), so the next hit of the same key
    /// is an `fstat` and a `pread`: no path lookup, no hashing of the key, metadata already decoded.
    /// - Throws: ``DiskCacheError/readFailed(path:errno:)`` when the file exists but cannot be read.
    public nonisolated func readWithoutWaiting(forKey key: String) throws(DiskCacheError) -> (data: Data, metadata: DiskCacheMetadata?)? {
        guard !key.isEmpty else { return nil }
        if let file = openFiles.file(forKey: key) {
            if let data = DiskFile.read(file) {
                recordAccess(name: file.name)
                return (data, file.metadata)
            }
            openFiles.discard(file, forKey: key)
        }
        let name = DiskCacheFileName.make(forKey: key)
        if let hit = try readWithoutWaiting(name: name, key: key) { return hit }
        return try DiskCacheFileName.withoutExtension(name).flatMap { name throws(DiskCacheError) in try readWithoutWaiting(name: name, key: key) }
    }

    /// Opens and reads the entry `name` for `key`, and keeps it open for the next hit (``DiskOpenFiles``).
    private nonisolated func readWithoutWaiting(name: String, key: String) throws(DiskCacheError) -> (data: Data, metadata: DiskCacheMetadata?)? {
        let generation = openFiles.generation()
        guard let entry = try DiskFile.openEntry(directoryPath + "/" + name) else { return nil }
        recordAccess(name: name)
        let metadata = entry.metadata.flatMap(DiskCacheMetadata.decoded(from:))
        let file = OpenDiskFile(descriptor: entry.descriptor, name: name, info: entry.info, metadata: metadata)
        openFiles.insert(file, forKey: key, opened: generation)
        return (entry.data, metadata)
    }

    /// Notes a hit on `name` off the actor, for the index's access times.
    private nonisolated func recordAccess(name: String) {
        let now = Self.now()
        recentAccesses.withLock { $0[name] = now }
    }
}
