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
}
