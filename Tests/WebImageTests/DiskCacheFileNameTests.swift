import Testing
@testable import WebImage

@Suite struct DiskCacheFileNameTests {
    @Test func nameIsTheMD5OfTheKeyPlusThePathExtension() {
        let key = "https://example.com/a/b/photo.jpg?size=large"
        #expect(DiskCacheFileName.make(forKey: key) == MD5.hex(Array(key.utf8)) + ".jpg")
    }

    @Test func extensionComesFromThePathNotTheQuery() {
        #expect(DiskCacheFileName.pathExtension(ofKey: "https://example.com/image?name=a.png") == "")
        #expect(DiskCacheFileName.pathExtension(ofKey: "https://example.com/a.webp#frag.png") == "webp")
        #expect(DiskCacheFileName.pathExtension(ofKey: "https://example.com/noextension") == "")
    }

    @Test func keysThatAreNotURLsUseTheirOwnExtension() {
        #expect(DiskCacheFileName.pathExtension(ofKey: "some key/with spaces.gif") == "gif")
        #expect(DiskCacheFileName.pathExtension(ofKey: "plain") == "")
        #expect(DiskCacheFileName.plainPathExtension("dir.d/name") == "")
        #expect(DiskCacheFileName.plainPathExtension("dir/.hidden") == "")
        #expect(DiskCacheFileName.plainPathExtension("dir/archive.tar.gz/") == "gz")
        #expect(DiskCacheFileName.plainPathExtension("name.") == "")
        #expect(DiskCacheFileName.plainPathExtension("//é.jpg") == "jpg")
        #expect(DiskCacheFileName.pathExtension(ofKey: "https://example.com") == "")
        #expect(DiskCacheFileName.pathExtension(ofKey: "https://example.com/dir.d/") == "d")
        #expect(DiskCacheFileName.pathExtension(ofKey: "file:///tmp/photo.JPG") == "JPG")
        #expect(DiskCacheFileName.pathExtension(ofKey: "file:v/..//\u{FFFD}") == "")
    }

    @Test func colonsAndNulsAreStrippedAndLongExtensionsDropped() {
        #expect(DiskCacheFileName.pathExtension(ofKey: "some/file.p:ng") == "png")
        #expect(DiskCacheFileName.pathExtension(ofKey: "some/file.pn\u{0}g") == "png")
        let long = "https://example.com/a." + String(repeating: "x", count: 300)
        #expect(DiskCacheFileName.make(forKey: long).count == 32)
    }

    @Test func percentEncodedForbiddenBytesAreStrippedLikeTheBytesThemselves() {
        // SDWebImage's test49: a key ending in `.jpg00%00` names a `.jpg00` file.
        #expect(DiskCacheFileName.pathExtension(ofKey: "https://example.com/image.jpg00%00") == "jpg00")
        #expect(DiskCacheFileName.make(forKey: "https://example.com/image.jpg00%00").hasSuffix(".jpg00"))
        #expect(DiskCacheFileName.pathExtension(ofKey: "some/file.p%3Ang%3a") == "png")
        #expect(DiskCacheFileName.pathExtension(ofKey: "some/file.we%2Fb%2fp") == "webp")
        // Other escapes, and a `%` without two hex digits after it, are ordinary text.
        #expect(DiskCacheFileName.pathExtension(ofKey: "some/file.jp%20g") == "jp%20g")
        #expect(DiskCacheFileName.pathExtension(ofKey: "some/file.png%0") == "png%0")
    }
}
