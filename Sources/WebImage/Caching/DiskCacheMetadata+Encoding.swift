import Foundation

extension DiskCacheMetadata {
    /// The first bytes of the binary encoding; entries written before it hold JSON, still read.
    private static let magic: [UInt8] = Array("WIM".utf8) + [1]

    /// The bytes stored with an entry: a compact binary form (JSON decoding cost about as much as
    /// reading a small file, on every variant served from disk).
    var encoded: Data {
        var bytes = Self.magic
        var present: UInt8 = 0
        if entityTag != nil { present |= 1 }
        if lastModified != nil { present |= 2 }
        if maxAge != nil { present |= 4 }
        if extendedData != nil { present |= 8 }
        if pixelSize != nil { present |= 16 }
        bytes.append(present)
        func append(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        func append(_ data: some Collection<UInt8>) {
            append(UInt64(data.count))
            bytes += data
        }
        if let entityTag { append(Array(entityTag.utf8)) }
        if let lastModified { append(Array(lastModified.utf8)) }
        if let maxAge { append(UInt64(bitPattern: Int64(maxAge))) }
        if let extendedData { append([UInt8](extendedData)) }
        if let pixelSize {
            append(UInt64(max(pixelSize.width, 0)))
            append(UInt64(max(pixelSize.height, 0)))
        }
        return Data(bytes)
    }

    /// Reads ``encoded`` bytes, or the JSON of older entries; `nil` for anything else.
    static func decoded(from data: Data) -> DiskCacheMetadata? {
        let bytes = [UInt8](data)
        guard bytes.count > magic.count, bytes.starts(with: magic) else {
            return try? JSONDecoder().decode(DiskCacheMetadata.self, from: data)
        }
        var index = magic.count + 1
        func number() -> UInt64? {
            guard index + 8 <= bytes.count else { return nil }
            var value: UInt64 = 0
            for offset in 0..<8 { value |= UInt64(bytes[index + offset]) << (8 * offset) }
            index += 8
            return value
        }
        func chunk() -> ArraySlice<UInt8>? {
            guard let count = number(), count <= UInt64(bytes.count - index) else { return nil }
            defer { index += Int(count) }
            return bytes[index..<(index + Int(count))]
        }
        let present = bytes[magic.count]
        var metadata = DiskCacheMetadata()
        if present & 1 != 0 { guard let text = chunk() else { return nil }; metadata.entityTag = String(decoding: text, as: UTF8.self) }
        if present & 2 != 0 { guard let text = chunk() else { return nil }; metadata.lastModified = String(decoding: text, as: UTF8.self) }
        if present & 4 != 0 { guard let value = number() else { return nil }; metadata.maxAge = Int(Int64(bitPattern: value)) }
        if present & 8 != 0 { guard let data = chunk() else { return nil }; metadata.extendedData = Data(data) }
        if present & 16 != 0 {
            guard let width = number(), let height = number(), width <= UInt64(Int32.max), height <= UInt64(Int32.max) else { return nil }
            metadata.pixelSize = PixelSize(width: Int(width), height: Int(height))
        }
        return index == bytes.count ? metadata : nil
    }
}
