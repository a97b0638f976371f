import Foundation

/// The HTTP validators of a cached copy, for a conditional request.
public struct HTTPValidators: Sendable, Hashable {
    /// The cached response's `ETag`, sent as `If-None-Match`.
    public var entityTag: String?
    /// The cached response's `Last-Modified`, sent as `If-Modified-Since`.
    public var lastModified: String?

    /// Creates validators; both default to `nil`.
    public init(entityTag: String? = nil, lastModified: String? = nil) {
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    /// Whether there is anything to validate with.
    public var isEmpty: Bool { entityTag == nil && lastModified == nil }
}
