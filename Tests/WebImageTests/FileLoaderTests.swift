import Foundation
import Synchronization
import Testing
@testable import WebImage

@Suite struct FileLoaderTests {
    let sample = Corpus.packageRoot.appendingPathComponent("Samples/gradient-rgba.png")

    @Test func readsAFileURLInChunksWithProgress() async throws {
        let reports = Mutex<[ImageLoadProgress]>([])
        let response = try await FileLoader(chunkSize: 10_000).load(ImageLoadRequest(url: sample)) { progress in
            reports.withLock { $0.append(progress) }
        }
        let expected = try Data(contentsOf: sample)
        #expect(response.data == expected)
        #expect(response.contentType == "image/png")
        let all = reports.withLock { $0 }
        #expect(all.count == (expected.count + 9_999) / 10_000)
        #expect(all.last?.receivedBytes == expected.count)
        #expect(all.reduce(Data()) { $0 + $1.chunk } == expected)
    }

    @Test func aMissingFileIsATransportErrorWithTheURL() async {
        let url = URL(fileURLWithPath: "/nonexistent/image.png")
        await #expect(throws: WebImageError.transport(URLError(.fileDoesNotExist), url: url)) {
            try await FileLoader().load(ImageLoadRequest(url: url))
        }
    }

    @Test func aFileLargerThanTheLimitIsRefused() async {
        await #expect(throws: WebImageError.responseTooLarge(limit: 100, url: sample)) {
            try await FileLoader(maxBytes: 100).load(ImageLoadRequest(url: sample))
        }
    }

    @Test func anEmptyFileIsAnEmptyResponse() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let empty = directory.url.appendingPathComponent("empty.png")
        try Data().write(to: empty)
        await #expect(throws: WebImageError.emptyResponse(url: empty)) { try await FileLoader().load(ImageLoadRequest(url: empty)) }
    }

    @Test func decodesBase64AndPercentEncodedDataURLs() async throws {
        let png = try Data(contentsOf: sample)
        let base64 = URL(string: "data:image/png;base64," + png.base64EncodedString())!
        let response = try await FileLoader().load(ImageLoadRequest(url: base64))
        #expect(response.data == png)
        #expect(response.contentType == "image/png")
        let text = try await FileLoader().load(ImageLoadRequest(url: URL(string: "data:,Hello%20world")!))
        #expect(String(decoding: text.data, as: UTF8.self) == "Hello world")
    }

    @Test func aMalformedDataURLIsInvalid() async {
        await #expect(throws: WebImageError.self) {
            try await FileLoader().load(ImageLoadRequest(url: URL(string: "data:image/png;base64,@@@@")!))
        }
    }

    @Test func loadsOnlyFileAndDataURLs() {
        #expect(FileLoader().canLoad(sample))
        #expect(FileLoader().canLoad(URL(string: "data:,x")!))
        #expect(!FileLoader().canLoad(URL(string: "https://example.com/a.png")!))
    }
}
