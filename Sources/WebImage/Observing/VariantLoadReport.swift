import Foundation

/// What one ``WebImageManager/loadVariant(url:format:encoding:options:context:)`` call was and where
/// its bytes came from: the payload of ``WebImageEvent/variantFinished(_:)``. A cold variant's load
/// of the image itself is reported too, as a ``WebImageEvent/loadFinished(_:)`` of its own.
public struct VariantLoadReport: Sendable {
    /// The URL asked for.
    public var url: URL
    /// The key the variant is stored under; `nil` when it is not cached (the key filter said so) or
    /// the call failed before the key was made.
    public var variantKey: String?
    /// The format of the bytes returned; `nil` when the call failed.
    public var format: ImageFormat?
    /// The size of the bytes returned (0 when the call failed).
    public var byteCount: Int
    /// Where they came from: ``ImageCacheType/memory`` or ``ImageCacheType/disk`` for a stored
    /// variant, ``ImageCacheType/none`` when they were encoded for this call (or it failed).
    public var cacheType: ImageCacheType
    /// The tier a stored variant came from (a tier shared between processes is named: Redis, or
    /// another process's fill); `nil` when it was encoded for this call or the call failed.
    public var cacheSource: ImageCacheSource?
    /// Whether this caller joined an encode of the same variant already under way.
    public var joinedEncodeUnderWay: Bool
    /// How long the encode took, when this call's bytes were encoded (also for a caller that joined);
    /// `nil` for a stored variant or a failure.
    public var encodeDuration: Duration?
    /// Whether a ``ImageCacheType/disk`` variant came from a tier shared between processes.
    @available(*, deprecated, message: "use cacheSource (cacheSource?.isSharedTier), which names the tier")
    public var isFromSharedTier: Bool {
        get { cacheSource?.isSharedTier ?? false }
        set { cacheSource = .settingLegacyFlag(newValue, on: cacheSource, cacheType: cacheType) }
    }
    /// The whole call, from its start to its return.
    public var totalDuration: Duration
    /// The error the call threw; `nil` when it returned bytes.
    public var error: WebImageError?

    /// Creates a report (WebImage makes them; tests and bridges may too).
    public init(url: URL, variantKey: String?, format: ImageFormat?, byteCount: Int, cacheType: ImageCacheType,
                joinedEncodeUnderWay: Bool = false, encodeDuration: Duration? = nil, totalDuration: Duration, error: WebImageError? = nil) {
        self.url = url
        self.variantKey = variantKey
        self.format = format
        self.byteCount = byteCount
        self.cacheType = cacheType
        self.cacheSource = cacheType == .none ? nil : cacheType == .memory ? .memory : .disk
        self.joinedEncodeUnderWay = joinedEncodeUnderWay
        self.encodeDuration = encodeDuration
        self.totalDuration = totalDuration
        self.error = error
    }
}
