import Foundation

/// The cold path of one encoded variant, beside ``ImageLoadPipeline`` (which it uses for the pixels):
/// made once per variant key for all its callers by ``WebImageManager/loadVariant(url:format:encoding:options:context:)``
/// after the memory and disk tiers missed. Every decision is made before it starts and handed in as
/// a value: the options after the manager's options processor, the format choice, the encode
/// settings, the coders, the cache and the key.
///
/// `run()`: the pixels (``WebImageManager/loadPixels(url:options:context:)``: the shared download,
/// decoded small), encoded once in the format chosen for them, stored in the variant memory tier (at
/// once, or when reused: ``VariantMemoryAdmission``) and on disk (in the background unless
/// ``WebImageOptions/waitStoreCache``). The manager's ``DerivedProductStore`` runs it once per key,
/// after a fleet's fill claim (``ImageCaching/beginFill(forKey:)``) found no other process's variant.
struct VariantPipeline: Sendable {
    let manager: WebImageManager
    /// The request as made ready once: URL, format choice, encode settings, the options and context
    /// after the manager's options processor, coders, the variant's key and its pixels' keys (its pixel
    /// load's options and context key alike).
    let request: PreparedVariant
    let cache: any ImageCaching

    private var url: URL { request.url }
    private var choice: WebImageManager.FormatChoice { request.choice }
    private var encoding: EncodeOptions { request.encoding }
    private var options: WebImageOptions { request.options }
    private var context: WebImageContext { request.context }
    private var coders: CoderRegistry { request.coders }
    private var imageKeys: ImageKeys { request.imageKeys }

    /// Loads the image (pixels), encodes it once in the format chosen for it, stores the bytes.
    func run() async throws(WebImageError) -> MadeProduct<ImageVariant> {
        // The decoded image stays in memory for the other formats of the same size; only its original's
        // bytes go to disk (the variant's own bytes are what is worth keeping there). A thumbnail's or
        // transform's pixels would be re-encoded for disk, so they stay in memory only; an image that is
        // the original (its key is the original's) is stored as its downloaded bytes, as any load does.
        var imageContext = context
        if context.derivesCacheKey || !options.isDisjoint(with: [.preserveColorProfile, .preserveHighBitDepth]) {
            imageContext.storeCacheType = context.storeCacheType.includesMemory ? .memory : .none
        }
        var imageOptions = options
        imageOptions.remove(.waitStoreCache)
        // A variant is the geometry it asks for, frames and all: its transformer runs on animations
        // too (``WebImageOptions/transformAnimatedImage`` is loadImage's opt-in, SDWebImage's default
        // of leaving animations untouched; a variant has no such default to keep).
        imageOptions.insert(.transformAnimatedImage)
        let keepsMetadata = !options.isDisjoint(with: [.preserveColorProfile, .preserveCopyright])
        if keepsMetadata { imageOptions.insert(.waitStoreCache) }   // the original's bytes, read next, are on disk
        let image: Image
        if passesVectorSource {
            let passes: (Image) -> Bool = { [coders] in coders.canPassThrough($0.format) }
            var (loaded, source) = try await manager.loadPixelsAndSource(url: url, options: imageOptions, context: imageContext, keys: imageKeys,
                                                                         wantsSource: passes)
            if passes(loaded), source == nil {   // the pixels came from memory and no stored bytes are kept: download them
                (loaded, source) = try await manager.loadPixelsAndSource(url: url, options: imageOptions.union(.fromLoaderOnly),
                                                                         context: imageContext, keys: imageKeys, wantsSource: passes)
            }
            if passes(loaded), let source { return try await passedThrough(source, pixelSize: loaded.size) }
            image = loaded
        } else {
            image = try await manager.loadPixels(url: url, options: imageOptions, context: imageContext, keys: imageKeys)
        }
        var encoding = encoding
        if keepsMetadata { await addSourceMetadata(to: &encoding) }
        var format = choice.format(for: image, coders: coders)
        var pixelSize = image.size
        if let side = encoding.maxPixelSize, side > 0, max(image.width, image.height) > side {
            pixelSize = PNGCoder.size(of: image.size, fittingSide: side)
        }
        let outputLimit = (context.limits ?? manager.config.limits).maxOutputPixels
        guard pixelSize.width * pixelSize.height <= outputLimit else {
            throw .encodingFailed(.imageTooLarge(width: pixelSize.width, height: pixelSize.height, limit: outputLimit), url: url)
        }
        let data: Data
        let encodeStarted = ContinuousClock.now
        do {
            if case .best(let best) = choice {
                let chosen = try best.encode(image, options: encoding, coders: coders)
                (data, format) = (chosen.data, chosen.format)
            } else {
                data = try coders.encode(image, as: format, options: encoding.resolved(for: format))
            }
        } catch let error as ImageCodingError {
            throw .encodingFailed(error, url: url)
        } catch {
            throw .encodingFailed(.encodingFailed(format: format, reason: "\(error)"), url: url)
        }
        let encoded = MadeProduct<ImageVariant>(
            product: ImageVariant(data: data, format: format, pixelSize: pixelSize, cacheType: .none, entityTag: ImageVariant.entityTag(of: data)),
            duration: ContinuousClock.now - encodeStarted)
        manager.counters.add(\.encodes)
        try await store(encoded.product)
        return encoded
    }

