/// When a newly encoded variant enters the manager's memory tier of encoded variants
/// (``WebImageManagerConfig/maxVariantMemoryCost``).
public enum VariantMemoryAdmission: Sendable, Equatable {
    /// As soon as it is encoded (the default): right for an app, which shows what it just made again.
    case whenEncoded
    /// When it is asked for again and found on disk (or in a shared tier), if it was stored there:
    /// right for an image server, whose cold results are mostly asked once (each CDN edge asks once,
    /// then caches), so admitting them on encode fills the memory tier with one-offs that push out
    /// the variants that are asked again. A variant that is not stored on disk is still kept in
    /// memory at once (there is nowhere else to find it).
    case whenReused
}
