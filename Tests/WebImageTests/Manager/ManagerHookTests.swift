import Foundation
import Testing
@testable import WebImage

/// The hooks of ``WebImageManagerConfig``: `shouldDownload` and the options processor.
@Suite struct ManagerHookTests: ManagerServerSuite {
    let server: TestHTTPServer
    let picture: Data

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture()
    }

    @Test func shouldDownloadCanRefuseADownload() async throws {
        serve("/refuse.png")
        let fixture = ManagerFixture(config: WebImageManagerConfig(shouldDownload: { !$0.path.contains("refuse") }))
        defer { fixture.directory.remove() }
        await #expect(throws: WebImageError.self) { try await fixture.manager.loadImage(url: server.url("/refuse.png")) }
        #expect(server.requestCount(for: "/refuse.png") == 0)
    }

    @Test func theOptionsProcessorRewritesOptionsAndContext() async throws {
        serve("/processed.png")
        let fixture = ManagerFixture(config: WebImageManagerConfig(optionsProcessor: { _, options, context in
            options.insert(.waitStoreCache)
            context.thumbnailPixelSize = PixelSize(width: 8, height: 8)
        }))
        defer { fixture.directory.remove() }
        let result = try await fixture.manager.loadImage(url: server.url("/processed.png"))
        #expect(result.image.width == 8)
    }
}
