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

    /// The flags, as `fetch` and `serve` declare them (``CommandOption/lifted(_:)``).
    static let options: [CommandOption<S3Arguments>] = [
        .value("--s3-bucket", "NAME", need: "a bucket name",
               help: "a durable shared tier in an S3-compatible bucket, behind memory, disk and Redis: hits are promoted into "
                   + "them, stores reach the bucket in the background. Credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "
                   + "AWS_SESSION_TOKEN. s3://bucket/key sources load with or without it") { arguments, text in
            guard !text.isEmpty, !text.contains("/") else { return false }
            arguments.bucket = text
            return true
        },
        .value("--s3-endpoint", "URL", need: "an http(s) URL such as http://127.0.0.1:9000", default: "AWS: https://s3.REGION.amazonaws.com",
               help: "the store (path-style addressing for a custom endpoint such as MinIO's)") { arguments, text in
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else { return false }
            arguments.endpoint = url
            return true
        },
        .value("--s3-region", "NAME", need: "a region name such as eu-west-1", default: "AWS_REGION, else us-east-1",
               help: "the signing region") { arguments, text in
            guard !text.isEmpty else { return false }
            arguments.region = text
            return true
        },
        .value("--s3-namespace", "NAME", need: "a name", default: "default", help: "keys are webimage/v1/NAME/<md5>; entries live 7 days") {
            arguments, text in
            guard !text.isEmpty else { return false }
            arguments.namespace = text
            return true
        },
    ]

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
