import Foundation

/// One disk-cache entry kept open after a hit: its descriptor, what `fstat` said of it when it was
/// opened, and its metadata decoded once. Closed when the last reference goes, so a reader that took
/// it before it was dropped from ``DiskOpenFiles`` finishes its `pread` on a valid descriptor.
///
/// `Sendable`: every property is immutable, and the descriptor is only read from (`pread`, `fstat`,
/// `futimens`), which the kernel allows from any number of threads at once.
final class OpenDiskFile: Sendable {
    /// The open descriptor (`O_RDONLY | O_CLOEXEC`); owned: closed by `deinit`.
    let descriptor: Int32
    /// The entry's file name in the cache directory (what the index and the access times are kept by).
    let name: String
    /// `st_size` when it was opened.
    let size: Int
    /// `st_ino`, `st_mtim` when it was opened: an entry is never written in place, so a change of
    /// either means the descriptor no longer holds the entry.
    let inode: UInt64
    let modificationSeconds: Int
    let modificationNanoseconds: Int
    /// The entry's metadata, decoded when it was opened.
    let metadata: DiskCacheMetadata?

    /// Takes ownership of `descriptor`.
    init(descriptor: Int32, name: String, info: stat, metadata: DiskCacheMetadata?) {
        self.descriptor = descriptor
        self.name = name
        size = Int(info.st_size)
        inode = UInt64(info.st_ino)
        modificationSeconds = Int(info.st_mtim.tv_sec)
        modificationNanoseconds = Int(info.st_mtim.tv_nsec)
        self.metadata = metadata
    }

    deinit {
        close(descriptor)
    }

    /// Whether `info` (a fresh `fstat` of the descriptor) still describes the entry this was opened
    /// as: still linked into the directory (a rename over it or an unlink, by this process or another
    /// sharing the directory, leaves the old inode with no link), same size, same modification time.
    func isCurrent(_ info: stat) -> Bool {
        info.st_nlink > 0 && Int(info.st_size) == size && UInt64(info.st_ino) == inode
            && Int(info.st_mtim.tv_sec) == modificationSeconds && Int(info.st_mtim.tv_nsec) == modificationNanoseconds
    }
}
