import Foundation
import Testing
@testable import WebImage

@Suite struct CacheKeysTests {
    @Test func aURLWithAnExtensionGetsThePartBeforeTheExtensionKeepingQueryAndFragment() {
        #expect(CacheKeys.inserting("P", into: "https://h/a/image.png?x=1&y=2#frag") == "https://h/a/image-P.png?x=1&y=2#frag")
        #expect(CacheKeys.inserting("P", into: "https://h/a/image.png") == "https://h/a/image-P.png")
        #expect(CacheKeys.inserting("P", into: "https://h/a/archive.tar.gz") == "https://h/a/archive.tar-P.gz")
    }

    @Test func aURLWithoutAnExtensionGetsThePartAppended() {
        #expect(CacheKeys.inserting("P", into: "https://h/a/image") == "https://h/a/image-P")
        #expect(CacheKeys.inserting("P", into: "https://h/") == "https://h/-P")
    }

    @Test func aDotInADirectoryIsNotAnExtension() {
        #expect(CacheKeys.inserting("P", into: "https://h/a.b/c") == "https://h/a.b/c-P")
        #expect(CacheKeys.inserting("P", into: "https://img.example.com/c") == "https://img.example.com/c-P")
    }

    @Test func aDotInTheHostOfAURLWithoutAPathIsNotAnExtension() {
        #expect(CacheKeys.inserting("P", into: "https://img.example.com") == "https://img.example.com-P")
        #expect(CacheKeys.inserting("P", into: "https://img.example.com?x=1") == "https://img.example.com?x=1-P")
    }

    @Test func aDotInTheQueryOrFragmentIsNotAnExtension() {
        #expect(CacheKeys.inserting("P", into: "https://h/a/image?v=1.5") == "https://h/a/image?v=1.5-P")
        #expect(CacheKeys.inserting("P", into: "https://h/a/image#x.png") == "https://h/a/image#x.png-P")
        #expect(CacheKeys.inserting("P", into: "https://h/a/image.jpg?v=1.5") == "https://h/a/image-P.jpg?v=1.5")
    }

    @Test func aTrailingDotIsNotAnExtension() {
        #expect(CacheKeys.inserting("P", into: "https://h/a/image.") == "https://h/a/image.-P")
    }

    @Test func plainKeysThatAreNotURLs() {
        #expect(CacheKeys.inserting("P", into: "image.png") == "image-P.png")
        #expect(CacheKeys.inserting("P", into: "abc") == "abc-P")
        #expect(CacheKeys.inserting("P", into: "") == "-P")
        #expect(CacheKeys.inserting("P", into: "dir/photo.jpeg?q=1") == "dir/photo-P.jpeg?q=1")
    }

    // Keys that URLComponents would percent-encode (spaces, non-ASCII, a stray `%`): the path is found
    // in the key itself, so the part lands in the right place and nothing traps.
    @Test func keysWithSpacesAndNonASCIILettersKeepTheirText() {
        #expect(CacheKeys.inserting("P", into: "photos/café.jpg") == "photos/café-P.jpg")
        #expect(CacheKeys.inserting("P", into: "100% real.png#f") == "100% real-P.png#f")
        #expect(CacheKeys.inserting("P", into: "https://h/a b c d/x?v=1.5") == "https://h/a b c d/x?v=1.5-P")
        #expect(CacheKeys.inserting("P", into: "https://h/ä ö/ü.png?x=1") == "https://h/ä ö/ü-P.png?x=1")
    }

    @Test func aFileURL() {
        #expect(CacheKeys.inserting("P", into: "file:///tmp/pictures/cat.jpg") == "file:///tmp/pictures/cat-P.jpg")
        #expect(CacheKeys.inserting("P", into: "file:///tmp/pictures.d/cat") == "file:///tmp/pictures.d/cat-P")
    }

    @Test func aDotfileHasNoExtension() {
        #expect(CacheKeys.inserting("P", into: "/dir/.hidden") == "/dir/.hidden-P")
        #expect(CacheKeys.inserting("P", into: ".hidden") == ".hidden-P")
        #expect(CacheKeys.inserting("P", into: "/dir/.hidden.png") == "/dir/.hidden-P.png")
    }

    @Test func thumbnailPartNamesTheSizeAndWhetherTheAspectRatioIsKept() {
        let size = PixelSize(width: 100, height: 50)
        #expect(CacheKeys.thumbnailPart(size, preservesAspectRatio: true) == "Thumbnail(100,50,1)")
        #expect(CacheKeys.thumbnailPart(size, preservesAspectRatio: false) == "Thumbnail(100,50,0)")
    }

    @Test func aThumbnailPartGoesBeforeTheExtension() {
        let part = CacheKeys.thumbnailPart(PixelSize(width: 100, height: 50), preservesAspectRatio: true)
        #expect(CacheKeys.inserting(part, into: "https://h/p/cat.png?s=1") == "https://h/p/cat-Thumbnail(100,50,1).png?s=1")
        #expect(CacheKeys.inserting(part, into: "https://h/p/cat") == "https://h/p/cat-Thumbnail(100,50,1)")
    }

    @Test func partsInsertedTwiceStackBeforeTheExtension() {
        let once = CacheKeys.inserting("A", into: "https://h/cat.png")
        #expect(CacheKeys.inserting("B", into: once) == "https://h/cat-A-B.png")
    }
}
