import Foundation

/// A variant request made ready once (``WebImageManager/prepareVariant(url:format:encoding:options:context:)``):
/// the options and context after the manager's options processor, the format choice, the coders and
/// the key, built once. A server asks it for the memory answer on its network thread, the stored
/// answer before taking a processing slot, and the load: the key is not built again, and the load
/// after a stored miss does not read the disk a second time.
public struct PreparedVariant: Sendable {
    /// The image's URL.
    public let url: URL
    /// The key the variant is stored under; `nil` when the key filter says "cache nothing".
    public let key: String?
    /// The keys of its pixels, which its key is built on: handed to the pixel load.
    let imageKeys: ImageKeys
    let choice: WebImageManager.FormatChoice
    let encoding: EncodeOptions
    /// The options and context after the options processor.
    let options: WebImageOptions
    let context: WebImageContext
    let coders: CoderRegistry

    /// This request with context settings changed that do not change its key (where its work runs,
    /// which tiers its original uses), made on the cold path only: the warm path never pays for them.
    /// - Precondition: `change` leaves every keyed setting (transformer, thumbnail, limits, key filter,
    ///   orientation) as it was.
    package func changingLoadSettings(_ change: (inout WebImageContext) -> Void) -> PreparedVariant {
        var context = self.context
        change(&context)
        return PreparedVariant(url: url, key: key, imageKeys: imageKeys, choice: choice, encoding: encoding, options: options, context: context,
                               coders: coders)
    }
}

extension WebImageManager {
    /// The variant request for these parameters, made ready once (see ``PreparedVariant``). Runs the
    /// options processor; never loads anything.
    /// - Parameters: as for ``loadVariant(url:format:encoding:options:context:)``.
    public func prepareVariant(url: URL, format: VariantFormat = .automatic(accept: nil), encoding: EncodeOptions = EncodeOptions(),
                               options: WebImageOptions = [], context: WebImageContext = WebImageContext()) -> PreparedVariant {
        var options = options
        var context = context
        processOptions(url: url, &options, &context)
        let coders = context.coders ?? self.coders
        let choice = Self.formatChoice(format, coders: coders)
        let imageKeys = self.imageKeys(for: url, absoluteString: url.absoluteString, context: context, options: options)
        let key = variantCacheKey(imageKey: imageKeys.key, choice: choice, encoding: encoding, options: options)
        return PreparedVariant(url: url, key: key, imageKeys: imageKeys, choice: choice, encoding: encoding, options: options, context: context,
                               coders: coders)
    }

    /// ``memoryCachedVariant(url:format:encoding:options:context:)`` for a prepared request: synchronous,
    /// a lock held for a dictionary lookup.
    public func memoryCachedVariant(_ prepared: PreparedVariant) -> ImageVariant? {
        guard let key = lookupKey(of: prepared) else { return nil }
        return variants.memoryValue(forKey: key, context: prepared.context)
    }

    /// ``cachedVariant(url:format:encoding:options:context:)`` for a prepared request.
    public func cachedVariant(_ prepared: PreparedVariant) async -> ImageVariant? {
        guard let key = lookupKey(of: prepared) else { return nil }
        return await variants.lookUp(forKey: key, context: prepared.context, cache: prepared.context.cache ?? cache)
    }

    /// ``loadVariant(url:format:encoding:options:context:)`` for a prepared request.
    /// - Parameter storedBytesChecked: the caller has just had ``cachedVariant(_:)`` miss: only the
    ///   memory tier is looked at again (another request may have made the variant since), not the
    ///   stored bytes; default `false`.
    /// - Throws: what ``loadVariant(url:format:encoding:options:context:)`` throws.
    public func loadVariant(_ prepared: PreparedVariant, storedBytesChecked: Bool = false) async throws -> ImageVariant {
        try await reportingVariant(url: prepared.url) { report in
            try await variant(prepared, storedBytesChecked: storedBytesChecked, report: &report)
        }
    }

    /// The key a prepared request may be looked up under; `nil` when nothing may be (a shut-down
    /// manager, `.fromLoaderOnly`, a key filter that caches nothing, an empty URL).
    private func lookupKey(of prepared: PreparedVariant) -> String? {
        guard !isShutDown, !prepared.options.contains(.fromLoaderOnly), !prepared.url.absoluteString.isEmpty else { return nil }
        return prepared.key
    }
}
