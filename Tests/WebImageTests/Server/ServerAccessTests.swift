import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// imgproxy's access settings through the server: a secret in `Authorization`, CORS headers and
/// preflight, trusted signatures, `s3://` sources off, a path prefix and a second health path.
@Suite struct ServerAccessTests {
    let photo: Data

    init() throws {
        photo = try encodedPicture(width: 40, height: 20, as: .jpeg)
    }

    /// `IMGPROXY_SECRET`: an image or `/info` request without `Authorization: Bearer <secret>` is
    /// 403 and fetches nothing; `/health` needs none.
    @Test func aSecretGuardsImagesAndInfo() async throws {
        let fixture = try await ServerFixture { $0.secret = "s3cr3t" }
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: photo))
        let path = "/insecure/w:10/plain/\(fixture.source("/photo.jpg"))"
        #expect(try await fixture.get(path).status == 403)
        #expect(try await fixture.get(path, headers: ["Authorization": "Bearer wrong"]).status == 403)
        #expect(try await fixture.get("/info" + path.replacingOccurrences(of: "/w:10", with: "")).status == 403)
        #expect(fixture.sources.requestCount(for: "/photo.jpg") == 0)
        #expect(try await fixture.get(path, headers: ["Authorization": "Bearer s3cr3t"]).status == 200)
        #expect(try await fixture.get("/health").status == 200)
        await fixture.stop()
    }

    /// `IMGPROXY_ALLOW_ORIGIN`: every answer carries it, errors too, and `OPTIONS` is answered 200.
    @Test func corsHeadersAndPreflight() async throws {
        let fixture = try await ServerFixture { $0.allowOrigin = "https://example.com" }
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: photo))
        let image = try await fixture.get("/insecure/w:10/plain/\(fixture.source("/photo.jpg"))")
        #expect(image.status == 200 && image.header("Access-Control-Allow-Origin") == "https://example.com")
        #expect(image.header("Access-Control-Allow-Methods") == "GET, OPTIONS")
        let missing = try await fixture.get("/insecure/w:10/plain/\(fixture.source("/missing.jpg"))")
        #expect(missing.status == 404 && missing.header("Access-Control-Allow-Origin") == "https://example.com")
        let preflight = try await fixture.get("/insecure/w:10/plain/x", method: "OPTIONS")
        #expect(preflight.status == 200 && preflight.header("Access-Control-Allow-Origin") == "https://example.com")
        await fixture.stop()
        let plain = try await ServerFixture()
        #expect(try await plain.get("/health").header("Access-Control-Allow-Origin") == nil, "none unless configured")
        await plain.stop()
    }

    /// `IMGPROXY_TRUSTED_SIGNATURES`: listed signatures pass for any path on a signed server.
    @Test func trustedSignaturesPass() async throws {
        let fixture = try await ServerFixture(signing: .signed(keyHex: "6b6579", saltHex: "73616c74")) { $0.trustedSignatures = ["trusted1"] }
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: photo))
        let path = "/w:10/plain/\(fixture.source("/photo.jpg"))"
        #expect(try await fixture.get("/trusted1" + path).status == 200)
        #expect(try await fixture.get("/trusted2" + path).status == 403)
        await fixture.stop()
    }

    /// `IMGPROXY_USE_S3` off (`webimage serve`'s default): an `s3://` source is 404 at once.
    @Test func s3SourcesCanBeTurnedOff() async throws {
        let fixture = try await ServerFixture { $0.readsS3Sources = false }
        let refused = try await fixture.get("/insecure/w:10/plain/s3://bucket/photo.jpg")
        #expect(refused.status == 404 && String(decoding: refused.body, as: UTF8.self).contains("IMGPROXY_USE_S3"))
        await fixture.stop()
    }

    /// `IMGPROXY_SO_REUSEPORT`: a second server listens on the same port; without it the port is taken.
    @Test func serversShareAPortWithReusePort() async throws {
        let first = try await ServerFixture { $0.reusesPort = true }
        let port = first.port
        let second = try ImageServer(manager: first.managerFixture.manager,
                                     config: { var config = ImageServerConfig(port: port, signing: .unsigned); config.reusesPort = true; return config }())
        let (_, running) = try await second.start()
        #expect(second.port == port)
        let third = try ImageServer(manager: first.managerFixture.manager, config: ImageServerConfig(port: port, signing: .unsigned))
        await #expect(throws: ServerError.self, "without SO_REUSEPORT the port is taken") { _ = try await third.start() }
        running.cancel()
        _ = await running.result
        await first.stop()
    }

    /// `IMGPROXY_MAX_CLIENTS`: at the limit a new connection waits in the kernel's backlog (as behind
    /// imgproxy's limited listener) and is served once an open one closes. (The check that it waits
    /// gives it two seconds: a busy machine can only make it pass without a limit, never fail with one.)
    @Test func maxClientsBoundsTheOpenConnections() async throws {
        let fixture = try await ServerFixture { config in
            config.maxClients = 2
            config.idleTimeoutSeconds = 300
        }
        let first = try Self.connection(to: fixture.port), second = try Self.connection(to: fixture.port)
        defer { close(second) }
        #expect(Self.answer(on: first, within: 60) && Self.answer(on: second, within: 60), "two connections: served")
        let third = try Self.connection(to: fixture.port)
        defer { close(third) }
        #expect(!Self.answer(on: third, within: 2), "a third waits while two are open")
        close(first)
        #expect(Self.answer(on: third, within: 60), "served once one closes")
        await fixture.stop()
    }

    /// A connection to `port` on which `GET /health` has been sent.
    static func connection(to port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        let request = Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return fd
    }

    /// Whether a 200 answer arrives on `fd` within `seconds`.
    static func answer(on fd: Int32, within seconds: Int) -> Bool {
        var wait = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 512)
        let read = recv(fd, &buffer, buffer.count, 0)
        return read > 0 && String(decoding: buffer.prefix(read), as: UTF8.self).hasPrefix("HTTP/1.1 200")
    }

    /// A server laying a black watermark at the base `opacity`, over `photo`.
    func watermarking(opacity: Double) async throws -> ServerFixture {
        let mark = try WatermarkImage(image: try Image(width: 8, height: 8, pixelFormat: .rgb8, pixels: [UInt8](repeating: 0, count: 192)))
        let fixture = try await ServerFixture { config in
            config.watermark = mark
            config.processingDefaults.watermarkOpacity = opacity
        }
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: photo))
        return fixture
    }

    /// `IMGPROXY_WATERMARK_OPACITY`: the base opacity multiplies the URL's; at 0 no watermark shows.
    @Test func theBaseWatermarkOpacityMultipliesTheURLs() async throws {
        let fixture = try await watermarking(opacity: 0)
        let plain = try await fixture.get("/insecure/w:20/plain/\(fixture.source("/photo.jpg"))@png")
        let marked = try await fixture.get("/insecure/w:20/wm:1:ce/plain/\(fixture.source("/photo.jpg"))@png")
        #expect(plain.status == 200 && marked.status == 200)
        #expect(try ServerFixture.coders.decode(marked.body).pixels == ServerFixture.coders.decode(plain.body).pixels)
        await fixture.stop()
        let half = try await watermarking(opacity: 0.5)
        let halfMarked = try await half.get("/insecure/w:20/wm:1:ce/plain/\(half.source("/photo.jpg"))@png")
        let asked = try await half.get("/insecure/w:20/wm:0.5:ce/plain/\(half.source("/photo.jpg"))@png")
        #expect(try ServerFixture.coders.decode(halfMarked.body).pixels != ServerFixture.coders.decode(plain.body).pixels)
        #expect(halfMarked.header("ETag") != asked.header("ETag"), "0.5 x 1 and 0.5 x 0.5 differ")
        await half.stop()
    }

    /// `IMGPROXY_TIMEOUT`: a request whose work outlasts it is answered 503 (the source here answers
    /// after twice `busyMachineBound`), and the slot it held is given back once the cancelled work has stopped (seen
    /// in the metrics, waited for as an event).
    @Test func aRequestOverItsTimeoutIs503() async throws {
        let fixture = try await ServerFixture { config in
            config.requestTimeout = .milliseconds(300)
            config.maxInFlight = 1
        }
        fixture.sources.route("/slow.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: photo, delayBeforeHeaders: busyMachineBound * 2))
        let slow = try await fixture.get("/insecure/w:10/plain/\(fixture.source("/slow.jpg"))")
        #expect(slow.status == 503 && String(decoding: slow.body, as: UTF8.self).contains("timed out"))
        var released = false
        let deadline = ContinuousClock.now + busyMachineBound
        while !released, ContinuousClock.now < deadline {
            let metrics = String(decoding: try await fixture.get("/metrics").body, as: UTF8.self)
            released = metrics.contains("\nimages_in_progress 0\n") && metrics.contains("\nerrors_total{type=\"timeout\"} 1\n")
            if !released { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(released, "the one slot came back once the timed-out work stopped, long before the source answered")
        await fixture.stop()
    }

    /// `IMGPROXY_PATH_PREFIX` and `IMGPROXY_HEALTH_CHECK_PATH`: every route under the prefix, a
    /// look-alike prefix refused, the extra health path answered.
    @Test func aPathPrefixAndAHealthPath() async throws {
        let fixture = try await ServerFixture { config in
            config.pathPrefix = "/img"
            config.healthCheckPath = "/ready"
        }
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: photo))
        let path = "/insecure/w:10/plain/\(fixture.source("/photo.jpg"))"
        #expect(try await fixture.get("/img" + path).status == 200)
        #expect(try await fixture.get(path).status == 404)
        #expect(try await fixture.get("/images" + path).status == 404, "a prefix is a whole segment")
        #expect(try await fixture.get("/img/health").status == 200)
        #expect(try await fixture.get("/img/ready").status == 200)
        await fixture.stop()
    }
}
