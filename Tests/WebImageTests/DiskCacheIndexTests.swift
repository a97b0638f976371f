import Foundation
import Testing
@testable import WebImage

/// The disk cache's compact index against a plain dictionary of the same operations: names of the
/// compact form, names of any other form, growth, backward-shift deletion and iteration.
@Suite struct DiskCacheIndexTests {
    typealias Entry = DiskCacheIndex.Entry

    static func entry(_ number: Int) -> Entry {
        Entry(allocatedBytes: number * 512, accessTime: Double(number) + 0.25, modificationTime: Double(number) / 3)
    }

    /// A digest-shaped name; every seventh shares its first 16 digits (the table's home slot) with
    /// the others of its kind, which makes long probe runs.
    static func name(_ number: Int, extension pathExtension: String? = "png") -> String {
        let high = number % 7 == 0 ? 42 : UInt64(number) &* 0x9E37_79B9_7F4A_7C15
        let digest = String(format: "%016llx%016llx", high, UInt64(number))
        return pathExtension.map { digest + "." + $0 } ?? digest
    }

    @Test func itAgreesWithADictionaryThroughInsertsUpdatesAndRemovals() {
        var index = DiskCacheIndex()
        var reference: [String: Entry] = [:]
        var generator = SystemRandomNumberGenerator()
        let names = (0..<3000).map { number in
            switch number % 5 {
            case 0: Self.name(number, extension: nil)
            case 1: Self.name(number, extension: "webp")
            case 2: "not-a-digest-\(number).jpg"
            case 3: Self.name(number).uppercased()   // upper case: another name, kept apart
            default: Self.name(number)
            }
        }
        for round in 0..<20_000 {
            let name = names[Int.random(in: 0..<names.count, using: &generator)]
            if Int.random(in: 0..<3, using: &generator) == 0 {
                #expect(index.removeValue(forKey: name) == reference.removeValue(forKey: name))
            } else {
                index[name] = Self.entry(round)
                reference[name] = Self.entry(round)
            }
        }
        #expect(index.count == reference.count)
        for name in names { #expect(index[name] == reference[name], "\(name)") }
        let listed = Dictionary(uniqueKeysWithValues: index.map { ($0.name, $0.entry) })
        #expect(listed == reference, "iteration gives back every name as it was stored")
    }

    /// Names that are numbers in hex (the first 16 digits all zero) spread like MD5s: probe runs
    /// stay short. Before the halves were mixed, they all started at one slot, and a sweep of 100k
    /// such files took 8.8 s instead of 0.2 (`bench`).
    @Test func numberedNamesDoNotPileUp() {
        var index = DiskCacheIndex()
        for number in 0..<20_000 { index[String(format: "%032x", number)] = Self.entry(number) }
        #expect(index.count == 20_000)
        #expect(index.longestProbe < 64, "a probe run of \(index.longestProbe) slots")
        #expect(index[String(format: "%032x", 12_345)] == Self.entry(12_345))
    }

    /// Least recently accessed first, overflow names among them, cut once the sizes reach the bytes
    /// asked for, and only the entries that pass the filter.
    @Test func leastRecentlyUsedComesInAccessOrder() {
        var index = DiskCacheIndex()
        for number in [5, 1, 4, 2, 3] { index[Self.name(number)] = Self.entry(number) }   // access time number + 0.25
        index["other-name"] = Entry(allocatedBytes: 512, accessTime: 2.5, modificationTime: 0)
        #expect(index.leastRecentlyUsed().map(\.name) == [Self.name(1), Self.name(2), "other-name", Self.name(3), Self.name(4), Self.name(5)])
        // Sizes are number × 512: 1 + 2 + other (1) = 2048 bytes reach 1800.
        #expect(index.leastRecentlyUsed(upTo: 1800).map(\.name) == [Self.name(1), Self.name(2), "other-name"])
        #expect(index.leastRecentlyUsed(where: { $0.accessTime > 3 }).map(\.entry) == [Self.entry(3), Self.entry(4), Self.entry(5)])
        #expect(index.leastRecentlyUsed(upTo: 0).isEmpty)
    }

    @Test func aNameAndItsBareDigestAreTwoEntries() {
        var index = DiskCacheIndex()
        index[Self.name(1)] = Self.entry(1)
        #expect(index[Self.name(1, extension: nil)] == nil)
        index[Self.name(1, extension: nil)] = Self.entry(2)
        #expect(index[Self.name(1)] == Self.entry(1))
        #expect(index.count == 2)
    }

    @Test func sizesPastFourGiBAndManyExtensionsAreKeptExactly() {
        var index = DiskCacheIndex()
        let huge = Entry(allocatedBytes: 5 << 30, accessTime: 1, modificationTime: 2)
        index[Self.name(1)] = Self.entry(1)
        index[Self.name(1)] = huge   // moves to the overflow dictionary
        #expect(index[Self.name(1)] == huge && index.count == 1)
        index[Self.name(1)] = Self.entry(3)   // and back
        #expect(index[Self.name(1)] == Self.entry(3) && index.count == 1)
        for number in 0..<300 { index[Self.name(number, extension: "x\(number)")] = Self.entry(number) }
        for number in 0..<300 { #expect(index[Self.name(number, extension: "x\(number)")] == Self.entry(number)) }
        #expect(index.count == 301)
    }

    @Test func removeAllEmptiesIt() {
        var index = DiskCacheIndex()
        for number in 0..<500 { index[Self.name(number)] = Self.entry(number) }
        index[".tmp-something"] = Self.entry(1)
        index.removeAll()
        #expect(index.count == 0 && index[Self.name(3)] == nil && Array(index).isEmpty)
    }
}
