import Foundation

/// The human-readable name of an ICC profile (its `desc` tag): `textDescriptionType` in version 2
/// profiles (ASCII), `multiLocalizedUnicodeType` in version 4 (UTF-16BE; the first record, which is
/// en-US in practice). Bounds-checked; a damaged profile or tag gives `nil`.
enum ICCProfileDescription {
    /// The name in `profile`, trimmed of trailing zeros and spaces, or `nil`.
    static func name(of profile: Data) -> String? {
        let bytes = [UInt8](profile)
        func u32(_ index: Int) -> Int? {
            guard index >= 0, index + 4 <= bytes.count else { return nil }
            return bytes[index..<(index + 4)].reduce(0) { $0 << 8 | Int($1) }
        }
        guard bytes.count >= 132, let tagCount = u32(128), tagCount < 1000 else { return nil }
        for tag in 0..<tagCount {
            let entry = 132 + tag * 12
            guard let signature = u32(entry), let offset = u32(entry + 4), let length = u32(entry + 8) else { return nil }
            guard signature == 0x6465_7363, length >= 12, offset + length <= bytes.count else { continue }   // 'desc'
            let body = bytes[offset..<(offset + length)]
            let type = String(decoding: body.prefix(4), as: UTF8.self)
            if type == "desc", let count = u32(offset + 8), count > 0, offset + 12 + count <= offset + length {
                return clean(String(decoding: bytes[(offset + 12)..<(offset + 12 + count)], as: UTF8.self))
            }
            if type == "mluc", let records = u32(offset + 8), records > 0, let recordSize = u32(offset + 12), recordSize >= 12,
               let textLength = u32(offset + 16 + 4), let textOffset = u32(offset + 16 + 8),
               textOffset + textLength <= length, textLength % 2 == 0 {
                let start = offset + textOffset
                let units = stride(from: start, to: start + textLength, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
                return clean(String(decoding: units, as: UTF16.self))
            }
            return nil
        }
        return nil
    }

    private static func clean(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: CharacterSet(charactersIn: "\0").union(.whitespacesAndNewlines))
        return trimmed.isEmpty ? nil : trimmed
    }
}
