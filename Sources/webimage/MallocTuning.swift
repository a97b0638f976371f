import CSystemTuning
import Foundation

/// glibc's allocator settings for a long-running server (`webimage serve`), applied once at start.
///
/// glibc gives each thread that allocates an arena of its own, up to eight per core, and memory
/// freed in an arena stays in it: each arena keeps its own high-water mark of source-sized buffers.
/// `webimage serve` bounds that by giving freed memory back every ``defaultTrimInterval``
/// (`malloc_trim`, on a thread of its own, `webimage.trim`). glibc raises its mmap threshold each
/// time a mapped block is freed (up to 32 MiB), after which the codecs' large buffers come from the
/// arenas; freed there, among smaller live blocks, they stayed: cold AVIF requests (libaom's encoder
/// allocates tens of MiB an image) grew the server by about 1.3 MiB a request, to 614 MiB in ten
/// seconds from local sources, and past the libvips server's peak over HTTP. Trimming every 250 ms
/// held it at 97–111 MiB with no loss of throughput in any cell; fixing the threshold at 256 KiB
/// held it too but cost PNG 10 %.
///
/// Arenas: two by default, which bounds how many high-water marks there are (a five-minute cold
/// run, `Benchmarks/serving/rss_soak.py`, grew 3.4 % after its first minute with two, 5.8 % with
/// glibc's eight per core). With `--realtime-http` they are left to glibc: with two,
/// libmicrohttpd's threads share an arena lock with the cold threads, and a memory hit waited on a
/// cold thread preempted inside `malloc` (seen with `perf`: `futex_wait` in `__libc_calloc` and
/// `_int_free` on MHD's thread; warm p99 under cold load 0.8–1.2 ms against 0.11–0.15 ms with
/// glibc's count). `--malloc-arenas N` sets it either way.
///
/// An explicit `MALLOC_ARENA_MAX` in the environment wins (glibc reads it itself at start;
/// `mallopt` would override it, so it is left alone).
enum MallocTuning {
    /// The arena cap `webimage serve` applies when none is given: two, or `nil` (glibc's own count)
    /// when the network threads run in the real-time class (see above).
    static func defaultArenas(realtimeNetworkThreads: Bool) -> Int? {
        realtimeNetworkThreads ? nil : 2
    }

    /// How often `webimage serve` gives freed memory back by default.
    static let defaultTrimInterval: Duration = .milliseconds(250)

    /// Starts the thread that calls `malloc_trim` every `interval` for the life of the process;
    /// nothing for a zero interval. Returns whether it started.
    @discardableResult
    static func startTrimming(every interval: Duration) -> Bool {
        guard interval > .zero else { return false }
        let microseconds = UInt32(clamping: interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000)
        let thread = Thread {
            _ = "webimage.trim".withCString { wi_thread_set_name($0) }
            while true {
                usleep(microseconds)   // a thread of its own (started here), never the cooperative pool's
                _ = wi_malloc_trim()
            }
        }
        thread.start()
        return true
    }

    /// Blocks below this come from the arenas, never a mapping of their own: glibc's own ceiling for
    /// its adjustable threshold, which it reaches after the first large block is freed anyway.
    static let arenaBlockLimit = 32 << 20
    /// `free` gives the top of a heap back only past this much: what stays at the top of each arena
    /// (two by default) between requests is at most this. (`malloc_trim` gives back free blocks inside
    /// every arena and the main arena's top, but not a thread arena's top.)
    static let freeTrimThreshold = 32 << 20

    /// Leaves up to ``freeTrimThreshold`` of freed memory at the top of each arena for the next
    /// request, instead of `free` giving it back at once, and keeps blocks up to ``arenaBlockLimit``
    /// in the arenas; the trimming thread (``startTrimming(every:)``) still gives back what is free
    /// inside them. Applied only with trimming on. Returns whether it applied, which it does
    /// unless the environment sets either threshold itself (`MALLOC_MMAP_THRESHOLD_`,
    /// `MALLOC_TRIM_THRESHOLD_`, or `GLIBC_TUNABLES` naming one).
    ///
    /// Why: glibc's adjustable trim threshold is twice its mmap threshold, which follows the largest
    /// block freed; two cold PNG requests free a 4.4 MB source, a 4.4 MB gather buffer and more at the
    /// top of the heap, past it, so `free` shrank the heap (`brk`) and the next request faulted the
    /// same pages in again: 537–1251 page faults a request. With the thresholds fixed here 150–221,
    /// and cold PNG at 73.4 results/s in three 8 s runs against 66.9–71.7 (peak RSS 102–109 against
    /// 94–105 MiB); JPEG and AVIF the same within noise.
    @discardableResult
    static func keepFreedMemoryForTrimming(environment: [String: String]) -> Bool {
        let tunables = environment["GLIBC_TUNABLES"] ?? ""
        guard environment["MALLOC_MMAP_THRESHOLD_"] == nil, environment["MALLOC_TRIM_THRESHOLD_"] == nil,
              !tunables.contains("mmap_threshold"), !tunables.contains("trim_threshold") else { return false }
        return wi_malloc_set_thresholds(UInt(arenaBlockLimit), UInt(freeTrimThreshold)) == 1
    }

    /// Bounds the arenas to `arenas` unless the environment sets `MALLOC_ARENA_MAX`. Does nothing
    /// where the C library is not glibc. Returns whether the setting was applied.
    @discardableResult
    static func limitArenas(to arenas: Int, environment: [String: String]) -> Bool {
        environment["MALLOC_ARENA_MAX"] == nil && wi_malloc_set_arena_limit(Int32(clamping: max(1, arenas))) == 1
    }
}
