import Foundation
import Testing
@testable import WebImage
@testable import WebImageS3

/// The durable tier on a real S3-compatible server (moto), and its failures on a real HTTP server
/// that answers as a failing store does: every failure is a miss, bounded, retried, skipped by the
/// breaker, and nothing partial is ever returned.
@Suite struct S3TierTests {
    func tier(bucket: String, namespace: String = "ns", lifetime: Duration = .seconds(3600), client: S3ClientConfig) throws -> S3Tier {
        S3Tier(config: try S3TierConfig(client: client, bucket: bucket, namespace: namespace, entryLifetime: lifetime, sweepInterval: nil))
    }

    @Test func entriesKeepTheirBytesAndMetadataUnderNamespacedKeys() async throws {
        let moto = try MotoServer.running()
        let bucket = try await moto.freshBucket("tier")
        let tier = try tier(bucket: bucket, client: moto.clientConfig())
        let metadata = DiskCacheMetadata(entityTag: "\"v1 ü\"", lastModified: "Wed, 21 Oct 2015 07:28:00 GMT", maxAge: 60,
                                         pixelSize: PixelSize(width: 64, height: 48))
        let bytes = try encodedPicture()
        #expect(await tier.setValue(bytes, metadata: metadata, forKey: "https://example.com/a.png-Variant(webp)"))
        let entry = try #require(await tier.value(forKey: "https://example.com/a.png-Variant(webp)"))
        #expect(entry.data == bytes && entry.metadata == metadata && entry.source == .sharedTier("s3"))
        #expect(tier.objectKey(forKey: "k") == "webimage/v1/ns/" + MD5.hex(Array("k".utf8)))
        #expect(await tier.value(forKey: "other") == nil)
        let other = try self.tier(bucket: bucket, namespace: "other", client: moto.clientConfig())
        #expect(await other.value(forKey: "https://example.com/a.png-Variant(webp)") == nil, "namespaces do not share entries")
        #expect(await tier.containsValue(forKey: "https://example.com/a.png-Variant(webp)"))
        await tier.removeValue(forKey: "https://example.com/a.png-Variant(webp)")
        #expect(await tier.value(forKey: "https://example.com/a.png-Variant(webp)") == nil)
        let statistics = tier.statistics
        #expect(statistics.hits == 1 && statistics.misses == 2 && statistics.stores == 1 && statistics.errors == 0)
    }

    @Test func expiredEntriesAreNeitherServedNorKept() async throws {
        let moto = try MotoServer.running()
        let bucket = try await moto.freshBucket("expiry")
        // A lifetime no busy machine outlasts between the store and the first read (60 s did once).
        let tier = try tier(bucket: bucket, lifetime: .seconds(3600), client: moto.clientConfig())
        let client = S3Client(config: try moto.clientConfig())
        #expect(await tier.setValue(Data("one".utf8), metadata: nil, forKey: "one"))
        #expect(await tier.setValue(Data("two".utf8), metadata: nil, forKey: "two"))
        #expect(await tier.value(forKey: "one") != nil)
        let later = Date().addingTimeInterval(3602)   // past the lifetime, without waiting for it
        #expect(await tier.value(forKey: "one", now: later) == nil, "past its lifetime: a miss")
        #expect(tier.statistics.expiredHits == 1)
        try await waitUntil { (try? await client.head(bucket: bucket, key: tier.objectKey(forKey: "one"))) ?? nil == nil }
        #expect(await tier.removeExpired() == 0, "a live entry stays")
        #expect(await tier.removeExpired(now: later) == 1, "the sweep deletes the entry nobody asked for")
        #expect(try await client.list(bucket: bucket, prefix: "webimage/").objects.isEmpty)
        #expect(await tier.setValue(Data("three".utf8), metadata: nil, forKey: "three"))
        #expect(await tier.removeAll() == 1)
    }

    /// A store that answers as a failing S3 does: a real HTTP server on 127.0.0.1.
    struct FailingStore {
        let server: TestHTTPServer
        let tier: S3Tier

        init(retries: Int = 2, timeout: Duration = .seconds(1), breakerThreshold: Int = 3, transport: S3ClientConfig.Transport = .curl) throws {
            server = try TestHTTPServer()
            var config = try S3ClientConfig(region: "us-east-1", endpoint: server.url("/"), credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"),
                                            timeout: timeout, retries: retries, retryBaseDelay: .milliseconds(5),
                                            breakerThreshold: breakerThreshold, breakerCooldown: .seconds(60))
            config.transport = transport
            tier = S3Tier(config: try S3TierConfig(client: config, bucket: "bucket", sweepInterval: nil))
        }

        func path(_ key: String) -> String { "/bucket/" + tier.objectKey(forKey: key) }
    }

