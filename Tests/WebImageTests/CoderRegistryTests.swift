import Foundation
import Testing
@testable import WebImage

/// A real (tiny) coder for a made-up format: data "WIMG" + one byte decodes to a 1×1 gray image of that byte.
struct MarkerCoder: ImageCoder {
    var marker: UInt8?

    static let format = ImageFormat(rawValue: "wimg")

    func canDecode(_ data: Data) -> Bool { data.starts(with: Array("WIMG".utf8)) }

    func decode(_ data: Data, options: DecodeOptions) throws -> Image {
        guard data.count == 5 else { throw ImageCodingError.corruptData(format: Self.format, reason: "expected 5 bytes") }
        return try Image(width: 1, height: 1, pixelFormat: .gray8, pixels: [marker ?? data[data.startIndex + 4]], format: Self.format)
    }

    func canEncode(_ format: ImageFormat) -> Bool { format == Self.format }

    func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws -> Data {
        Data("WIMG".utf8) + image.withUnsafeRow(0) { Data($0.prefix(1)) }
    }
}

@Suite struct CoderRegistryTests {
    let sample = Data("WIMG".utf8) + [42]

    @Test func sharedRegistryDecodesPNGAndJPEG() {
        let coders = CoderRegistry.shared.coders
        #expect(coders.contains { $0 is PNGCoder })
        #expect(coders.contains { $0 is JPEGCoder })
        #expect(CoderRegistry.shared.canEncode(.png) && CoderRegistry.shared.canEncode(.jpeg))
    }

    @Test func lastAddedCoderIsAskedFirst() throws {
        let registry = CoderRegistry(coders: [MarkerCoder()])
        #expect(Array(try registry.decode(sample).pixels) == [42])
        registry.add(MarkerCoder(marker: 7))
        #expect(Array(try registry.decode(sample).pixels) == [7])
    }

    @Test func removedCodersAreNoLongerAsked() throws {
        let registry = CoderRegistry(coders: [MarkerCoder()])
        registry.remove(MarkerCoder.self)
        #expect(registry.coders.isEmpty)
        #expect(throws: ImageCodingError.unsupportedFormat(.unknown)) { try registry.decode(sample) }
    }

    @Test func unrecognisedBytesThrowUnsupportedFormat() {
        #expect(throws: ImageCodingError.unsupportedFormat(.unknown)) {
            try CoderRegistry.shared.decode(Data("<html>nope</html>".utf8))
        }
        #expect(throws: ImageCodingError.unsupportedFormat(.gif)) {
            try CoderRegistry(coders: [PNGCoder()]).decode(Data("GIF89a\u{1}\0\u{1}\0\0\0\0".utf8))
        }
    }

    @Test func encodesWithTheCoderThatWritesTheFormat() throws {
        let registry = CoderRegistry(coders: [MarkerCoder()])
        let image = try registry.decode(sample)
        #expect(try registry.encode(image, as: MarkerCoder.format) == sample)
        #expect(throws: ImageCodingError.self) { try registry.encode(image, as: .gif) }
    }

    @Test func incrementalDecoderFallsBackToAFullDecodeForNonProgressiveCoders() throws {
        let registry = CoderRegistry(coders: [MarkerCoder()])
        let decoder = registry.makeIncrementalDecoder()
        try decoder.append(sample.prefix(2))
        #expect(decoder.makePartialImage() == nil)
        try decoder.append(sample.dropFirst(2))
        #expect(decoder.receivedByteCount == 5)
        #expect(Array(try decoder.finish().pixels) == [42])
    }

    @Test func addingCodersWhileOthersDecodeIsSafe() async throws {
        let registry = CoderRegistry(coders: [MarkerCoder()])
        let data = sample
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    if index % 10 == 0 { registry.add(MarkerCoder(marker: 1)) }
                    let value = try registry.decode(data).withUnsafeRow(0) { $0[0] }
                    #expect(value == 42 || value == 1)
                }
            }
            try await group.waitForAll()
        }
        #expect(registry.coders.count == 21)
    }
}
