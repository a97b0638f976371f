import Foundation
import Synchronization

/// Allocates pixel buffers, and keeps a few large freed ones for the next decode of a similar size.
///
/// Buffers of ``minMappedCapacity`` bytes or more are mapped directly (`mmap`) and unmapped when freed,
/// so their memory always goes back to the kernel. Through `malloc` they would not: glibc raises its
/// mmap threshold to the size of each mapped block it frees (up to 32 MB), after which image-sized
/// blocks come from its heaps, where freed memory stays in the process (measured: a 64 MB memory
/// cache under a soak of 10 000 loads peaked at 133–165 MB of RSS through `malloc`, 114 MB mapped).
///
/// Fresh pages cost page faults: a decoder writing a new 60 MB buffer spends about a third of its
/// time on them. Reusing a recently freed large buffer whose pages are already mapped removes that cost.
///
/// Every mapped buffer is held for reuse, the mid-sized ones too: a server's 512×340 thumbnail
/// (522 KB) mapped afresh for each cold request cost 128 page faults a request (`perf stat`:
/// 137 faults a cold JPEG request, the C loop none).
///
/// Invariants: at most ``maxLargeEntries`` buffers of ``largeCapacity`` or more, ``maxMidEntries``
/// smaller ones and ``maxPooledBytes`` bytes in all are held; a buffer is only handed out for a
/// request between half its capacity and its capacity; buffers idle for longer than
/// ``maxIdleSeconds`` are freed at the next pool operation. Thread-safe.
final class PixelBufferPool: Sendable {
    static let shared = PixelBufferPool()

    /// Buffers smaller than this come straight from `malloc` (cheap, and small enough for its heaps);
    /// buffers of this size or more are mapped, and held for reuse when freed.
    static let minMappedCapacity = 128 << 10
    /// Where a mid-sized buffer ends and a large one (a decoded photo) begins: 1 MB. A 1200x675 RGB
    /// photo (2.4 MB) mapped afresh for every decode spent a quarter of its WebP decode on page faults
    /// and unmapping (`bench formats`, 0.75x its C loop).
    static let largeCapacity = 1 << 20
    /// At most this many large buffers are held (a decode in flight per core, and one more).
    let maxLargeEntries = 3
    /// At most this many mid-sized buffers are held (at most 4 MB: thumbnails, scaled decodes).
    let maxMidEntries = 4
    let maxPooledBytes = 192 << 20
    let maxIdleSeconds: Double = 10

    private struct Entry {
        var address: UInt
        var capacity: Int
        var freedAt: Double
    }

    private let entries = Mutex<[Entry]>([])
    private let smallRecycles = Mutex(0)

    /// Frees buffers idle for longer than ``maxIdleSeconds``.
    func expireIdle() {
        let now = Self.now()
        entries.withLock { expire(&$0, now: now) }
    }

    /// Returns memory for at least `capacity` bytes (contents undefined), or `nil` if malloc fails.
    func allocate(capacity: Int) -> (pointer: UnsafeMutableRawPointer, capacity: Int)? {
        let size = max(capacity, 1)
        if size >= Self.minMappedCapacity {
            let now = Self.now()
            let reused: Entry? = entries.withLock { list in
                expire(&list, now: now)
                guard let index = list.indices
                    .filter({ list[$0].capacity >= size && list[$0].capacity / 2 <= size })
                    .min(by: { list[$0].capacity < list[$1].capacity })
                else { return nil }
                return list.remove(at: index)
            }
            if let reused, let pointer = UnsafeMutableRawPointer(bitPattern: reused.address) {
                return (pointer, reused.capacity)
            }
        }
        if size >= Self.minMappedCapacity {
            guard let pointer = Self.map(size) else { return nil }
            return (pointer, size)
        }
        guard let pointer = malloc(size) else { return nil }
        return (pointer, size)
    }

    /// Takes back a buffer from ``allocate(capacity:)``: keeps it if it is mapped, dropping the oldest
    /// held buffers beyond the limits; frees a small one at once.
    func recycle(_ pointer: UnsafeMutableRawPointer, capacity: Int) {
        guard capacity >= Self.minMappedCapacity else {
            Self.release(pointer, capacity: capacity)
            // Small images must not keep large idle buffers alive forever: look for stale ones now
            // and then (a lock-free check of the clock would be cheaper, but this is rare enough).
            smallRecycles.withLock { count in
                count += 1
                if count % 64 == 0 { expireIdle() }
            }
            return
        }
        let now = Self.now()
        let evicted: [Entry] = entries.withLock { list in
            expire(&list, now: now)
            var dropped: [Entry] = []
            list.append(Entry(address: UInt(bitPattern: pointer), capacity: capacity, freedAt: now))
            // The oldest entry of a class over its count goes first, then the oldest of all while
            // the bytes are over.
            for (isLarge, limit) in [(true, maxLargeEntries), (false, maxMidEntries)] {
                while list.count(where: { ($0.capacity >= Self.largeCapacity) == isLarge }) > limit,
                      let oldest = list.firstIndex(where: { ($0.capacity >= Self.largeCapacity) == isLarge }) {
                    dropped.append(list.remove(at: oldest))
                }
            }
            while list.reduce(0, { $0 + $1.capacity }) > maxPooledBytes {
                dropped.append(list.removeFirst())
            }
            return dropped
        }
        for entry in evicted { Self.release(entry) }
    }

    /// Frees every pooled buffer (for memory pressure and tests).
    func drain() {
        let all = entries.withLock { list in
            defer { list.removeAll() }
            return list
        }
        drains.add(1, ordering: .relaxed)
        for entry in all { Self.release(entry) }
    }

    /// How many times ``drain()`` ran (a shared pool may be refilled by other work at once after).
    var drainCount: Int { drains.load(ordering: .relaxed) }
    private let drains = Atomic<Int>(0)

    /// The number of bytes currently held for reuse.
    var pooledBytes: Int { entries.withLock { $0.reduce(0) { $0 + $1.capacity } } }

    private func expire(_ list: inout [Entry], now: Double) {
        let stale = list.filter { now - $0.freedAt > maxIdleSeconds }
        if !stale.isEmpty {
            // Freeing under the lock is fine: munmap never blocks on another thread's work.
            for entry in stale { Self.release(entry) }
            list.removeAll { now - $0.freedAt > maxIdleSeconds }
        }
    }

    /// Maps `size` bytes of fresh zeroed memory, or returns `nil`.
    private static func map(_ size: Int) -> UnsafeMutableRawPointer? {
        let pointer = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let pointer, pointer != MAP_FAILED else { return nil }
        return pointer
    }

    /// Gives a buffer from ``allocate(capacity:)`` back: unmapped or freed, as it was made.
    private static func release(_ pointer: UnsafeMutableRawPointer, capacity: Int) {
        if capacity >= minMappedCapacity {
            munmap(pointer, capacity)
        } else {
            free(pointer)
        }
    }

    private static func release(_ entry: Entry) {
        guard let pointer = UnsafeMutableRawPointer(bitPattern: entry.address) else { return }
        release(pointer, capacity: entry.capacity)
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