    /// Both ways a request travels: WebImage's plain HTTP client and URLSession.
    static let transports: [S3ClientConfig.Transport] = [.curl, .urlSession]

    @Test(arguments: [(403, "AccessDenied"), (404, "NoSuchKey"), (500, "InternalError"), (503, "SlowDown")], transports)
    func refusalsAreMissesAndOnlyServerErrorsAreRetried(_ answer: (Int, String), transport: S3ClientConfig.Transport) async throws {
        let store = try FailingStore(transport: transport)
        store.server.route(store.path("k"), TestResponse(status: answer.0, headers: [("Content-Type", "application/xml")],
                                                         body: Data("<Error><Code>\(answer.1)</Code></Error>".utf8)))
        #expect(await store.tier.value(forKey: "k") == nil)
        #expect(store.server.requestCount(for: store.path("k")) == (answer.0 >= 500 ? 3 : 1), "5xx and SlowDown: 1 + 2 retries")
        #expect(store.tier.statistics.errors == (answer.0 == 404 ? 0 : 1))
    }

    @Test(arguments: transports)
    func aRetryThatSucceedsIsAHit(transport: S3ClientConfig.Transport) async throws {
        let store = try FailingStore(transport: transport)
        store.server.route(store.path("k"), sequence: [
            TestResponse(status: 503, body: Data("<Error><Code>SlowDown</Code></Error>".utf8)),
            TestResponse(status: 500, body: Data()),
            TestResponse(headers: [("Content-Type", "image/png")], body: Data("fine".utf8)),
        ])
        #expect(await store.tier.value(forKey: "k")?.data == Data("fine".utf8))
        #expect(store.server.requestCount(for: store.path("k")) == 3)
    }

    @Test(arguments: transports)
    func aCutOrDamagedBodyIsNeverReturned(transport: S3ClientConfig.Transport) async throws {
        let store = try FailingStore(retries: 1, transport: transport)
        store.server.route(store.path("cut"), TestResponse(headers: [("Content-Type", "image/png")], body: Data(repeating: 1, count: 100_000),
                                                           closeAfterBodyBytes: 5000))
        store.server.route(store.path("damaged"), TestResponse(headers: [("ETag", "\"" + MD5.hex(Array("other".utf8)) + "\"")], body: Data("bytes".utf8)))
        #expect(await store.tier.value(forKey: "cut") == nil)
        #expect(store.server.requestCount(for: store.path("cut")) == 2, "a cut body is retried")
        #expect(await store.tier.value(forKey: "damaged") == nil, "bytes that are not their MD5 ETag")
    }

    @Test(arguments: transports)
    func aSlowStoreIsBoundedByTheTimeOut(transport: S3ClientConfig.Transport) async throws {
        let store = try FailingStore(retries: 0, timeout: .milliseconds(300), transport: transport)
        // A store that would answer after ten minutes: the 300 ms time-out ends the call (the bound is
        // loose because a busy test run can starve the timer's thread for tens of seconds: 50 s seen
        // under ThreadSanitizer with both cores held).
        store.server.route(store.path("slow"), TestResponse(body: Data("late".utf8), delayBeforeHeaders: .seconds(600)))
        let started = ContinuousClock.now
        #expect(await store.tier.value(forKey: "slow") == nil)
        #expect(ContinuousClock.now - started < .seconds(300), "the time-out, not the store, decides")
    }

    @Test func theBreakerSkipsAStoreThatKeepsFailing() async throws {
        let store = try FailingStore(retries: 0, breakerThreshold: 2)
        store.server.route(store.path("k"), TestResponse(status: 500, body: Data()))
        for _ in 0..<5 { #expect(await store.tier.value(forKey: "k") == nil) }
        #expect(store.server.requestCount(for: store.path("k")) == 2, "after 2 failures the store is skipped")
        #expect(store.tier.statistics.isSkippingStore && store.tier.statistics.breakerOpenings == 1)
        #expect(await store.tier.setValue(Data("x".utf8), metadata: nil, forKey: "k") == false, "writes are skipped too")
    }

    @Test func aStoreThatIsDownIsAMiss() async throws {
        let down = try ClosedLoopbackPort()
        let config = try S3ClientConfig(endpoint: URL(string: "http://127.0.0.1:\(down.port)")!, credentials: nil, timeout: .seconds(1), retries: 1,
                                        retryBaseDelay: .milliseconds(5))
        let tier = S3Tier(config: try S3TierConfig(client: config, bucket: "bucket", sweepInterval: nil))
        #expect(await tier.value(forKey: "k") == nil)
        #expect(await tier.setValue(Data("x".utf8), metadata: nil, forKey: "k") == false)
        #expect(tier.statistics.errors == 2)
        withExtendedLifetime(down) {}
    }
}
