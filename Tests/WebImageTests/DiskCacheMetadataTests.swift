import Foundation
import Testing
@testable import WebImage

/// The bytes stored with a disk entry: a compact binary form, and the JSON older entries hold.
@Suite struct DiskCacheMetadataTests {
    @Test func everyFieldRoundTripsAndOlderJSONStillReads() throws {
        let full = DiskCacheMetadata(entityTag: "\"v1\"", lastModified: "Tue, 24 Nov 2026 01:00:00 GMT", maxAge: -5,
                                     extendedData: Data([0, 1, 2, 255]), pixelSize: PixelSize(width: 256, height: 171))
        for metadata in [full, DiskCacheMetadata(), DiskCacheMetadata(pixelSize: PixelSize(width: 1, height: 1)),
                         DiskCacheMetadata(entityTag: "é✓")] {
            #expect(DiskCacheMetadata.decoded(from: metadata.encoded) == metadata)
        }
        let json = try JSONEncoder().encode(full)
        #expect(DiskCacheMetadata.decoded(from: json) == full, "entries written before the binary form")
        var truncated = full.encoded
        truncated.removeLast()
        #expect(DiskCacheMetadata.decoded(from: truncated) == nil)
        #expect(DiskCacheMetadata.decoded(from: full.encoded + Data([0])) == nil, "trailing bytes are damage")
        #expect(DiskCacheMetadata.decoded(from: Data("garbage".utf8)) == nil)
    }
}
