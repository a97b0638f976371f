import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import WebImage

/// Servers that break HTTP on purpose, met through ``WebImageManager``: each load ends in the right
/// typed ``WebImageError`` within the downloader's limits, never hangs, reads no more than the size
/// limit allows, blocks the URL only for a permanent failure, and leaves nothing in either cache tier.
@Suite struct HostileServerTests {
    let server: TestHTTPServer

    init() throws {
        server = try TestHTTPServer()
    }

    /// Small limits, so that every hostile case ends quickly: 1 MiB, 2 s in all. The idle time-out is
    /// far longer than the total deadline, so a time-out within the hang bound is the downloader's own.
    /// Scaled with `testTimeScale` (ThreadSanitizer): a redirect loop's dozen requests once outran 2 s there.
    static let limits = DownloaderConfig(downloadTimeout: .seconds(2) * testTimeScale, idleTimeout: .seconds(30) * testTimeScale,
                                         maxResponseBytes: 1 << 20)
    /// A load still running after this long has hung: sixty times the download limit, because on a
    /// machine whose cores other work holds the whole suite's loads have been seen to stall for 30 s
    /// (20 s failed every test of this suite at once there).
    static let hangBound: Duration = .seconds(120) * testTimeScale

    /// What a load came to.
    enum Outcome: Sendable {
        case succeeded(ImageResult)
        case failed(any Error)
        /// Still running after ``hangBound`` (then cancelled).
        case hung
    }

    /// Loads `url` through `fixture`'s manager, giving up after ``hangBound``.
    func load(_ url: URL, with fixture: ManagerFixture, options: WebImageOptions = []) async -> Outcome {
        let manager = fixture.manager
        return await withTaskGroup(of: Outcome.self) { group in
            group.addTask {
                do { return .succeeded(try await manager.loadImage(url: url, options: options)) } catch { return .failed(error) }
            }
            group.addTask {
                try? await Task.sleep(for: Self.hangBound)
                return .hung
            }
            let first = await group.next() ?? .hung
            group.cancelAll()
            return first
        }
    }

