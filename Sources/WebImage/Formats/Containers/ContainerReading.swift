/// Big- and little-endian reads of a file's bytes, for the container walkers. Callers check bounds first.
extension UnsafeRawBufferPointer {
    /// The `count`-byte big-endian unsigned integer at `index`.
    func bigEndian(at index: Int, count: Int) -> Int {
        self[index..<(index + count)].reduce(0) { $0 << 8 | Int($1) }
    }

    /// The `count`-byte little-endian unsigned integer at `index`.
    func littleEndian(at index: Int, count: Int) -> Int {
        self[index..<(index + count)].reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    /// Whether the four bytes at `index` are the ASCII `type` (a chunk or box name).
    func hasType(_ type: StaticString, at index: Int) -> Bool {
        index + 4 <= count && type.utf8CodeUnitCount == 4
            && (0..<4).allSatisfy { self[index + $0] == type.utf8Start[$0] }
    }
}

/// One piece of a container file: its type and where its payload lies in the file.
struct ContainerPiece {
    /// Where the piece's header starts.
    var start: Int
    /// The payload, without the header (and, for PNG, without the CRC).
    var body: Range<Int>
}
