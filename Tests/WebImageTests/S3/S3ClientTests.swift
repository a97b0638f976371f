import Foundation
import Testing
@testable import WebImage
@testable import WebImageS3

/// The S3 client against a real S3-compatible server (moto): objects written, read, listed and
/// deleted, conditional reads, path-style and virtual-hosted URLs, configuration checked.
@Suite struct S3ClientTests {
    @Test(arguments: [S3ClientConfig.Transport.curl, .urlSession])
    func objectsAreWrittenReadListedAndDeleted(transport: S3ClientConfig.Transport) async throws {
        let moto = try MotoServer.running()
        var config = try moto.clientConfig()
        config.transport = transport
        let client = S3Client(config: config)
        let bucket = try await moto.freshBucket("client")
        try await client.createBucket(bucket)   // again: not an error
        let body = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        try await client.put(bucket: bucket, key: "a/b c/ü.bin", body: body, contentType: "application/octet-stream", metadata: ["Note": "x"])
        let got = try await client.get(bucket: bucket, key: "a/b c/ü.bin")
        #expect(got.status == 200 && got.body == body && got.headers["x-amz-meta-note"] == "x")
        let tag = try #require(got.headers["etag"])
        #expect(try await client.get(bucket: bucket, key: "a/b c/ü.bin", headers: ["If-None-Match": tag]).status == 304)
        #expect(try await client.head(bucket: bucket, key: "a/b c/ü.bin")?["content-length"] == "5000")
        #expect(try await client.head(bucket: bucket, key: "missing") == nil)
        for index in 0..<3 { try await client.put(bucket: bucket, key: "list/\(index)", body: Data([UInt8(index)])) }
        let listing = try await client.list(bucket: bucket, prefix: "list/")
        #expect(listing.objects.map(\.key) == ["list/0", "list/1", "list/2"] && listing.objects.allSatisfy { $0.size == 1 })
        #expect(listing.nextContinuationToken == nil && listing.objects.allSatisfy { abs($0.lastModified.timeIntervalSinceNow) < 120 })
        try await client.delete(bucket: bucket, key: "a/b c/ü.bin")
        try await client.delete(bucket: bucket, key: "a/b c/ü.bin")   // again: not an error
        await #expect(throws: S3Error.status(404, code: "NoSuchKey")) { try await client.get(bucket: bucket, key: "a/b c/ü.bin") }
        #expect(client.isSkippingStore == false, "404s are answers, not failures")
    }

    @Test func urlsArePathStyleOrVirtualHosted() throws {
        let custom = try S3ClientConfig(region: "eu-west-1", endpoint: URL(string: "http://127.0.0.1:9000/prefix")!, credentials: nil)
        #expect(custom.addressing == .pathStyle)
        #expect(custom.url(bucket: "b", key: "x/y z.jpg").absoluteString == "http://127.0.0.1:9000/prefix/b/x/y%20z.jpg")
        let aws = try S3ClientConfig(region: "eu-west-1", credentials: nil)
        #expect(aws.addressing == .virtualHosted)
        #expect(aws.url(bucket: "b", key: "k.png", query: [("list-type", "2")]).absoluteString == "https://b.s3.eu-west-1.amazonaws.com/k.png?list-type=2")
    }

    @Test func configurationIsCheckedWhereItIsBuilt() {
        #expect(throws: S3ClientConfig.Invalid.self) { try S3ClientConfig(region: "", credentials: nil) }
        #expect(throws: S3ClientConfig.Invalid.self) { try S3ClientConfig(endpoint: URL(string: "ftp://x")!, credentials: nil) }
        #expect(throws: S3ClientConfig.Invalid.self) { try S3ClientConfig(credentials: nil, timeout: .zero) }
        #expect(throws: S3ClientConfig.Invalid.self) { try S3ClientConfig(credentials: nil, retries: -1) }
        #expect(throws: S3TierConfig.Invalid.self) { try S3TierConfig(client: S3ClientConfig(credentials: nil), bucket: "b", namespace: "a/b") }
        #expect(throws: S3TierConfig.Invalid.self) { try S3TierConfig(client: S3ClientConfig(credentials: nil), bucket: "") }
    }

    @Test func listingsAreReadFromS3sXML() throws {
        let xml = """
        <?xml version="1.0" encoding="UTF-8"?><ListBucketResult><IsTruncated>true</IsTruncated>
        <Contents><Key>a&amp;b</Key><LastModified>2024-01-02T03:04:05.000Z</LastModified><Size>12</Size></Contents>
        <NextContinuationToken>tok+1</NextContinuationToken></ListBucketResult>
        """
        let listing = try S3Listing(xml: Data(xml.utf8))
        #expect(listing.objects == [S3Listing.Object(key: "a&b", lastModified: Date(timeIntervalSince1970: 1_704_164_645), size: 12)])
        #expect(listing.nextContinuationToken == "tok+1")
        #expect(throws: S3Error.self) { try S3Listing(xml: Data("<Error/>".utf8)) }
        #expect(S3Listing.errorCode(in: Data("<Error><Code>SlowDown</Code></Error>".utf8)) == "SlowDown")
    }
}
