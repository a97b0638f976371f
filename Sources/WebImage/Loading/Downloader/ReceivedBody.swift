import Foundation

/// The bytes of a body received so far, in memory its download owns: appended from a transport's
/// buffer (URLSession's chunks, libcurl's receive buffer) into room at its end, and handed over as
/// `Data` without a copy.
///
/// Memory: with a promised length (``reserve(_:)``) one block of exactly that size, never moved
/// while the body arrives; without, a block that doubles as it fills, cut to the body's size when
/// handed over. Running out of memory traps, as `Data` does.
///
/// Not thread-safe: its ``DownloadOperation`` touches it only under its lock.
///
/// `@unchecked Sendable`, which is safe because the one instance of each download lives in its
/// operation's `Mutex`-guarded state and every use (``DownloadOperation``'s `accept`, `completed`,
/// `conclude`, `addWaiter`, `received(_:config:)`, `continueBody`) is inside `state.withLock`;
/// nothing keeps a reference past the lock except the `Data` ``take()`` hands over, which owns its
/// bytes from then on.
final class ReceivedBody: @unchecked Sendable {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    /// How many bytes were received.
    private(set) var count = 0

    deinit { free(base) }

    var isEmpty: Bool { count == 0 }

    /// Makes room for `total` bytes in all (a promised length), so that they arrive without the
    /// block moving or growing past them. When that much cannot be had now, the body grows as bytes
    /// arrive instead.
    func reserve(_ total: Int) {
        guard total > capacity, let grown = realloc(base, total) else { return }
        base = grown
        capacity = total
    }

    /// Appends `byteCount` bytes copied from `bytes`.
    func append(_ bytes: UnsafeRawPointer, count byteCount: Int) {
        guard byteCount > 0 else { return }
        ensureRoom(for: byteCount)
        (base! + count).copyMemory(from: bytes, byteCount: byteCount)
        count += byteCount
    }

    /// Calls `write` with room for up to `limit` bytes at the body's end and keeps the bytes it
    /// says it wrote (from the room's start; 0 to `limit`). Returns that count.
    func append(upTo limit: Int, _ write: (UnsafeMutableRawBufferPointer) -> Int) -> Int {
        guard limit > 0 else { return 0 }
        ensureRoom(for: limit)
        let written = write(UnsafeMutableRawBufferPointer(start: base! + count, count: limit))
        precondition((0...limit).contains(written), "wrote \(written) bytes into room for \(limit)")
        count += written
        return written
    }

    /// Where the bytes lie, for reading them during the call.
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// A copy of the bytes received so far (the body goes on).
    func copy() -> Data {
        guard let base, count > 0 else { return Data() }
        return Data(bytes: base, count: count)
    }

    /// The bytes, handed over without a copy; the body is empty afterwards.
    func take() -> Data {
        defer { base = nil; capacity = 0; count = 0 }
        guard count > 0, var block = base else {
            free(base)
            return Data()
        }
        if capacity > count, let cut = realloc(block, count) { block = cut }   // a shorter body than promised
        return Data(bytesNoCopy: block, count: count, deallocator: .free)
    }

    /// Empties the body and starts it again with `prefix` (a kept partial that a `206` continues).
    func replace(with prefix: Data) {
        count = 0
        prefix.withUnsafeBytes { bytes in
            if let start = bytes.baseAddress { append(start, count: bytes.count) }
        }
    }

    private func ensureRoom(for extra: Int) {
        let (needed, overflow) = count.addingReportingOverflow(extra)
        precondition(!overflow, "a body past Int.max bytes")
        guard needed > capacity else { return }
        let newCapacity = max(needed, capacity <= Int.max / 2 ? capacity * 2 : Int.max, 16 * 1024)
        guard let grown = realloc(base, newCapacity) else { fatalError("out of memory for a body of \(newCapacity) bytes") }
        base = grown
        capacity = newCapacity
    }
}
