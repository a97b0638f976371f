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
    /// The result's key and the original's.
    let keys: ImageKeys
    /// The result's key; `nil` when the key filter says "cache nothing".
    var key: String? { keys.key }
    /// The full-size, untransformed image's key; `nil` when the key filter says "cache nothing".
    var originalKey: String? { keys.originalKey }
    /// Whether the memory tier was already looked at under this key (the manager's fast path, with no
    /// options processor to change the key since), so the pipeline does not look again.
    let memoryLooked: Bool
}

/// The keys of a load's pixels, built once (``WebImageManager/imageKeys(for:absoluteString:context:options:)``)
/// and handed on: a variant's request builds them for its own key and gives them to its pixel load.
struct ImageKeys: Sendable, Equatable {
    /// The pixels' key (``WebImageManager/cacheKey(for:context:options:)``); `nil` when the key filter
    /// says "cache nothing".
    let key: String?
    /// The full-size, untransformed image's key; `nil` when the key filter says "cache nothing".
    let originalKey: String?
}

extension WebImageManager {
    /// A load made ready: the options processor run on `options` and `context` unless `processed`
    /// (a variant's or facts' load, whose options went through it already), then the keys built,
    /// unless given (`keys`: a variant's request built them for this context and these options).
    func prepareLoad(url: URL, absoluteString: String, options: WebImageOptions, context: WebImageContext, processed: Bool,
                     memoryLooked: Bool, keys: ImageKeys? = nil) -> PreparedLoad {
        var (options, context) = (options, context)
        var memoryLooked = memoryLooked
        if !processed, processOptions(url: url, &options, &context) {
            memoryLooked = false   // the processor may have changed the key
        }
        let keys = (processed ? keys : nil) ?? imageKeys(for: url, absoluteString: absoluteString, context: context, options: options)
        // Keys handed in must be the ones these options and this context make (checked in debug builds:
        // the whole suite runs through it).
        assert(keys == imageKeys(for: url, absoluteString: absoluteString, context: context, options: options),
               "the keys handed to a load are not its own")
        return PreparedLoad(url: url, absoluteString: absoluteString, options: options, context: context, keys: keys,
                            memoryLooked: memoryLooked)
    }

    /// The keys of the pixels of `url` for `context` and `options` (after the options processor): the
    /// one place they are built.
    func imageKeys(for url: URL, absoluteString: String, context: WebImageContext, options: WebImageOptions) -> ImageKeys {
        let originalKey = originalCacheKey(for: url, absoluteString: absoluteString, context: context)
        return ImageKeys(key: originalKey.map { Self.derivedKey(from: $0, context: context, options: options) }, originalKey: originalKey)
    }
}
