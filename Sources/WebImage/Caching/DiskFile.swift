import CFileSystem
import Foundation
import Synchronization

/// The system calls behind ``DiskCache``: crash-safe writes (temporary file + rename), reads with
/// `open`/`read`, metadata in an extended attribute or a sidecar, and fast directory listing.
enum DiskFile {
    static let metadataAttribute = "user.webimage.metadata"
    static let temporaryPrefix = ".tmp-"
    static let sidecarPrefix = ".meta-"
    private static let temporaryCounter = Atomic<UInt64>(0)

    /// Writes `data` to `path` so that the file either keeps its old content or has all the new
    /// content, never part of it: a temporary file in the same directory, renamed into place.
    /// Metadata goes in an extended attribute of the temporary file (or a sidecar file).
    /// - Parameter replacing: whether an entry may exist at `path` already (whose sidecar must go).
    /// - Returns: the bytes the file occupies on disk (`st_blocks × 512`).
    /// - Throws: ``DiskCacheError/writeFailed(path:errno:)``; the temporary file is removed.
    @discardableResult
    static func write(_ data: Data, to path: String, metadata: Data?, durability: DiskWriteDurability,
                      replacing: Bool = true) throws(DiskCacheError) -> Int {
        let directory = (path as NSString).deletingLastPathComponent
        // Unique across threads (the counter) and processes sharing the directory (the pid).
        let serial = temporaryCounter.wrappingAdd(1, ordering: .relaxed).newValue
        let temporary = directory + "/" + temporaryPrefix + String(getpid()) + "-" + String(serial, radix: 36)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .writeFailed(path: path, errno: Glibc.errno) }
        var failure: Int32 = 0
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if Glibc.errno == EINTR { continue }
                    failure = Glibc.errno
                    return
                }
                offset += written
            }
        }
        if failure == 0, durability == .synchronized, fsync(fd) != 0 { failure = Glibc.errno }
        var needsSidecar = false
        if failure == 0, let metadata {
            let status = metadata.withUnsafeBytes { wi_fsetxattr(fd, metadataAttribute, $0.baseAddress, $0.count) }
            if status != 0 {
                if Glibc.errno == ENOTSUP || Glibc.errno == E2BIG || Glibc.errno == ERANGE { needsSidecar = true } else { failure = Glibc.errno }
            }
        }
        var info = stat()
        let allocated = fstat(fd, &info) == 0 ? Int(info.st_blocks) * 512 : (data.count + 4095) / 4096 * 4096
        if close(fd) != 0 && failure == 0 { failure = Glibc.errno }
        if failure == 0, needsSidecar, let metadata {
            do { try write(metadata, to: sidecarPath(for: path), metadata: nil, durability: durability) } catch { failure = error.errno }
        } else if failure == 0 && replacing {
            unlink(sidecarPath(for: path))   // an older entry's sidecar must not outlive it
        }
        if failure == 0, rename(temporary, path) != 0 { failure = Glibc.errno }
        guard failure == 0 else {
            unlink(temporary)
            throw .writeFailed(path: path, errno: failure)
        }
        if durability == .synchronized {
            let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if directoryFD >= 0 {
                fsync(directoryFD)
                close(directoryFD)
            }
        }
        return allocated
    }

    /// The whole content of `path`, or nil when it does not exist.
    /// - Throws: ``DiskCacheError/readFailed(path:errno:)`` for any other failure.
    static func read(_ path: String) throws(DiskCacheError) -> Data? {
        guard let fd = try openForReading(path) else { return nil }
        defer { close(fd) }
        return try readAll(fd, path: path).data
    }

    /// What a byte-level hit needs from one entry, read through one open file: its bytes, its
    /// metadata (the extended attribute read on the descriptor, no second path lookup; the sidecar
    /// only where the attribute is missing), and its access time recorded (``recordAccess(_:_:)``).
    /// The descriptor is left open for the caller, who closes it or keeps it (``OpenDiskFile``).
    static func openEntry(_ path: String) throws(DiskCacheError) -> (descriptor: Int32, data: Data, info: stat, metadata: Data?)? {
        guard let fd = try openForReading(path) else { return nil }
        let data: Data, info: stat
        do {
            (data, info) = try readAll(fd, path: path)
        } catch {
            close(fd)
            throw error
        }
        recordAccess(fd, info)
        let metadata = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { buffer -> Data? in
            let length = wi_fgetxattr(fd, metadataAttribute, buffer.baseAddress, buffer.count)
            return length >= 0 ? Data(buffer[..<length]) : nil
        }
        return (fd, data, info, metadata ?? self.metadata(of: path))
    }

    /// The bytes of an entry kept open, read again with `pread`, or `nil` when the descriptor no
    /// longer holds the entry (``OpenDiskFile/isCurrent(_:)``) or cannot be read: the caller then
    /// drops it and opens the file by its name, which reports a real failure.
    static func read(_ file: OpenDiskFile) -> Data? {
        var info = stat()
        guard fstat(file.descriptor, &info) == 0, file.isCurrent(info) else { return nil }
        guard file.size > 0 else { return Data() }
        guard let buffer = malloc(file.size) else { return nil }
        var total = 0
        while total < file.size {
            let count = pread(file.descriptor, buffer + total, file.size - total, off_t(total))
            if count < 0 && Glibc.errno == EINTR { continue }
            if count <= 0 { break }
            total += count
        }
        guard total == file.size else {
            free(buffer)
            return nil
        }
        recordAccess(file.descriptor, info)
        return Data(bytesNoCopy: buffer, count: total, deallocator: .free)
    }

    /// Writes the access time on the file, but only when its own is older than
    /// ``accessTimeGranularity`` (like the `relatime` mount option: a hot entry read a thousand times
    /// a second is not written a thousand times).
    private static func recordAccess(_ fd: Int32, _ info: stat) {
        let accessed = Double(info.st_atim.tv_sec) + Double(info.st_atim.tv_nsec) / 1e9
        if Date().timeIntervalSince1970 - accessed > accessTimeGranularity { _ = wi_touch_access_time_fd(fd) }
    }

    /// Access times closer together than this (seconds) are not written to the file again.
    static let accessTimeGranularity: Double = 60

    private static func openForReading(_ path: String) throws(DiskCacheError) -> Int32? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if Glibc.errno == ENOENT || Glibc.errno == ENOTDIR { return nil }
            throw .readFailed(path: path, errno: Glibc.errno)
        }
        return fd
    }

    /// The whole content of the open file, read into memory that is not zeroed first.
    private static func readAll(_ fd: Int32, path: String) throws(DiskCacheError) -> (data: Data, info: stat) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .readFailed(path: path, errno: Glibc.errno) }
        let size = Int(info.st_size)
        guard size > 0 else { return (Data(), info) }
        guard let buffer = malloc(size) else { throw .readFailed(path: path, errno: ENOMEM) }
        var total = 0
        while total < size {
            let count = Glibc.read(fd, buffer + total, size - total)
            if count < 0 {
                if Glibc.errno == EINTR { continue }
                let failure = Glibc.errno
                free(buffer)
                throw .readFailed(path: path, errno: failure)
            }
            if count == 0 { break }   // shrank while reading
            total += count
        }
        return (Data(bytesNoCopy: buffer, count: total, deallocator: .free), info)
    }

    /// The metadata bytes stored with `path`, from its extended attribute or its sidecar.
    static func metadata(of path: String) -> Data? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var length = wi_getxattr(path, metadataAttribute, &buffer, buffer.count)
        if length < 0 && Glibc.errno == ERANGE {
            let needed = wi_getxattr(path, metadataAttribute, nil, 0)
            if needed > 0 {
                buffer = [UInt8](repeating: 0, count: needed)
                length = wi_getxattr(path, metadataAttribute, &buffer, buffer.count)
            }
        }
        if length >= 0 { return Data(buffer.prefix(length)) }
        return (try? read(sidecarPath(for: path))) ?? nil
    }

    /// Removes `path` and its sidecar; returns whether the file existed.
    @discardableResult
    static func remove(_ path: String) -> Bool {
        let removed = unlink(path) == 0
        unlink(sidecarPath(for: path))
        return removed
    }

    /// Records an access now (the file's access time), leaving its modification time alone.
    static func touch(_ path: String) {
        _ = wi_touch_access_time(path)
    }

    static func sidecarPath(for path: String) -> String {
        let name = (path as NSString).lastPathComponent
        return (path as NSString).deletingLastPathComponent + "/" + sidecarPrefix + name
    }

    struct Listing {
        var name: String
        var allocatedBytes: Int
        var accessTime: Double
        var modificationTime: Double
    }

    /// Every regular file in `directory` (readdir + fstatat).
    /// - Throws: ``DiskCacheError/directoryUnavailable(path:errno:)``.
    static func list(_ directory: String) throws(DiskCacheError) -> [Listing] {
        final class Collector {
            var entries: [Listing] = []
        }
        let collector = Collector()
        let status = withExtendedLifetime(collector) {
            wi_list_directory(directory, Unmanaged.passUnretained(collector).toOpaque()) { context, entry in
                guard let context, let entry else { return }
                let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
                collector.entries.append(Listing(
                    name: String(cString: entry.pointee.name), allocatedBytes: Int(entry.pointee.allocated),
                    accessTime: entry.pointee.access_time, modificationTime: entry.pointee.modification_time))
            }
        }
        guard status == 0 else { throw .directoryUnavailable(path: directory, errno: Glibc.errno) }
        return collector.entries
    }

    /// Allocated bytes of one file (st_blocks × 512), or nil if it does not exist.
    static func allocatedSize(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_blocks) * 512
    }
}
