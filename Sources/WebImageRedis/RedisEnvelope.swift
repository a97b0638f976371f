import Foundation
import WebImage

/// The value stored under a key in Redis: the entry's bytes with what the disk tier keeps beside
/// them (format, HTTP validators, max-age, extended data, pixel size) and its expiry, in a compact
/// binary form checked on read. Anything that does not parse exactly (another program's value, a
/// later version, a truncated or flipped byte) is `nil`: a miss, which the tier deletes.
///
/// Layout, little-endian: `"WIMG"`, version `1`, the format's name (u8 length + UTF-8), the expiry
/// (i64 ms since 1970), the entity tag and last-modified (u16 length + UTF-8, `0xFFFF` = none), the
/// max-age (i64, −1 = none), the pixel size (2 × i32, −1 = none), the extended data (u32 length,
/// `0xFFFFFFFF` = none), the bytes (u32 length), then a CRC-32 of everything before it.
enum RedisEnvelope {
    static let magic: [UInt8] = Array("WIMG".utf8)
    static let version: UInt8 = 1

    struct Contents: Equatable {
        var data: Data
        var format: ImageFormat
        var expiresAt: Date
        var metadata: DiskCacheMetadata?
    }

    static func encode(_ contents: Contents) -> Data {
        var out = [UInt8]()
        out.reserveCapacity(contents.data.count + 96)
        out += magic
        out.append(version)
        let format = Array(contents.format.rawValue.utf8.prefix(255))
        out.append(UInt8(format.count))
        out += format
        let expiry = (contents.expiresAt.timeIntervalSince1970 * 1000).rounded()
        append(expiry.isFinite ? Int64(min(max(expiry, -9.0e18), 9.0e18)) : Int64.max, to: &out)
        let metadata = contents.metadata
        appendText(metadata?.entityTag, to: &out)
        appendText(metadata?.lastModified, to: &out)
        append(Int64(metadata?.maxAge ?? -1), to: &out)
        append(Int32(truncatingIfNeeded: metadata?.pixelSize?.width ?? -1), to: &out)
        append(Int32(truncatingIfNeeded: metadata?.pixelSize?.height ?? -1), to: &out)
        if let extended = metadata?.extendedData {
            append(UInt32(extended.count), to: &out)
            out += extended
        } else {
            append(UInt32.max, to: &out)
        }
        append(UInt32(contents.data.count), to: &out)
        out += contents.data
        append(CRC32.checksum(out), to: &out)
        return Data(out)
    }

    static func decode(_ value: Data) -> Contents? {
        value.withUnsafeBytes { raw -> Contents? in
            guard raw.count >= magic.count + 5 else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 4)])
            guard CRC32.checksum(body) == raw.loadUnaligned(fromByteOffset: raw.count - 4, as: UInt32.self).littleEndian else { return nil }
            var reader = Reader(bytes: body)
            guard reader.bytes(magic.count).map(Array.init) == magic, reader.integer(UInt8.self) == version,
                  let formatLength = reader.integer(UInt8.self), let formatBytes = reader.bytes(Int(formatLength)),
                  let expiry = reader.integer(Int64.self) else { return nil }
            guard case .some(let entityTag) = reader.text(), case .some(let lastModified) = reader.text(),
                  let maxAge = reader.integer(Int64.self), let width = reader.integer(Int32.self), let height = reader.integer(Int32.self),
                  let extendedLength = reader.integer(UInt32.self) else { return nil }
            var extended: Data?
            if extendedLength != .max {
                guard let bytes = reader.bytes(Int(extendedLength)) else { return nil }
                extended = Data(bytes)
            }
            guard let dataLength = reader.integer(UInt32.self), let bytes = reader.bytes(Int(dataLength)), reader.isAtEnd else { return nil }
            let pixelSize = width >= 0 && height >= 0 ? PixelSize(width: Int(width), height: Int(height)) : nil
            let metadata = DiskCacheMetadata(entityTag: entityTag, lastModified: lastModified, maxAge: maxAge >= 0 ? Int(maxAge) : nil,
                                             extendedData: extended, pixelSize: pixelSize)
            return Contents(data: Data(bytes), format: ImageFormat(rawValue: String(decoding: formatBytes, as: UTF8.self)),
                            expiresAt: Date(timeIntervalSince1970: Double(expiry) / 1000),
                            metadata: metadata == DiskCacheMetadata() ? nil : metadata)
        }
    }

    private static func append<Integer: FixedWidthInteger>(_ value: Integer, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out += $0 }
    }

    private static func appendText(_ text: String?, to out: inout [UInt8]) {
        guard let text else { return append(UInt16.max, to: &out) }
        let bytes = Array(text.utf8.prefix(Int(UInt16.max) - 1))
        append(UInt16(bytes.count), to: &out)
        out += bytes
    }

    /// Reads fields in order, failing (nil) past the end.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        mutating func bytes(_ count: Int) -> UnsafeRawBufferPointer? {
            guard count >= 0, count <= bytes.count - offset else { return nil }
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
        }

        mutating func integer<Integer: FixedWidthInteger>(_ type: Integer.Type) -> Integer? {
            guard let raw = bytes(MemoryLayout<Integer>.size) else { return nil }
            return Integer(littleEndian: raw.loadUnaligned(as: Integer.self))
        }

        /// `.some(nil)` for an absent text, `nil` past the end.
        mutating func text() -> String?? {
            guard let length = integer(UInt16.self) else { return nil }
            if length == .max { return .some(nil) }
            guard let raw = bytes(Int(length)) else { return nil }
            return .some(String(decoding: raw, as: UTF8.self))
        }
    }
}
