import Foundation
import Testing
@testable import WebImage

/// The digest behind variants' entity tags: stable, sensitive to every bit and to the length, and
/// blind to where the bytes lie in memory.
@Suite struct ContentDigestTests {
    func hex(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes { ContentDigest.hex($0) } }

    func digest(_ bytes: [UInt8]) -> (high: UInt64, low: UInt64) { bytes.withUnsafeBytes { ContentDigest.digest($0) } }

    /// Pinned values: a tag a client holds must keep matching the same bytes after an upgrade, so
    /// the digest may never change. (These are this implementation's own outputs; a change to the
    /// algorithm fails here first.)
    @Test func isStableAcrossReleases() {
        #expect(hex([]) == "721b7f96cb4112d618c39b7986e4f0bb")
        #expect(hex(Array("abc".utf8)) == "8f46ed80f83659aa11ae2b162d95a219")
        #expect(hex((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }) == "fe78b10d64c9a4adb093496bafaaf835")
    }

    /// Every one-bit change of a 300-byte input (which covers the four lanes, the tail's whole
    /// words and its last partial word) gives a digest of its own, and flips about half of the
    /// 128 output bits on average.
    @Test func everyBitOfTheInputMatters() {
        var random = SplitMix(seed: 27)
        let original = (0..<300).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let base = digest(original)
        var seen: Set<String> = [hex(original)]
        var flippedBits = 0
        for bit in 0..<(original.count * 8) {
            var changed = original
            changed[bit / 8] ^= 1 << UInt8(bit % 8)
            let other = digest(changed)
            seen.insert(hex(changed))
            flippedBits += (base.high ^ other.high).nonzeroBitCount + (base.low ^ other.low).nonzeroBitCount
        }
        #expect(seen.count == original.count * 8 + 1)
        let mean = Double(flippedBits) / Double(original.count * 8)
        #expect(mean > 62 && mean < 66, "mean output bits flipped by one input bit: \(mean)")
    }

    /// Inputs that differ only in how many zero bytes they end with (or hold) differ.
    @Test func theLengthMatters() {
        let digests = (0...70).map { hex([UInt8](repeating: 0, count: $0)) }
        #expect(Set(digests).count == digests.count)
        let ones = (1...70).map { hex([UInt8](repeating: 0xFF, count: $0)) }
        #expect(Set(ones + digests).count == digests.count + ones.count)
    }

    /// The same bytes at any alignment, or in a `Data` slice, have the same tag.
    @Test func theSameBytesAnywhereHaveTheSameDigest() {
        let payload = (0..<97).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
        let expected = hex(payload)
        for shift in 0..<16 {
            let padded = [UInt8](repeating: 0xAA, count: shift) + payload + [0x55]
            let inside = padded.withUnsafeBytes { ContentDigest.hex(UnsafeRawBufferPointer(rebasing: $0[shift..<(shift + payload.count)])) }
            #expect(inside == expected, "offset \(shift)")
        }
        let data = Data([9, 9, 9] + payload)
        let tag = ImageVariant.entityTag(of: data.dropFirst(3))
        #expect(tag == "\"" + expected + "\"")
        #expect(ImageVariant.entityTag(of: Data(payload)) == tag)
    }

    /// An entity tag is a quoted string of 32 lower-case hex digits (a strong tag, RFC 9110 §8.8.3).
    @Test func anEntityTagIsQuotedHex() {
        let tag = ImageVariant.entityTag(of: Data("variant".utf8))
        #expect(tag.count == 34 && tag.hasPrefix("\"") && tag.hasSuffix("\""))
        #expect(tag.dropFirst().dropLast().allSatisfy { "0123456789abcdef".contains($0) })
        #expect(tag != ImageVariant.entityTag(of: Data("variant!".utf8)))
    }
}
