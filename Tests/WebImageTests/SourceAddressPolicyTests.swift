import Foundation
import Testing
@testable import WebImage

/// Which destinations downloads may reach: the ranges, and the checks on the first request, on
/// redirects, on IPv6 literals and on names that resolve to refused addresses.
@Suite struct SourceAddressPolicyTests {
    static let ranges: [(String, String?)] = [
        ("169.254.169.254", "link-local"), ("fe80::1", "link-local"), ("[fe80::1%eth0]", "link-local"),
        ("::ffff:169.254.169.254", "link-local"), ("0.0.0.0", "unspecified"), ("::", "unspecified"),
        ("127.0.0.1", "loopback"), ("127.9.9.9", "loopback"), ("::1", "loopback"), ("10.1.2.3", "private network"),
        ("172.16.0.1", "private network"), ("172.31.255.255", "private network"), ("192.168.1.1", "private network"),
        ("100.64.0.1", "carrier-grade NAT"), ("100.127.255.255", "carrier-grade NAT"), ("fc00::1", "unique-local"),
        ("fd12:3456::1", "unique-local"), ("224.0.0.1", "link-local"), ("ff02::1", "link-local"), ("ff12::1", "link-local"),
        ("224.0.1.1", "multicast"), ("ff05::1", "multicast"),
        ("255.255.255.255", "broadcast"), ("8.8.8.8", nil), ("172.32.0.1", nil), ("100.128.0.1", nil),
        ("2606:4700::1111", nil), ("192.169.0.1", nil),
    ]

    @Test func everyRangeIsClassified() throws {
        for (text, expected) in Self.ranges {
            let address = try #require(IPAddress(text), "\(text) parses")
            let refusal = SourceAddressPolicy.publicOnly.refusal(for: address)
            #expect(refusal == expected, "\(text)")
            let standard = SourceAddressPolicy.standard.refusal(for: address)
            #expect(standard == (expected == "link-local" || expected == "unspecified" ? expected : nil), "\(text) under the standard policy")
            #expect(SourceAddressPolicy.unrestricted.refusal(for: address) == nil)
        }
        #expect(IPAddress("example.com") == nil && IPAddress("256.1.1.1") == nil)
        #expect(IPAddress("::ffff:10.0.0.1")?.description == "10.0.0.1", "an IPv4-mapped address is its IPv4 address")
    }

