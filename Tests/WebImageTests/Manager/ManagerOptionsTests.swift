import Foundation
import Testing
@testable import WebImage

/// What each ``WebImageOptions`` flag and ``WebImageContext`` setting does to a load.
@Suite struct ManagerOptionsTests: ManagerServerSuite {
    let server: TestHTTPServer
    let picture: Data

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture()
    }

    @Test func fromCacheOnlyNeverDownloads() async throws {
        serve("/cacheonly.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/cacheonly.png")
        await #expect(throws: WebImageError.notInCache(url: url)) {
            try await fixture.manager.loadImage(url: url, options: .fromCacheOnly)
        }
        #expect(server.requestCount(for: "/cacheonly.png") == 0)
        #expect(!fixture.manager.isFailedURL(url))
        _ = try await fixture.manager.loadImage(url: url)
        #expect(try await fixture.manager.loadImage(url: url, options: .fromCacheOnly).cacheType == .memory)
    }

    @Test func fromLoaderOnlySkipsTheCacheButStillStores() async throws {
        serve("/loaderonly.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/loaderonly.png")
        _ = try await fixture.manager.loadImage(url: url)
        let again = try await fixture.manager.loadImage(url: url, options: .fromLoaderOnly)
        #expect(again.cacheType == .none)
        #expect(server.requestCount(for: "/loaderonly.png") == 2)
    }

    @Test func cacheMemoryOnlyNeverWritesToDisk() async throws {
        serve("/memonly.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/memonly.png")
        _ = try await fixture.manager.loadImage(url: url, options: [.cacheMemoryOnly, .waitStoreCache])
        #expect(await fixture.cache.containsImage(forKey: url.absoluteString) == .memory)
        #expect(await !fixture.cache.diskImageExists(forKey: url.absoluteString))
    }

    @Test func waitStoreCacheReturnsAfterTheDiskWrite() async throws {
        serve("/wait.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/wait.png")
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache)
        #expect(await fixture.cache.diskImageExists(forKey: url.absoluteString))
    }

    @Test func queryMemoryDataReturnsTheStoredBytesForAMemoryHit() async throws {
        serve("/memdata.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/memdata.png")
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache)
        #expect(try await fixture.manager.loadImage(url: url).data == nil)
        let withData = try await fixture.manager.loadImage(url: url, options: .queryMemoryData)
        #expect(withData.cacheType == .memory)
        #expect(withData.data == picture)
    }

    @Test func queryAndStoreCacheTypesChooseTheTiers() async throws {
        serve("/tiers.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/tiers.png")
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache, context: WebImageContext(storeCacheType: .disk))
        #expect(await fixture.cache.containsImage(forKey: url.absoluteString) == .disk)
        let diskOnly = try await fixture.manager.loadImage(url: url, context: WebImageContext(queryCacheType: .disk, storeCacheType: .none))
        #expect(diskOnly.cacheType == .disk)
        let none = try await fixture.manager.loadImage(url: url, context: WebImageContext(queryCacheType: .none, storeCacheType: .none))
        #expect(none.cacheType == .none)
        #expect(server.requestCount(for: "/tiers.png") == 2)
    }

    @Test func priorityCookiesAndHeadersReachTheLoader() async throws {
        serve("/headers.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let context = WebImageContext(requestModifier: { request in
            var request = request
            request.setValue("yes", forHTTPHeaderField: "X-Modified")
            return request
        }, httpHeaders: ["X-Extra": "1"])
        _ = try await fixture.manager.loadImage(url: server.url("/headers.png"), options: [.highPriority, .handleCookies], context: context)
        let headers = try #require(server.requests(for: "/headers.png").first).headers
        #expect(headers["x-modified"] == "yes")
        #expect(headers["x-extra"] == "1")
    }

    @Test func aResponseModifierCanRefuseAResponse() async throws {
        serve("/refused.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/refused.png")
        await #expect(throws: WebImageError.self) {
            try await fixture.manager.loadImage(url: url, context: WebImageContext(responseModifier: { _ in nil }))
        }
        #expect(!fixture.manager.isFailedURL(url))
    }

    @Test func allowInvalidSSLCertificatesIsAClearErrorForHTTPS() async throws {
        let manager = ManagerFixture().manager
        let url = URL(string: "https://127.0.0.1:1/a.png")!
        do {
            _ = try await manager.loadImage(url: url, options: .allowInvalidSSLCertificates)
            Issue.record("expected unsupportedOption")
        } catch let error as WebImageError {
            guard case .unsupportedOption(let name, url) = error else { Issue.record("got \(error)"); return }
            #expect(name.hasPrefix("allowInvalidSSLCertificates"))
        }
        serve("/plain.png")
        #expect(try await manager.loadImage(url: server.url("/plain.png"), options: .allowInvalidSSLCertificates).image.width == 64)
    }

    @Test func scaleDownLargeImagesLimitsThePixelCount() async throws {
        serve("/large.png", try encodedPicture(width: 200, height: 100))
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let result = try await fixture.manager.loadImage(url: server.url("/large.png"), options: .scaleDownLargeImages,
                                                         context: WebImageContext(scaleDownLimitBytes: 50 * 25 * 4))
        #expect(result.image.size.pixelCount <= 50 * 25)
        #expect(result.image.width == 50)
    }

    @Test func anAt2xFileNameMeansScaleTwoUnlessTheContextSaysOtherwise() async throws {
        serve("/icon@2x.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/icon@2x.png")
        #expect(try await fixture.manager.loadImage(url: url).image.scale == 2)
        let custom = try await fixture.manager.loadImage(url: url, options: .fromLoaderOnly, context: WebImageContext(imageScaleFactor: 3))
        #expect(custom.image.scale == 3)
    }

    @Test func theDecryptorRunsBeforeDecoding() async throws {
        let scrambled = Data(picture.map { $0 ^ 0x5A })
        serve("/secret.png", scrambled)
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let context = WebImageContext(decryptor: { data, _ in Data(data.map { $0 ^ 0x5A }) })
        let result = try await fixture.manager.loadImage(url: server.url("/secret.png"), context: context)
        #expect(result.image.width == 64)
        #expect(result.data == picture)
    }
}
