import Foundation
import WebImage
import WebImageS3

/// `--s3-endpoint URL`, `--s3-region NAME`, `--s3-bucket NAME` (the durable tier) and
/// `--s3-namespace NAME`, read by `fetch` and `serve`. `s3://bucket/key` sources are always
/// loadable, with the endpoint and region given here (else AWS and `AWS_REGION`) and the
/// credentials of the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`).
struct S3Arguments {
    var endpoint: URL?
    var region: String?
    var bucket: String?
    var namespace = "default"

    /// Reads `argument` (and its value, through `value`) when it is one of these options.
    mutating func parse(_ argument: String, value: () -> String?) -> RedisArguments.Outcome {
        switch argument {
        case "--s3-endpoint":
            guard let text = value(), let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                return .failed("--s3-endpoint needs an http(s) URL such as http://127.0.0.1:9000")
            }
            endpoint = url
        case "--s3-region":
            guard let text = value(), !text.isEmpty else { return .failed("--s3-region needs a region name such as eu-west-1") }
            region = text
        case "--s3-bucket":
            guard let text = value(), !text.isEmpty, !text.contains("/") else { return .failed("--s3-bucket needs a bucket name") }
            bucket = text
        case "--s3-namespace":
            guard let text = value(), !text.isEmpty else { return .failed("--s3-namespace needs a name") }
            namespace = text
        default:
            return .notMine
        }
        return .parsed
    }

    /// Checks the options as the tier will use them.
    /// - Throws: ``S3ClientConfig/Invalid``, ``S3TierConfig/Invalid``.
    func validate() throws {
        let client = try clientConfig()
        if let bucket { _ = try S3TierConfig(client: client, bucket: bucket, namespace: namespace) }
    }

    /// The client configuration these options make.
    /// - Throws: ``S3ClientConfig/Invalid``.
    func clientConfig() throws -> S3ClientConfig {
        try S3ClientConfig(region: region, endpoint: endpoint)
    }

    /// `loaders` with the ``S3Loader`` for `s3://` sources added.
    /// - Throws: ``S3ClientConfig/Invalid``.
    func loaders(_ loaders: [any ImageLoader]) throws -> LoadersManager {
        LoadersManager(loaders: loaders + [S3Loader(client: S3Client(config: try clientConfig()))])
    }

    /// `inner`, with the durable tier behind it when a bucket was given.
    /// - Throws: ``S3ClientConfig/Invalid``, ``S3TierConfig/Invalid``.
    func cache(over inner: any ImageCaching) throws -> any ImageCaching {
        guard let bucket else { return inner }
        let tier = S3Tier(config: try S3TierConfig(client: try clientConfig(), bucket: bucket, namespace: namespace))
        return S3ImageCache(inner: inner, store: tier)
    }
}
