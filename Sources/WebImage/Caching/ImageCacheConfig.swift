import Foundation

/// Which date of a disk-cache file its age is measured from.
public enum DiskExpireType: Sendable, Hashable {
    /// When the file was last written (the default, as SDWebImage).
    case modificationDate
    /// When the cache last returned it. Recorded by the cache itself on every hit (Linux mounts are
    /// `relatime` or `noatime`, so the kernel's access time is not a clock the cache can rely on).
    case accessDate
    /// When the entry was stored. The cache never rewrites a file in place, so this is the file's
    /// modification time (Linux cannot set creation dates).
    case creationDate
}

/// How hard a disk-cache write tries to survive failures.
public enum DiskWriteDurability: Sendable, Hashable {
    /// Write a temporary file, then rename it into place: a crashed or killed process never leaves a
    /// half-written entry. No `fsync`, so a power loss may lose recent entries (the default: about
    /// 10× faster than syncing, and a cache can always download again).
    case atomic
    /// Also `fsync` the file before the rename and the directory after it, so entries survive power loss.
    case synchronized
}

/// The limits and behaviour of an ``ImageCache`` and its ``DiskCache``.
public struct ImageCacheConfig: Sendable {
    /// The default memory limit: a fifth of the physical memory, at most 512 MiB (Nuke's rule).
    public static var defaultMaxMemoryCost: Int {
        Int(min(Double(ProcessInfo.processInfo.physicalMemory) * 0.2, Double(512 << 20)))
    }

    /// The memory tier's cost limit in bytes of decoded pixels; 0 means no limit.
    /// Default ``defaultMaxMemoryCost``.
    public var maxMemoryCost: Int
    /// The memory tier's entry limit; 0 (the default) means no limit.
    public var maxMemoryCount: Int
    /// How long an image stays in the memory tier; `nil` (the default) means until evicted.
    public var memoryTimeToLive: Duration?
    /// Whether decoded images are kept in memory at all; default `true`.
    public var shouldCacheImagesInMemory: Bool
    /// Whether an image evicted from memory but still referenced elsewhere is still found (SDWebImage's
    /// weak memory cache); default `true`.
    public var shouldUseWeakMemoryCache: Bool
    /// How old a disk entry may get before a sweep removes it, in seconds; default one week.
    /// Negative means entries never expire by age.
    public var maxDiskAge: TimeInterval
    /// The disk tier's size limit in bytes (as allocated on disk); 0 (the default) means no limit.
    /// When a store pushes past it, least recently used entries go until the total is half the limit.
    public var maxDiskSize: Int
    /// Which date ``maxDiskAge`` counts from; default ``DiskExpireType/modificationDate``.
    public var diskExpireType: DiskExpireType
    /// How disk writes are made durable; default ``DiskWriteDurability/atomic``.
    public var diskWriteDurability: DiskWriteDurability
    /// How often the disk tier sweeps expired entries while the process runs; `nil` means only at
    /// start-up and when the size limit is passed. Default 10 minutes.
    public var diskSweepInterval: Duration?
    /// The folder under which each namespace gets its directory; `nil` (the default) means
    /// `$XDG_CACHE_HOME/WebImage`, or `~/.cache/WebImage`.
    public var diskCacheDirectory: URL?
    /// How many disk entries stay open after a hit, so that the next hit of the same key reads its
    /// open file (an `fstat` and a `pread`) instead of opening it again; 0 keeps none open. Default
    /// 128, and never more than an eighth of the process's open-file limit (`RLIMIT_NOFILE`). Each
    /// hit checks the open file, so an entry replaced or removed by another process is not served;
    /// the disk space of a file removed by another process is freed when this cache notices (its
    /// next hit of that key, a store, a sweep) or drops the file to make room.
    public var maxOpenDiskFiles: Int
    /// Read-only folders searched (by the same file names) when the cache misses, such as images
    /// shipped with an application; default none.
    public var additionalReadPaths: [URL]

    /// Creates a configuration; every parameter defaults to the property's documented default.
    public init(
        maxMemoryCost: Int = ImageCacheConfig.defaultMaxMemoryCost, maxMemoryCount: Int = 0,
        memoryTimeToLive: Duration? = nil, shouldCacheImagesInMemory: Bool = true, shouldUseWeakMemoryCache: Bool = true,
        maxDiskAge: TimeInterval = 7 * 24 * 60 * 60, maxDiskSize: Int = 0, diskExpireType: DiskExpireType = .modificationDate,
        diskWriteDurability: DiskWriteDurability = .atomic, diskSweepInterval: Duration? = .seconds(600),
        diskCacheDirectory: URL? = nil, maxOpenDiskFiles: Int = 128, additionalReadPaths: [URL] = []
    ) {
        self.maxMemoryCost = maxMemoryCost
        self.maxMemoryCount = maxMemoryCount
        self.memoryTimeToLive = memoryTimeToLive
        self.shouldCacheImagesInMemory = shouldCacheImagesInMemory
        self.shouldUseWeakMemoryCache = shouldUseWeakMemoryCache
        self.maxDiskAge = maxDiskAge
        self.maxDiskSize = maxDiskSize
        self.diskExpireType = diskExpireType
        self.diskWriteDurability = diskWriteDurability
        self.diskSweepInterval = diskSweepInterval
        self.diskCacheDirectory = diskCacheDirectory
        self.maxOpenDiskFiles = maxOpenDiskFiles
        self.additionalReadPaths = additionalReadPaths
    }

    /// The base folder used when ``diskCacheDirectory`` is `nil`: `$XDG_CACHE_HOME/WebImage`, else
    /// `~/.cache/WebImage`.
    public static var defaultDiskCacheDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("WebImage", isDirectory: true)
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".cache/WebImage", isDirectory: true)
    }
}