    /// Whether a vector source is answered as its own document: the options say so
    /// (``EncodeOptions/passesVectorSource``), or the format asked for is one only a source can be
    /// (``VariantFormat/exactly(_:)`` with SVG).
    private var passesVectorSource: Bool {
        if encoding.passesVectorSource { return true }
        if case .exactly(let format) = choice { return coders.canPassThrough(format) }
        return false
    }

    /// The variant that is the source's own document as its coder makes it safe to serve
    /// (``CoderRegistry/passthroughDocument(for:)``: an SVG sanitised), stored like an encode.
    private func passedThrough(_ source: Data, pixelSize: PixelSize) async throws(WebImageError) -> MadeProduct<ImageVariant> {
        let started = ContinuousClock.now
        let format = ImageFormat(sniffing: source)
        let document: Data?
        do {
            document = try coders.passthroughDocument(for: source)
        } catch {   // the source cannot be made safe: it is the source that is bad, as when its decode fails
            throw .decodingFailed(error as? ImageCodingError ?? .corruptData(format: format, reason: "\(error)"), url: url)
        }
        guard let data = document else { throw .encodingFailed(.unsupportedEncoding(format: format, pixelFormat: .rgba8), url: url) }
        let variant = ImageVariant(data: data, format: format, pixelSize: pixelSize, cacheType: .none, entityTag: ImageVariant.entityTag(of: data))
        try await store(variant)
        return MadeProduct(product: variant, duration: ContinuousClock.now - started)
    }

    /// The variant in the memory tier and on disk (``DerivedProductStore/store(_:forKey:options:context:cache:url:admitsToMemoryOnReuse:writes:)``),
    /// admitted to memory as the manager's ``VariantMemoryAdmission`` says.
    private func store(_ variant: ImageVariant) async throws(WebImageError) {
        guard let variantKey = request.key else { return }
        try await manager.variants.store(variant, forKey: variantKey, options: options, context: context, cache: cache, url: url,
                                         admitsToMemoryOnReuse: manager.config.variantMemoryAdmission == .whenReused,
                                         writes: manager.cacheWrites)
    }

    /// The source's ICC profile (``WebImageOptions/preserveColorProfile``) and EXIF copyright
    /// (``WebImageOptions/preserveCopyright``) into `encoding`, unless it sets its own, read from the
    /// original's stored bytes (after the background writes under way, when a load that just
    /// finished is still writing them); nothing when they are not stored (a cache without disk).
    private func addSourceMetadata(to encoding: inout EncodeOptions) async {
        guard let key = imageKeys.originalKey else { return }
        let cache = context.originalCache ?? context.cache ?? manager.cache
        var stored = try? await cache.cachedData(forKey: key)
        if stored == nil {
            await manager.backgroundWrites.waitUntilIdle()
            stored = try? await cache.cachedData(forKey: key)
        }
        guard let source = (stored ?? nil)?.data else { return }
        if options.contains(.preserveColorProfile), encoding.colorProfile == nil { encoding.colorProfile = ICCProfileReader.profile(in: source) }
        if options.contains(.preserveCopyright), encoding.copyright == nil { encoding.copyright = EXIFCopyright.copyright(in: source) }
    }
}
