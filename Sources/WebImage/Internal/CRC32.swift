import CColor

/// The CRC-32 of PNG chunks and zlib (ISO 3309, polynomial 0xEDB88320, reflected), as PNG's
/// specification defines it: libdeflate's `libdeflate_crc32` through CColor (carry-less multiplication
/// where the CPU has it: about four times zlib's `crc32`, itself several times a byte-wise table loop).
package enum CRC32 {
    /// Continues the checksum `crc` (0 to start) over `bytes`.
    package static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        return ccolor_crc32(crc, base.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    /// The checksum of `bytes` in memory.
    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        update(0, bytes)
    }

    /// The checksum of `bytes` (copied into contiguous memory first when they are not).
    package static func checksum<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
        if let crc = bytes.withContiguousStorageIfAvailable({ update(0, UnsafeRawBufferPointer($0)) }) { return crc }
        return Array(bytes).withUnsafeBytes { update(0, $0) }
    }
}
