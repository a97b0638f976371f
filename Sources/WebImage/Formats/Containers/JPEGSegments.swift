/// The marker segments of a JPEG file before its first scan (`APPn`, `DQT`, `SOFn`, ...), in order.
///
/// Skips fill bytes and the markers without a length (`SOI`, `RSTn`, `TEM`); stops at `SOS` or `EOI`,
/// and at the first segment whose length is impossible (a damaged file gives what came before it).
/// ``marker`` of a piece is the byte after `FF`.
struct JPEGSegments: Sequence, IteratorProtocol {
    private let bytes: UnsafeRawBufferPointer
    private var index = 2
    /// The marker of the segment returned last.
    private(set) var marker: UInt8 = 0

    /// The segments of `bytes`, which must start with `FF D8` (else there are none).
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        if bytes.count < 4 || bytes[0] != 0xFF || bytes[1] != 0xD8 { index = bytes.count }
    }

    mutating func next() -> ContainerPiece? {
        while index + 4 <= bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xFF { index += 1; continue }                                                  // fill byte
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { index += 2; continue }  // no length
            if marker == 0xDA || marker == 0xD9 { return nil }                                          // scan, end
            let length = bytes.bigEndian(at: index + 2, count: 2)
            guard length >= 2, index + 2 + length <= bytes.count else { return nil }
            let piece = ContainerPiece(start: index, body: (index + 4)..<(index + 2 + length))
            self.marker = marker
            index += 2 + length
            return piece
        }
        return nil
    }
}
