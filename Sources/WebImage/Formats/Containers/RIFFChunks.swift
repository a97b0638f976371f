/// The chunks of a RIFF file (WebP) after its 12-byte header: four-character type, little-endian size,
/// payload, padded to an even length.
///
/// Stops at the first chunk that runs past the end of the bytes.
struct RIFFChunks: Sequence, IteratorProtocol {
    private let bytes: UnsafeRawBufferPointer
    private var index = 12

    /// The chunks of `bytes` (the `RIFF`/`WEBP` header is not checked: callers sniffed it).
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    mutating func next() -> ContainerPiece? {
        guard index + 8 <= bytes.count else { return nil }
        let size = bytes.littleEndian(at: index + 4, count: 4)
        guard index + 8 + size <= bytes.count else { return nil }
        let piece = ContainerPiece(start: index, body: (index + 8)..<(index + 8 + size))
        index += 8 + size + (size & 1)
        return piece
    }

    /// Whether `piece`'s type is the ASCII `type`.
    func type(of piece: ContainerPiece, is type: StaticString) -> Bool {
        bytes.hasType(type, at: piece.start)
    }
}
