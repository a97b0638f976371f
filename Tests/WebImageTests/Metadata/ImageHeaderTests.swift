import Foundation
import Testing
@testable import WebImage
import WebImageAVIF
import WebImageHEIF
import WebImageWebP

/// The stored size, orientation and colour profile name read from headers, without decoding.
@Suite struct ImageHeaderTests {
    /// Every valid fixture's header gives the upright size its decode gives (EXIF orientation,
    /// HEIF/AVIF rotations and clean apertures applied).
    @Test func theSizeIsTheDecodedSizeForEveryFormat() throws {
        let coders = CoderRegistry(coders: [PNGCoder(), JPEGCoder(), GIFCoder(), WebPCoder(), AVIFCoder(), HEIFCoder()])
        var checked: [String: Int] = [:]
        for entry in Corpus.entries where entry.valid {
            guard let data = try? Data(contentsOf: Corpus.root.appendingPathComponent(entry.path)),
                  let image = try? coders.decode(data, options: DecodeOptions(applyOrientation: true, firstFrameOnly: true)) else { continue }
            let header = ImageHeader(data: data)
            #expect(header.uprightSize == image.size, "\(entry.path) \(String(describing: header.uprightSize)) against \(image.size)")
            checked[entry.format, default: 0] += 1
        }
        #expect(checked.count == 6 && checked.values.allSatisfy { $0 >= 5 }, "\(checked)")
    }

    @Test func theUprightSizeTurnsWithTheEXIFOrientation() throws {
        let data = try Data(contentsOf: Corpus.root.appendingPathComponent("jpeg/valid/exif-orientation-examples/Landscape_6.jpg"))
        let header = ImageHeader(data: data)
        #expect(header.orientation == .right)
        let stored = try #require(header.storedSize)
        #expect(header.uprightSize == PixelSize(width: stored.height, height: stored.width))
        let upright = try CoderRegistry.shared.decode(data, options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 64, height: 64)))
        #expect(upright.width > upright.height, "the upright photo is a landscape")
    }

    @Test(arguments: [Data(), Data([0xFF, 0xD8, 0xFF]), Data("RIFF\0\0\0\0WEBPVP8 ".utf8), Data([0x89, 0x50, 0x4E, 0x47, 0, 0, 0, 0]),
                      Data("GIF89a".utf8), Data([0, 0, 0, 0x18] + Array("ftypavif".utf8) + [UInt8](repeating: 0xFF, count: 40))])
    func damagedHeadersGiveNoSize(_ data: Data) {
        #expect(ImageHeader(data: data).storedSize == nil)
    }

    @Test func truncatedFilesNeverCrash() throws {
        for entry in Corpus.entries.prefix(300) {
            guard let data = try? Data(contentsOf: Corpus.root.appendingPathComponent(entry.path)) else { continue }
            for length in [0, 4, 12, 20, 26, 30, 64, data.count / 2] where length < data.count {
                _ = ImageHeader(data: data.prefix(length))
            }
        }
    }

    @Test func theColourProfileNameIsRead() throws {
        let jpeg = try Data(contentsOf: Corpus.root.appendingPathComponent("jpeg/valid/pillow/icc_profile_big.jpg"))
        let profile = try #require(ICCProfileReader.profile(in: jpeg))
        let name = try #require(ICCProfileDescription.name(of: profile))
        #expect(!name.isEmpty && !name.contains("\0"))
        #expect(ICCProfileDescription.name(of: Data(repeating: 0xFF, count: 200)) == nil)
        #expect(ICCProfileDescription.name(of: profile.prefix(140)) == nil)
    }
}
