/// Decides how much of a PNG byte stream arriving in pieces can be handed to libpng's progressive
/// reader now.
///
/// libpng decodes image data (`IDAT`) as it comes, but it needs every other chunk whole, and while one
/// is incomplete it copies everything received into a new buffer on each call: a 3 MB ICC profile or
/// text chunk arriving in 16 KB pieces would cost gigabytes of copying. The scheduler follows the chunk
/// structure (8-byte signature, then chunks of 4-byte length, 4-byte type, data, 4-byte CRC) and
/// allows every byte except
/// - the body of a non-`IDAT` chunk that has not fully arrived (its 8-byte header is allowed, so
///   libpng checks the name and length at once), and
/// - the first bytes of a chunk header that has not fully arrived (at most 7).
///
/// It reads only length and type fields; libpng still validates everything. Garbage merely makes it
/// hold bytes back until the caller, at the end of the input, feeds everything.
///
/// Invariant: every header at or after ``nextChunkOffset`` has not been fed, and while
/// ``heldChunkEnd`` is set, exactly the header of the chunk at ``nextChunkOffset`` has been.
struct PNGChunkScheduler {
    /// File offset of the next chunk header to read (the first one follows the signature).
    private(set) var nextChunkOffset = 8
    /// File offset where the held-back chunk ends, while one is held back.
    private(set) var heldChunkEnd: Int?

    /// The file offset up to which bytes may be fed (never less than `start`).
    /// - Parameters:
    ///   - received: the bytes received and not fed yet.
    ///   - start: the file offset of `received`'s first byte: where the bytes fed so far end, which is
    ///     at most the limit the previous call returned.
    mutating func feedLimit(received: UnsafeRawBufferPointer, startingAt start: Int) -> Int {
        let end = start + received.count
        while true {
            if let held = heldChunkEnd {
                guard held <= end else { return max(start, nextChunkOffset + 8) }
                nextChunkOffset = held
                heldChunkEnd = nil
            }
            guard nextChunkOffset + 8 <= end else { return max(start, min(end, nextChunkOffset)) }
            // Only a caller that broke the contract can have fed past an unread header: stop scheduling.
            guard nextChunkOffset >= start else { return end }
            let index = nextChunkOffset - start
            let length = received[index..<(index + 4)].reduce(0) { $0 << 8 | Int($1) }
            let isImageData = received[index + 4] == 0x49 && received[index + 5] == 0x44
                && received[index + 6] == 0x41 && received[index + 7] == 0x54  // "IDAT"
            let chunkEnd = nextChunkOffset + 12 + length
            if !isImageData && chunkEnd > end {
                heldChunkEnd = chunkEnd
                return nextChunkOffset + 8
            }
            nextChunkOffset = chunkEnd
        }
    }
}
