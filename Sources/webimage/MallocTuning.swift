import CSystemTuning

/// glibc's allocator setting for a long-running server (`webimage serve`), applied once at start.
///
/// glibc gives each thread that allocates an arena of its own, up to eight per core, and memory
/// freed in an arena stays in it. A server's requests run on whichever thread is free (MHD's,
/// dispatch's, the cooperative pool's, URLSession's), so every arena ends up holding its own
/// high-water mark of source-sized buffers. Two arenas bound that; measured with
/// `Benchmarks/serving/serve_bench.py` (see the README's memory table). The mmap threshold is left
/// to glibc: fixing it at 256 KiB made every codec buffer a fresh mapping and cost a fifth of the
/// PNG and AVIF cells' throughput in the C codec loop.
///
/// An explicit `MALLOC_ARENA_MAX` in the environment wins (glibc reads it itself at start;
/// `mallopt` would override it, so it is left alone).
enum MallocTuning {
    /// Arenas `webimage serve` allows by default: two (glibc's own default is eight per core).
    static let defaultArenas = 2

    /// Bounds the arenas to `arenas` unless the environment sets `MALLOC_ARENA_MAX`. Does nothing
    /// where the C library is not glibc. Returns whether the setting was applied.
    @discardableResult
    static func applyServerSettings(arenas: Int = defaultArenas, environment: [String: String]) -> Bool {
        environment["MALLOC_ARENA_MAX"] == nil && wi_malloc_set_arena_limit(Int32(clamping: max(1, arenas))) == 1
    }
}
