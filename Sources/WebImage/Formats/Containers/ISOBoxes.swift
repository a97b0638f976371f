/// The boxes that fill a range of an ISO base media file (AVIF, HEIF; JPEG XL's container), in order:
/// big-endian size, four-character type, payload.
///
/// Understands 64-bit sizes (size 1) and "to the end of the parent" (size 0); stops at the first box
/// whose size is impossible within its parent.
struct ISOBoxes: Sequence, IteratorProtocol {
    private let bytes: UnsafeRawBufferPointer
    private var index: Int
    private let end: Int

    /// The boxes filling `range` of `bytes` (default the whole file).
    init(_ bytes: UnsafeRawBufferPointer, in range: Range<Int>? = nil) {
        self.bytes = bytes
        index = range?.lowerBound ?? 0
        end = Swift.min(range?.upperBound ?? bytes.count, bytes.count)
    }

    mutating func next() -> ContainerPiece? {
        guard index + 8 <= end else { return nil }
        var size = bytes.bigEndian(at: index, count: 4)
        var header = 8
        if size == 1 {
            guard index + 16 <= end else { return nil }
            let large = bytes.bigEndian(at: index + 8, count: 8)
            guard large >= 0 else { return nil }
            size = large
            header = 16
        } else if size == 0 {
            size = end - index
        }
        guard size >= header, size <= end - index else { return nil }
        let piece = ContainerPiece(start: index, body: (index + header)..<(index + size))
        index += size
        return piece
    }

    /// Whether `piece`'s type is the ASCII `type`.
    func type(of piece: ContainerPiece, is type: StaticString) -> Bool {
        bytes.hasType(type, at: piece.start + 4)
    }

    /// The payload of the first box of `type` among those filling `range` of `bytes`.
    static func first(_ type: StaticString, in bytes: UnsafeRawBufferPointer, _ range: Range<Int>? = nil) -> Range<Int>? {
        var boxes = ISOBoxes(bytes, in: range)
        while let box = boxes.next() {
            if boxes.type(of: box, is: type) { return box.body }
        }
        return nil
    }
}
