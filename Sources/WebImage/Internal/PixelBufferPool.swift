import Foundation
import Synchronization

/// Keeps a few large freed pixel buffers for the next decode of a similar size.
///
/// glibc serves allocations over its mmap threshold (up to 32 MB) with fresh pages and returns them to
/// the kernel on `free`: a decoder writing a new 60 MB buffer spends about a third of its time on page
/// faults. Reusing a recently freed buffer whose pages are already mapped removes that cost.
///
/// Invariants: at most ``maxEntries`` buffers and ``maxPooledBytes`` bytes are held; a buffer is only
/// handed out for a request between half its capacity and its capacity; buffers idle for longer than
/// ``maxIdleSeconds`` are freed at the next pool operation. Thread-safe.
final class PixelBufferPool: Sendable {
    static let shared = PixelBufferPool()

    /// Buffers smaller than this come straight from `malloc` (cheap, and not worth holding).
    static let minPooledCapacity = 4 << 20
    let maxEntries = 3
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
        if size >= Self.minPooledCapacity {
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
        guard let pointer = malloc(size) else { return nil }
        return (pointer, size)
    }

    /// Takes back a buffer from ``allocate(capacity:)``: keeps it if it is large and there is room,
    /// frees it otherwise.
    func recycle(_ pointer: UnsafeMutableRawPointer, capacity: Int) {
        guard capacity >= Self.minPooledCapacity else {
            free(pointer)
            // Small images must not keep large idle buffers alive forever: look for stale ones now
            // and then (a lock-free check of the clock would be cheaper, but this is rare enough).
            smallRecycles.withLock { count in
                count += 1
                if count % 64 == 0 { expireIdle() }
            }
            return
        }
        let now = Self.now()
        let evicted: [UInt] = entries.withLock { list in
            expire(&list, now: now)
            var dropped: [UInt] = []
            list.append(Entry(address: UInt(bitPattern: pointer), capacity: capacity, freedAt: now))
            while list.count > maxEntries || list.reduce(0, { $0 + $1.capacity }) > maxPooledBytes {
                dropped.append(list.removeFirst().address)
            }
            return dropped
        }
        for address in evicted { free(UnsafeMutableRawPointer(bitPattern: address)) }
    }

    /// Frees every pooled buffer (for memory pressure and tests).
    func drain() {
        let all = entries.withLock { list in
            defer { list.removeAll() }
            return list.map(\.address)
        }
        for address in all { free(UnsafeMutableRawPointer(bitPattern: address)) }
    }

    /// The number of bytes currently held for reuse.
    var pooledBytes: Int { entries.withLock { $0.reduce(0) { $0 + $1.capacity } } }

    private func expire(_ list: inout [Entry], now: Double) {
        let stale = list.filter { now - $0.freedAt > maxIdleSeconds }.map(\.address)
        if !stale.isEmpty {
            // Freeing under the lock is fine: free never blocks on another thread's work.
            for address in stale { free(UnsafeMutableRawPointer(bitPattern: address)) }
            list.removeAll { now - $0.freedAt > maxIdleSeconds }
        }
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