    /// imgproxy's default (`privatenet` and `VerifySourceNetwork`): loopback and link-local refused,
    /// private networks allowed, and each switch on its own.
    @Test func imgproxysDefaultRefusesLoopbackAndLinkLocalOnly() throws {
        for (text, expected) in Self.ranges {
            let address = try #require(IPAddress(text))
            let refused = SourceAddressPolicy.imgproxy.refusal(for: address)
            #expect(refused == (["loopback", "link-local", "unspecified"].contains(expected ?? "") ? expected : nil), "\(text)")
        }
        let loopback = try #require(IPAddress("127.0.0.1")), metadata = try #require(IPAddress("169.254.169.254"))
        let lan = try #require(IPAddress("10.0.0.1"))
        var policy = SourceAddressPolicy.imgproxy
        policy.allowsLoopback = true
        #expect(policy.refusal(for: loopback) == nil && policy.refusal(for: metadata) == "link-local")
        policy = .imgproxy
        policy.allowsLinkLocal = true
        #expect(policy.refusal(for: metadata) == nil && policy.refusal(for: loopback) == "loopback")
        policy = .imgproxy
        policy.allowsPrivate = false
        #expect(policy.refusal(for: lan) == "private network")
        #expect(SourceAddressPolicy(allowsLoopback: true, allowsLinkLocal: true, allowsPrivate: true).refusal(for: try #require(IPAddress("0.0.0.0"))) == "unspecified",
                "unspecified addresses are refused by every policy but unrestricted")
    }

    /// IPv6 forms that carry an IPv4 address are judged by it too (imgproxy's `privatenet.Unwrap`
    /// cases): a gateway would deliver them there.
    @Test func anIPv4AddressWrappedInIPv6IsJudgedByItself() throws {
        let wrapped: [(String, String)] = [
            ("::127.0.0.1", "loopback"), ("::169.254.169.254", "link-local"),        // IPv4-compatible
            ("2002:7f00:1::", "loopback"), ("2002:a9fe:a9fe::1", "link-local"),      // 6to4
            ("64:ff9b::127.0.0.1", "loopback"), ("64:ff9b::a9fe:a9fe", "link-local"),  // NAT64 well-known
            ("64:ff9b:1:7f00:0:100::", "loopback"),                                  // NAT64 local-use, /48 layout
            ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"),                    // Teredo: ~7f.00.00.01
            ("fe80::5efe:7f00:1", "link-local"), ("2001:db8::200:5efe:a9fe:a9fe", "link-local"),  // ISATAP
        ]
        for (text, expected) in wrapped {
            let address = try #require(IPAddress(text), "\(text) parses")
            #expect(SourceAddressPolicy.imgproxy.refusal(for: address) == expected, "\(text)")
        }
        #expect(SourceAddressPolicy.imgproxy.refusal(for: try #require(IPAddress("2002:808:808::1"))) == nil, "6to4 of a public address")
        #expect(SourceAddressPolicy.publicOnly.refusal(for: try #require(IPAddress("64:ff9b::10.0.0.1"))) == "private network")
        #expect(try #require(IPAddress("2606:4700::1111")).embeddedIPv4 == nil)
    }

    @Test func theTestServerIsAllowedByDefaultAndRefusedByPublicOnly() async throws {
        let server = try TestHTTPServer()
        server.route("/a.png", TestResponse(headers: [("Content-Type", "image/png")], body: try encodedPicture()))
        let url = server.url("/a.png")
        let allowed = try await Downloader().load(ImageLoadRequest(url: url))
        #expect(allowed.statusCode == 200)
        let strict = Downloader(config: DownloaderConfig(sourceAddressPolicy: .publicOnly))
        await #expect(throws: WebImageError.sourceRefused(address: "127.0.0.1", reason: "loopback", url: url)) {
            try await strict.load(ImageLoadRequest(url: url))
        }
        #expect(server.requestCount(for: "/a.png") == 1, "nothing was sent to a refused address")
    }

    @Test func aRedirectToTheMetadataServiceIsRefused() async throws {
        let server = try TestHTTPServer()
        server.route("/hop", TestResponse(status: 302, headers: [("Location", "http://169.254.169.254/latest/meta-data/")]))
        let downloader = Downloader()
        let metadata = URL(string: "http://169.254.169.254/latest/meta-data/")!
        await #expect(throws: WebImageError.sourceRefused(address: "169.254.169.254", reason: "link-local", url: metadata)) {
            try await downloader.load(ImageLoadRequest(url: server.url("/hop")))
        }
        #expect(server.requestCount(for: "/hop") == 1)
    }

    @Test func anIPv6LinkLocalLiteralIsRefusedWithoutConnecting() async throws {
        let url = URL(string: "http://[fe80::1]:8080/image.png")!
        await #expect(throws: WebImageError.sourceRefused(address: "fe80::1", reason: "link-local", url: url)) {
            try await Downloader().load(ImageLoadRequest(url: url))
        }
    }

    @Test func aNameThatResolvesToLoopbackIsRefusedByPublicOnlyAndTheURLIsNotBlocked() async throws {
        let server = try TestHTTPServer()
        server.route("/b.png", TestResponse(headers: [("Content-Type", "image/png")], body: try encodedPicture()))
        var components = URLComponents(url: server.url("/b.png"), resolvingAgainstBaseURL: false)!
        components.host = "localhost"
        let url = try #require(components.url)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let downloader = Downloader(config: DownloaderConfig(sourceAddressPolicy: .publicOnly))
        let manager = WebImageManager(cache: ImageCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil)),
                                      loader: downloader)
        do {
            _ = try await manager.loadImage(url: url)
            Issue.record("localhost must be refused under publicOnly")
        } catch let error as WebImageError {
            guard case .sourceRefused(let address, "loopback", url) = error else { Issue.record("got \(error)"); return }
            #expect(address == "127.0.0.1" || address == "::1")
        }
        #expect(!manager.isFailedURL(url), "the policy refused, not the URL: never blocklisted")
        #expect(server.requestCount(for: "/b.png") == 0)
        #expect(SourceAddressCheck.resolve("localhost").contains { $0.description == "127.0.0.1" || $0.description == "::1" })
    }
}
