import Foundation
import Testing
@testable import WebImage

/// A loader that serves a fixed body for one scheme (a real implementation of the protocol).
struct FixedLoader: ImageLoader {
    var scheme: String
    var body: Data

    func canLoad(_ url: URL) -> Bool { url.scheme == scheme }

    func load(_ request: ImageLoadRequest, progress: ImageLoadProgressHandler?) async throws -> ImageLoadResponse {
        ImageLoadResponse(data: body, url: request.url)
    }
}

@Suite struct LoadersManagerTests {
    @Test func picksTheMostRecentlyAddedLoaderThatCanLoad() async throws {
        let manager = LoadersManager(loaders: [FixedLoader(scheme: "s3", body: Data([1]))])
        let url = URL(string: "s3://bucket/key.png")!
        #expect(try await manager.load(ImageLoadRequest(url: url)).data == Data([1]))
        manager.add(FixedLoader(scheme: "s3", body: Data([2])))
        #expect(try await manager.load(ImageLoadRequest(url: url)).data == Data([2]))
        manager.remove(FixedLoader.self)
        #expect(!manager.canLoad(url))
        await #expect(throws: WebImageError.invalidURL(url.absoluteString)) { try await manager.load(ImageLoadRequest(url: url)) }
    }

    @Test func theSharedManagerRoutesHTTPToTheDownloaderAndFilesToTheFileLoader() {
        #expect(LoadersManager.shared.loader(for: URL(string: "https://example.com/a.png")!) is Downloader)
        #expect(LoadersManager.shared.loader(for: URL(fileURLWithPath: "/tmp/a.png")) is FileLoader)
        #expect(LoadersManager.shared.loader(for: URL(string: "data:,x")!) is FileLoader)
    }
}