    /// The load's ``WebImageError``; records an issue (and returns nil) when it succeeded, hung, or
    /// threw anything else, or when the error does not carry `url`.
    func webImageError(_ outcome: Outcome, url: URL, sourceLocation: SourceLocation = #_sourceLocation) -> WebImageError? {
        switch outcome {
        case .succeeded(let result):
            Issue.record("expected a failure, got a \(result.image.width)×\(result.image.height) image", sourceLocation: sourceLocation)
        case .hung:
            Issue.record("the load was still running after \(Self.hangBound)", sourceLocation: sourceLocation)
        case .failed(let error as WebImageError):
            #expect(error.url == url, "\(error)", sourceLocation: sourceLocation)
            return error
        case .failed(let error):
            Issue.record("not a WebImageError: \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }

    /// Neither tier holds anything for `url`, the cache directory holds no entry, temporary file or
    /// sidecar, and the manager and downloader have nothing left running.
    func expectNothingCached(_ fixture: ManagerFixture, for url: URL, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let key = try #require(fixture.manager.cacheKey(for: url), sourceLocation: sourceLocation)
        #expect(fixture.cache.imageFromMemory(forKey: key) == nil, "memory entry for \(key)", sourceLocation: sourceLocation)
        let disk = try #require(fixture.cache.diskCache, sourceLocation: sourceLocation)
        #expect(try await disk.data(forKey: key) == nil, "disk entry for \(key)", sourceLocation: sourceLocation)
        #expect(await disk.count() == 0, sourceLocation: sourceLocation)
        #expect(await disk.totalSize() == 0, sourceLocation: sourceLocation)
        #expect(fixture.directory.files() == [], "files left in the cache directory", sourceLocation: sourceLocation)
        try await waitUntil { !fixture.manager.isRunning && fixture.downloader.currentDownloadCount == 0 }
        #expect(!fixture.manager.isRunning, sourceLocation: sourceLocation)
        #expect(fixture.downloader.currentDownloadCount == 0, sourceLocation: sourceLocation)
    }

    /// A `size`×`size` RGB PNG of noise (it does not compress: about 3 × size² bytes).
    static func noisePNG(size: Int) throws -> Data {
        var random = SplitMix(seed: 7)
        let pixels = (0..<(size * size * 3)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        return try CoderRegistry.shared.encode(Image(width: size, height: size, pixelFormat: .rgb8, pixels: pixels), as: .png)
    }

    // MARK: Connection reset

    @Test(arguments: [true, false], [WebImageOptions(), .progressiveLoad])
    func aConnectionResetMidBodyIsATransientFailureThatCachesNothing(declaresLength: Bool, options: WebImageOptions) async throws {
        let picture = try Self.noisePNG(size: 128)
        server.route("/reset.png", TestResponse(
            headers: [("Content-Type", "image/png")], body: picture, drip: (chunkSize: 8 << 10, interval: .milliseconds(5)),
            contentLength: declaresLength ? .automatic : .omitted, misbehavior: .resetAfterBodyBytes(picture.count / 2)))
        let fixture = ManagerFixture(downloaderConfig: Self.limits)
        defer { fixture.directory.remove() }
        let url = server.url("/reset.png")

        let error = webImageError(await load(url, with: fixture, options: options), url: url)
        switch error {
        case .transport?, .truncatedResponse?: break
        default: Issue.record("expected transport or truncatedResponse, got \(String(describing: error))")
        }
        #expect(error?.isTransient == true)
        #expect(!fixture.manager.isFailedURL(url), "a reset connection is no reason to block the URL")
        #expect(server.closedByClientCount(for: "/reset.png") == 0, "the server, not the client, ended the connection")
        try await expectNothingCached(fixture, for: url)
    }

    // MARK: Headers that never end

    @Test(arguments: [TestResponse.Misbehavior.endlessHeaderLines(interval: .milliseconds(20)), .unterminatedHeaders])
    func headersThatNeverEndTimeOutAtTheTotalDeadline(_ misbehavior: TestResponse.Misbehavior) async throws {
        server.route("/headers.png", TestResponse(headers: [("Content-Type", "image/png")], misbehavior: misbehavior))
        let fixture = ManagerFixture(downloaderConfig: Self.limits)
        defer { fixture.directory.remove() }
        let url = server.url("/headers.png")

        let error = webImageError(await load(url, with: fixture), url: url)
        #expect(error == .timedOut(url: url))
        #expect(!fixture.manager.isFailedURL(url), "a time-out is no reason to block the URL")
        #expect(await server.waitUntil { server.closedByClientCount(for: "/headers.png") == 1 }, "the client must hang up")
        try await expectNothingCached(fixture, for: url)
    }

    @Test func aFloodOfHeaderLinesEndsWithoutReadingForever() async throws {
        server.route("/flood.png", TestResponse(headers: [("Content-Type", "image/png")],
                                                misbehavior: .endlessHeaderLines(interval: .zero)))
        let fixture = ManagerFixture(downloaderConfig: Self.limits)
        defer { fixture.directory.remove() }
        let url = server.url("/flood.png")

        let error = webImageError(await load(url, with: fixture), url: url)
        switch error {
        case .rejected(_, let reason)? where reason.contains("heads passed"): break   // the transfer's own head limit
        case .transport?, .timedOut?: break
        default: Issue.record("expected the head limit's refusal, transport or timedOut, got \(String(describing: error))")
        }
        #expect(!fixture.manager.isFailedURL(url))
        #expect(await server.waitUntil { server.closedByClientCount(for: "/flood.png") == 1 }, "the client must hang up")
        try await expectNothingCached(fixture, for: url)
    }

    // MARK: Sizes

    @Test func aGigabyteContentLengthIsRefusedBeforeTheBody() async throws {
        // 1 KB a second: the client's hang-up (the event the server waits for) stops the drip, and a
        // loaded machine has 16 s to get there. A client that read the body instead would end in a
        // time-out (2 s), not in responseTooLarge.
        let body = Data(repeating: 0x5A, count: 64 << 10)
        server.route("/huge.png", TestResponse(headers: [("Content-Type", "image/png")], body: body,
                                               drip: (chunkSize: 1 << 10, interval: .seconds(1) * testTimeScale),
                                               contentLength: .exactly(1 << 30)))
        let fixture = ManagerFixture(downloaderConfig: Self.limits)
        defer { fixture.directory.remove() }
        let url = server.url("/huge.png")

        let error = webImageError(await load(url, with: fixture), url: url)
        #expect(error == .responseTooLarge(limit: 1 << 20, url: url))
        #expect(fixture.manager.isFailedURL(url), "a body over the limit is permanent: the URL is blocked")
        #expect(await server.waitUntil { server.closedByClientCount(for: "/huge.png") == 1 }, "the client must hang up")
        #expect(server.bytesSent(for: "/huge.png") < 16 << 10, "the client read the body instead of refusing it up front")
        try await expectNothingCached(fixture, for: url)
    }

    @Test(arguments: [WebImageOptions(), .progressiveLoad])
    func anEndlessChunkedBodyStopsAtTheSizeLimit(options: WebImageOptions) async throws {
        // About 4 MB/s: paced so that the bytes the kernels buffer while the client hangs up stay small
        // next to the limit, however slowly a loaded machine runs the client.
        server.route("/endless.png", TestResponse(headers: [("Content-Type", "image/png")], body: try encodedPicture(),
                                                  misbehavior: .endlessChunkedBody(chunkSize: 8 << 10, interval: .milliseconds(2))))
        let fixture = ManagerFixture(downloaderConfig: Self.limits)
        defer { fixture.directory.remove() }
        let url = server.url("/endless.png")

        let error = webImageError(await load(url, with: fixture, options: options), url: url)
        #expect(error == .responseTooLarge(limit: 1 << 20, url: url))
        #expect(fixture.manager.isFailedURL(url))
        #expect(await server.waitUntil { server.closedByClientCount(for: "/endless.png") == 1 }, "the client must hang up")
        let sent = server.bytesSent(for: "/endless.png")
        #expect(sent > 1 << 20)
        // The limit plus what loopback's socket buffers take once the client stops reading (Linux grows
        // them to several MB: 4 MB was passed on a loaded machine); a client that kept reading would
        // take far more of a body that never ends.
        #expect(sent < (16 << 20) * testMemoryScale, "the server sent \(sent) bytes before the client hung up: it kept reading past the limit")
        try await expectNothingCached(fixture, for: url)
    }

    // MARK: Redirects and wrong content

    @Test func aRedirectLoopFailsWithTooManyRedirects() async throws {
        server.route("/loop-a.png", .redirect(to: "/loop-b.png"))
        server.route("/loop-b.png", .redirect(to: "/loop-a.png"))
        var config = Self.limits
        config.maxRedirects = 3
        let fixture = ManagerFixture(downloaderConfig: config)
        defer { fixture.directory.remove() }
        let url = server.url("/loop-a.png")

        let error = webImageError(await load(url, with: fixture), url: url)
        #expect(error == .tooManyRedirects(url: url))
        #expect(fixture.manager.isFailedURL(url), "a redirect loop is permanent: the URL is blocked")
        #expect(server.totalRequestCount <= config.maxRedirects + 1)
        try await expectNothingCached(fixture, for: url)
    }

    @Test(arguments: [false, true])
    func anHTMLPageInsteadOfAnImageFailsAndBlocksTheURL(acceptsOnlyImages: Bool) async throws {
        let html = "<!doctype html><html><body><h1>Not an image</h1></body></html>"
        server.route("/page.png", TestResponse(headers: [("Content-Type", "text/html; charset=utf-8")], body: Data(html.utf8)))
        var config = Self.limits
        if acceptsOnlyImages { config.acceptableContentTypes = ["image/*"] }
        let fixture = ManagerFixture(downloaderConfig: config)
        defer { fixture.directory.remove() }
        let url = server.url("/page.png")

        let error = webImageError(await load(url, with: fixture), url: url)
        #expect(error == (acceptsOnlyImages ? .unacceptableContentType("text/html; charset=utf-8", url: url)
                                             : .decodingFailed(.unsupportedFormat(.unknown), url: url)))
        #expect(error?.isTransient == false)
        #expect(fixture.manager.isFailedURL(url), "a body that is no image is permanent: the URL is blocked")
        try await expectNothingCached(fixture, for: url)

        // Blocked: refused without asking the server again, until .retryFailed.
        #expect(webImageError(await load(url, with: fixture), url: url) == .blockedURL(url))
        #expect(server.requestCount(for: "/page.png") == 1)
        _ = webImageError(await load(url, with: fixture, options: .retryFailed), url: url)
        #expect(server.requestCount(for: "/page.png") == 2)
        try await expectNothingCached(fixture, for: url)
    }

    @Test func anHTMLErrorPageWithA503IsTransientAndDoesNotBlock() async throws {
        server.route("/busy.png", TestResponse(status: 503, headers: [("Content-Type", "text/html")], body: Data("<html>busy</html>".utf8)))
        let fixture = ManagerFixture(downloaderConfig: Self.limits)
        defer { fixture.directory.remove() }
        let url = server.url("/busy.png")

        let error = webImageError(await load(url, with: fixture), url: url)
        #expect(error == .badStatusCode(503, url: url))
        #expect(!fixture.manager.isFailedURL(url))
        try await expectNothingCached(fixture, for: url)
    }

    // MARK: Content-Encoding

    @Test func aGzipEncodedImageLoadsLikeAnyOther() async throws {
        // Compressing a PNG makes it a little larger: the Content-Length (of the encoded bytes) is more
        // than the bytes URLSession hands over once it has decoded them.
        let picture = try Self.noisePNG(size: 64)
        let encoded = Gzip.stored(picture)
        server.route("/gzip.png", TestResponse(headers: [("Content-Type", "image/png"), ("Content-Encoding", "gzip")], body: encoded))
        let fixture = ManagerFixture(downloaderConfig: Self.limits)
        defer { fixture.directory.remove() }
        let url = server.url("/gzip.png")

        switch await load(url, with: fixture, options: .waitStoreCache) {
        case .succeeded(let result):
            #expect(result.data == picture)
            #expect(result.image.size == PixelSize(width: 64, height: 64))
        case .failed(let error):
            Issue.record("a valid gzip-encoded response (\(encoded.count) bytes encoding \(picture.count)) failed: \(error)")
        case .hung:
            Issue.record("the load hung")
        }
        #expect(!fixture.manager.isFailedURL(url))
    }

    @Test func aGzipBombStopsAtTheSizeLimit() async throws {
        // About 100 KB on the wire (under the limit, so its Content-Length passes), 16 MiB decoded.
        let bomb = Gzip.zeros(count: 16 << 20)
        server.route("/bomb.png", TestResponse(headers: [("Content-Type", "image/png"), ("Content-Encoding", "gzip")], body: bomb))
        let fixture = ManagerFixture(downloaderConfig: Self.limits)
        defer { fixture.directory.remove() }
        let url = server.url("/bomb.png")

        let error = webImageError(await load(url, with: fixture), url: url)
        #expect(bomb.count < 1 << 20)
        #expect(error == .responseTooLarge(limit: 1 << 20, url: url))
        // Memory is measured in a process of its own (the tool, default limits), apart from the other tests.
        let childCache = TemporaryDirectory()
        defer { childCache.remove() }
        let child = try await PeakMemory.ofFetch(["--cache-dir", childCache.url.path, url.absoluteString])
        #expect(child.status == 1, "the tool's load fails")
        #expect(child.peakBytes < (200 << 20) * testMemoryScale, "the loading process peaked at \(child.peakBytes >> 20) MiB")
        #expect(fixture.manager.isFailedURL(url))
        try await expectNothingCached(fixture, for: url)
    }

    // MARK: Decompression bombs

    enum Bomb: String, CaseIterable, Sendable {
        /// A valid signature and an IHDR (correct CRC) declaring 100000×100000 RGB, a tiny IDAT, IEND.
        case png
        /// A real baseline JPEG whose SOF0 is patched to declare 65000×65000.
        case jpeg

        var declared: (width: Int, height: Int) { self == .png ? (100_000, 100_000) : (65_000, 65_000) }

        func bytes() throws -> Data {
            switch self {
            case .png:
                return PNGCoderTests.craftedPNG(width: 100_000, height: 100_000)
            case .jpeg:
                var data = [UInt8](try encodedPicture(as: .jpeg))
                let sof = try #require(data.indices.dropLast().first { data[$0] == 0xFF && data[$0 + 1] == 0xC0 })
                // FF C0, length (2), precision (1), height (2), width (2).
                data.replaceSubrange(sof + 5..<sof + 9, with: [0xFD, 0xE8, 0xFD, 0xE8])
                return Data(data)
            }
        }
    }

    @Test(arguments: Bomb.allCases, [WebImageOptions(), .progressiveLoad])
    func anImageDeclaringGigapixelsFailsFastWithoutAllocating(_ bomb: Bomb, options: WebImageOptions) async throws {
        let path = "/bomb-\(bomb.rawValue)-\(options.rawValue).\(bomb.rawValue)"
        server.route(path, TestResponse(headers: [("Content-Type", "image/\(bomb.rawValue)")], body: try bomb.bytes()))
        let fixture = ManagerFixture(downloaderConfig: Self.limits)
        defer { fixture.directory.remove() }
        let url = server.url(path)

        let error = webImageError(await load(url, with: fixture, options: options), url: url)
        let declared = bomb.declared
        #expect(error == .decodingFailed(.imageTooLarge(width: declared.width, height: declared.height,
                                                        limit: DecodeOptions.defaultPixelCountLimit), url: url))
        if options.isEmpty {   // memory in a process of its own (the tool), apart from the other tests
            let childCache = TemporaryDirectory()
        defer { childCache.remove() }
        let child = try await PeakMemory.ofFetch(["--cache-dir", childCache.url.path, url.absoluteString])
            #expect(child.status == 1, "the tool's load fails")
            #expect(child.peakBytes < (200 << 20) * testMemoryScale, "the loading process peaked at \(child.peakBytes >> 20) MiB")
        }
        #expect(fixture.manager.isFailedURL(url))
        try await expectNothingCached(fixture, for: url)
    }
}

