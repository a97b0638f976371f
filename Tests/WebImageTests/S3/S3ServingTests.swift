import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import WebImage
@testable import WebImageS3
@testable import WebImageServer

/// `webimage serve` with `s3://bucket/key` sources (moto): imgproxy's plain and base64 forms, images
/// and `/info`, a missing object as 404, the collapsed `s3:/` repaired as imgproxy repairs schemes.
@Suite struct S3ServingTests {
    @Test func s3SourcesAreServedAsImagesAndFacts() async throws {
        let moto = try MotoServer.running()
        let client = S3Client(config: try moto.clientConfig())
        let bucket = try await moto.freshBucket("serving")
        try await client.put(bucket: bucket, key: "dir/photo.jpg", body: try encodedPicture(width: 90, height: 60, as: .jpeg))
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = ImageCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil))
        let manager = WebImageManager(cache: cache, loader: LoadersManager(loaders: [Downloader(), S3Loader(client: client)]))
        let server = try ImageServer(manager: manager, config: ImageServerConfig(port: 0, signing: .unsigned))
        let (port, running) = try await server.start()
        defer { running.cancel() }
        func get(_ path: String) async throws -> (Int, Data) {
            let (body, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)\(path)")!)
            return ((response as! HTTPURLResponse).statusCode, body)
        }
        let source = "s3://\(bucket)/dir/photo.jpg"
        let (status, body) = try await get("/insecure/rs:fit:30:30/plain/\(source)@png")
        #expect(status == 200 && ImageFormat(sniffing: body) == .png)
        #expect(try CoderRegistry.shared.decode(body).size == PixelSize(width: 30, height: 20))
        let encoded = Data(source.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(try await get("/insecure/rs:fit:30:30/\(encoded).png").0 == 200)
        #expect(try await get("/insecure/rs:fit:31:31/plain/s3:/\(bucket)/dir/photo.jpg@png").0 == 200, "s3:/ is repaired")
        let (infoStatus, info) = try await get("/info/insecure/plain/\(source)")
        let facts = try #require(try JSONSerialization.jsonObject(with: info) as? [String: Any])
        #expect(infoStatus == 200 && facts["width"] as? Int == 90 && facts["format"] as? String == "jpeg")
        #expect(try await get("/insecure/rs:fit:30:30/plain/s3://\(bucket)/missing.jpg@png").0 == 404)
        #expect(try await get("/insecure/rs:fit:30:30/plain/s3://\(bucket)@png").0 == 400, "a bucket without a key")
        running.cancel()
        _ = await running.result
        await manager.shutdown()
    }
}
