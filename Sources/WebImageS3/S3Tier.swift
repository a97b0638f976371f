import Foundation
import Synchronization
import WebImage

/// A fleet's durable tier of encoded bytes in an S3-compatible bucket: what Redis forgets (its TTL,
/// `maxmemory`, restarts, another region) this keeps. One GET per hit, never a HEAD first.
///
/// - **Keys** are `webimage/v1/<namespace>/<md5 of the cache key>` (``S3TierConfig/prefix``): safe to
///   list and delete, never a user's text in a path.
/// - **Entries expire**: each is written with `x-amz-meta-webimage-expires` (now +
///   ``S3TierConfig/entryLifetime``); a hit past it is a miss and is deleted; ``removeExpired()``
///   deletes the rest by their `LastModified`.
/// - **Nothing partial**: a body shorter than its `Content-Length`, or whose MD5 is not its `ETag`
///   (single-part uploads), is a miss.
/// - **Failure is a miss, never an error**: the client retries and its breaker skips a failing store
///   (``S3ClientConfig``); ``statistics`` counts what happened.
///
/// Lock-based (its counters); every call suspends only on URLSession.
public final class S3Tier: Sendable {
    /// The configuration it was made with.
    public let config: S3TierConfig
    /// The client its calls go through.
    public let client: S3Client
    private let counters = StatisticsCounters(S3TierStatistics())

    /// Creates the tier (nothing is connected until the first call).
    public init(config: S3TierConfig) {
        self.config = config
        client = S3Client(config: config.client)
    }

    /// The object key of a cache key.
    public func objectKey(forKey key: String) -> String {
        config.prefix + MD5.hex(Array(key.utf8))
    }

    /// The bytes stored under `key`, or `nil`: a miss, an expired or damaged entry, or a failing store.
    public func value(forKey key: String) async -> CachedData? {
        await value(forKey: key, now: Date())
    }

    /// ``value(forKey:)`` as if it were `now` (tests of expiry need no waiting).
    func value(forKey key: String, now: Date) async -> CachedData? {
        let objectKey = objectKey(forKey: key)
        let response: S3Client.Response
        do {
            response = try await client.get(bucket: config.bucket, key: objectKey)
        } catch .status(404, _) {
            count(\.misses)
            return nil
        } catch {
            count(\.errors)
            return nil
        }
        let headers = response.headers
        if let expires = headers["x-amz-meta-webimage-expires"].flatMap(Double.init), expires <= now.timeIntervalSince1970 {
            count(\.expiredHits)
            let client = self.client, bucket = config.bucket
            Task { try? await client.delete(bucket: bucket, key: objectKey) }
            return nil
        }
        if let tag = headers["etag"]?.trimmingCharacters(in: CharacterSet(charactersIn: "\"")), tag.count == 32, !tag.contains("-"),
           MD5.hex([UInt8](response.body)) != tag.lowercased() {
            count(\.errors)
            return nil
        }
        count(\.hits)
        return CachedData(data: response.body, metadata: Self.metadata(from: headers), source: .sharedTier(Self.tierName))
    }

    /// Writes `data` under `key` with `metadata`; `false` when the store failed (counted).
    @discardableResult
    public func setValue(_ data: Data, metadata: DiskCacheMetadata?, forKey key: String) async -> Bool {
        // Rounded up: an entry never expires before its lifetime.
        var fields = ["webimage-expires": String(Int((Date().timeIntervalSince1970 + config.entryLifetime.secondsValue).rounded(.up)))]
        if let metadata {
            if let tag = metadata.entityTag { fields["webimage-etag"] = SignatureV4.encode(tag) }
            if let modified = metadata.lastModified { fields["webimage-last-modified"] = SignatureV4.encode(modified) }
            if let age = metadata.maxAge { fields["webimage-max-age"] = String(age) }
            if let size = metadata.pixelSize { fields["webimage-pixel-size"] = "\(size.width)x\(size.height)" }
        }
        do {
            try await client.put(bucket: config.bucket, key: objectKey(forKey: key), body: data, contentType: ImageFormat(sniffing: data).mimeType,
                                 metadata: fields)
            count(\.stores)
            return true
        } catch {
            count(\.errors)
            return false
        }
    }

    /// Deletes the entry of `key` (nothing when there is none or the store fails).
    public func removeValue(forKey key: String) async {
        do { try await client.delete(bucket: config.bucket, key: objectKey(forKey: key)) } catch { count(\.errors) }
    }

    /// Whether an entry of `key` exists (a HEAD: used by `containsImage`, never by loads).
    public func containsValue(forKey key: String) async -> Bool {
        guard let headers = try? await client.head(bucket: config.bucket, key: objectKey(forKey: key)) else { return false }
        let expires = headers["x-amz-meta-webimage-expires"].flatMap(Double.init) ?? .infinity
        return expires > Date().timeIntervalSince1970
    }

    /// Deletes every entry of the namespace written longer ago than the entry lifetime; returns how
    /// many (a failing store ends the sweep early: the next one goes on).
    @discardableResult
    public func removeExpired(now: Date = Date()) async -> Int {
        await remove { now.timeIntervalSince($0.lastModified) >= config.entryLifetime.secondsValue }
    }

    /// Deletes every entry of the namespace; returns how many.
    @discardableResult
    public func removeAll() async -> Int {
        await remove { _ in true }
    }

    private func remove(where condition: (S3Listing.Object) -> Bool) async -> Int {
        var removed = 0
        var token: String?
        repeat {
            guard let page = try? await client.list(bucket: config.bucket, prefix: config.prefix, continuationToken: token) else {
                count(\.errors)
                break
            }
            for object in page.objects where condition(object) {
                do {
                    try await client.delete(bucket: config.bucket, key: object.key)
                    removed += 1
                } catch {
                    count(\.errors)
                }
            }
            token = page.nextContinuationToken
        } while token != nil
        counters.add(\.removed, removed)
        return removed
    }

    /// What the tier did so far.
    public var statistics: S3TierStatistics {
        var statistics = counters.snapshot
        statistics.isSkippingStore = client.isSkippingStore
        statistics.breakerOpenings = client.breaker.openings
        return statistics
    }

    private func count(_ field: WritableKeyPath<S3TierStatistics, Int>) {
        counters.add(field)
    }

    static func metadata(from headers: [String: String]) -> DiskCacheMetadata? {
        func decoded(_ name: String) -> String? { headers[name].flatMap { $0.removingPercentEncoding } }
        let size = headers["x-amz-meta-webimage-pixel-size"].flatMap { text -> PixelSize? in
            let parts = text.split(separator: "x").compactMap { Int($0) }
            return parts.count == 2 && parts.allSatisfy({ $0 > 0 }) ? PixelSize(width: parts[0], height: parts[1]) : nil
        }
        let metadata = DiskCacheMetadata(entityTag: decoded("x-amz-meta-webimage-etag"), lastModified: decoded("x-amz-meta-webimage-last-modified"),
                                         maxAge: headers["x-amz-meta-webimage-max-age"].flatMap(Int.init), pixelSize: size)
        return metadata == DiskCacheMetadata() ? nil : metadata
    }
}
