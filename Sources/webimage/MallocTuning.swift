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

    /// Bounds the arenas to `arenas` unless the environment sets `MALLOC_ARENA_MAX`. Does nothing
    /// where the C library is not glibc. Returns whether the setting was applied.
    @discardableResult
    static func limitArenas(to arenas: Int, environment: [String: String]) -> Bool {
        environment["MALLOC_ARENA_MAX"] == nil && wi_malloc_set_arena_limit(Int32(clamping: max(1, arenas))) == 1
    }
}