/// Hand-made gzip streams (RFC 1952 around RFC 1951 deflate) for `Content-Encoding: gzip` replies.
enum Gzip {
    /// `data` in stored (uncompressed) deflate blocks: a valid stream a little larger than `data`.
    static func stored(_ data: Data) -> Data {
        let bytes = [UInt8](data)
        var out = header
        var offset = 0
        repeat {
            let end = min(offset + 65_535, bytes.count)
            let count = end - offset
            out.append(end == bytes.count ? 1 : 0)   // BFINAL, BTYPE 00; the rest of the byte is padding
            out += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += bytes[offset..<end]
            offset = end
        } while offset < bytes.count
        return Data(out + trailer(crc: PNGCoderTests.crc32(bytes), size: bytes.count))
    }

    /// About `count` zero bytes in one fixed-Huffman block: a literal 0, then copies of 258 bytes at
    /// distance 1 (13 bits each, so about 160:1). The trailer's CRC is left 0: a client that honours
    /// its size limit never reads that far, and one that does fails on it.
    static func zeros(count: Int) -> Data {
        var bits = BitWriter()
        bits.write(1, count: 1)   // BFINAL
        bits.write(1, count: 2)   // BTYPE 01: fixed Huffman codes
        bits.writeCode(0x30, length: 8)   // literal 0
        for _ in 0..<(max(0, count - 1) / 258) {
            bits.writeCode(0xC5, length: 8)   // length symbol 285: 258 bytes
            bits.writeCode(0, length: 5)      // distance code 0: distance 1
        }
        bits.writeCode(0, length: 7)          // end of block (256)
        return Data(header + bits.bytes + trailer(crc: 0, size: 1 + (max(0, count - 1) / 258) * 258))
    }

    private static let header: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]

    private static func trailer(crc: UInt32, size: Int) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) }
            + (0..<4).map { UInt8(truncatingIfNeeded: UInt32(truncatingIfNeeded: size) >> (8 * $0)) }
    }

    /// Deflate's bit order: values least significant bit first, Huffman codes most significant first.
    private struct BitWriter {
        var bytes: [UInt8] = []
        private var used = 8

        mutating func write(_ value: UInt32, count: Int) {
            for index in 0..<count { append(value >> index & 1) }
        }

        mutating func writeCode(_ code: UInt32, length: Int) {
            for index in stride(from: length - 1, through: 0, by: -1) { append(code >> index & 1) }
        }

        private mutating func append(_ bit: UInt32) {
            if used == 8 {
                bytes.append(0)
                used = 0
            }
            bytes[bytes.count - 1] |= UInt8(bit) << used
            used += 1
        }
    }
}
