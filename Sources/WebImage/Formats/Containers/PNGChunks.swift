/// The chunks of a PNG file after its signature, in order: length, type, payload, CRC.
///
/// Stops after `IEND` and at the first chunk that runs past the end of the bytes (a damaged or truncated
/// file gives what came before it). CRCs are not checked: the readers only look for metadata.
struct PNGChunks: Sequence, IteratorProtocol {
    private let bytes: UnsafeRawBufferPointer
    private var index = 8

    /// The chunks of `bytes` (the signature is not checked: callers sniffed it).
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    mutating func next() -> ContainerPiece? {
        guard index + 8 <= bytes.count else { return nil }
        let length = bytes.bigEndian(at: index, count: 4)
        guard index + 12 + length <= bytes.count else { return nil }
        let piece = ContainerPiece(start: index, body: (index + 8)..<(index + 8 + length))
        index = bytes.hasType("IEND", at: index + 4) ? bytes.count : index + 12 + length
        return piece
    }

    /// Whether `piece`'s type is the ASCII `type`.
    func type(of piece: ContainerPiece, is type: StaticString) -> Bool {
        bytes.hasType(type, at: piece.start + 4)
    }
}
