/// Bounds-checked little-endian reads over untrusted bytes: every read outside them throws `.truncated`,
/// and every range test is overflow-safe.
struct RasterByteReader {
    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var count: Int { bytes.count }

    /// Whether `offset ..< offset + length` lies inside the bytes (false for negative values, never traps).
    func contains(_ offset: Int, length: Int) -> Bool {
        offset >= 0 && length >= 0 && offset <= bytes.count && length <= bytes.count - offset
    }

    func uint8(at offset: Int) throws(RasterDecodingError) -> Int {
        guard contains(offset, length: 1) else { throw .truncated }
        return Int(bytes[offset])
    }

    func uint16(at offset: Int) throws(RasterDecodingError) -> Int {
        guard contains(offset, length: 2) else { throw .truncated }
        return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
    }

    func int16(at offset: Int) throws(RasterDecodingError) -> Int {
        Int(Int16(truncatingIfNeeded: try uint16(at: offset)))
    }

    func uint32(at offset: Int) throws(RasterDecodingError) -> UInt32 {
        guard contains(offset, length: 4) else { throw .truncated }
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8
            | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }

    func int32(at offset: Int) throws(RasterDecodingError) -> Int {
        Int(Int32(bitPattern: try uint32(at: offset)))
    }
}
