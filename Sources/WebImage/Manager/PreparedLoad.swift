import Foundation

/// A load of pixels made ready once, the plain-image sibling of ``PreparedVariant``: the options
/// and context after the manager's options processor, and the keys built from them. The pipeline
/// is handed this value; nothing downstream runs the processor or builds a key again.
struct PreparedLoad: Sendable {
    let url: URL
    /// `url.absoluteString`, read once (it is not free).
    let absoluteString: String
    /// The options and context after the options processor.
    let options: WebImageOptions
    let context: WebImageContext
    /// The result's key; `nil` when the key filter says "cache nothing".
    let key: String?
    /// The full-size, untransformed image's key; `nil` when the key filter says "cache nothing".
    let originalKey: String?
    /// Whether the memory tier was already looked at under this key (the manager's fast path, with no
    /// options processor to change the key since), so the pipeline does not look again.
    let memoryLooked: Bool
}

extension WebImageManager {
    /// A load made ready: the options processor run on `options` and `context` unless `processed`
    /// (a variant's or facts' load, whose options went through it already), then the keys built.
    func prepareLoad(url: URL, absoluteString: String, options: WebImageOptions, context: WebImageContext, processed: Bool,
                     memoryLooked: Bool) -> PreparedLoad {
        var (options, context) = (options, context)
        var memoryLooked = memoryLooked
        if !processed, processOptions(url: url, &options, &context) {
            memoryLooked = false   // the processor may have changed the key
        }
        let originalKey = originalCacheKey(for: url, absoluteString: absoluteString, context: context)
        let key = originalKey.map { Self.derivedKey(from: $0, context: context, options: options) }
        return PreparedLoad(url: url, absoluteString: absoluteString, options: options, context: context, key: key,
                            originalKey: originalKey, memoryLooked: memoryLooked)
    }
}
