import Foundation

extension WebImageManager {
    /// Loads the image at `url` as encoded bytes a client can be sent: fitted and transformed as
    /// `context` says (``WebImageContext/thumbnailPixelSize``, ``WebImageContext/transformer``),
    /// upright, without metadata, in the format asked for.
    ///
    /// - **Warm**: a variant stored before (same URL or key-filter key, thumbnail, transformer,
    ///   format or `Accept` choice, and encode options) comes from the memory tier of encoded bytes
    ///   (``WebImageManagerConfig/maxVariantMemoryCost``) or from the cache's stored bytes
    ///   (``ImageCaching/cachedData(forKey:)``) **without decoding or encoding anything**.
    /// - **Cold**: the image is loaded as ``loadImage(url:options:context:)`` loads it (the download
    ///   shared with every other load of the URL, the decode shrunk on load to the thumbnail size,
    ///   the original's bytes stored once), encoded once for all concurrent callers of the variant,
    ///   then stored in the memory tier at once and under its own key on disk (in the background
    ///   unless ``WebImageOptions/waitStoreCache``). An animation stays animated in GIF, PNG (APNG),
    ///   WebP and AVIF, and becomes its first frame in JPEG.
    ///
    /// - Parameters:
    ///   - url: what to load.
    ///   - format: the output format, or ``VariantFormat/automatic(accept:)`` for a client's
    ///     `Accept` header; default automatic with no header (the source's family).
    ///   - encoding: quality, effort, lossless and the other ``EncodeOptions``; default `EncodeOptions()`.
    ///   - options: as for ``loadImage(url:options:context:)``; default `[]`.
    ///   - context: as for ``loadImage(url:options:context:)``; default none.
    /// - Returns: the bytes, their format and MIME type, pixel size, the tier they came from, and a
    ///   strong ETag.
    /// - Throws: ``WebImageError``: whatever ``loadImage(url:options:context:)`` throws,
    ///   `encodingFailed` when no coder can write the format (or its library fails), `shutDown`.
    public func loadVariant(url: URL?, format: VariantFormat = .automatic(accept: nil), encoding: EncodeOptions = EncodeOptions(),
                            options: WebImageOptions = [], context: WebImageContext = WebImageContext()) async throws -> ImageVariant {
        guard let url else { throw WebImageError.invalidURL(nil) }
        return try await loadVariant(prepareVariant(url: url, format: format, encoding: encoding, options: options, context: context))
    }

    /// Runs `body` and, when the manager is observed, reports its variant (or failure) with the key,
    /// the encode and the total time it fills in.
    func reportingVariant(url: URL, _ body: (inout VariantLoadReport?) async throws -> ImageVariant) async throws -> ImageVariant {
        guard observerSlot.isObserved else {
            var unobserved: VariantLoadReport? = nil
            return try await body(&unobserved)
        }
        let started = ContinuousClock.now
        var report: VariantLoadReport? = VariantLoadReport(url: url, variantKey: nil, format: nil, byteCount: 0, cacheType: .none,
                                                           totalDuration: .zero)
        let result: Result<ImageVariant, any Error>
        do {
            result = .success(try await body(&report))
        } catch {
            result = .failure(error)
        }
        if var finished = report {
            switch result {
            case .success(let variant):
                (finished.format, finished.byteCount, finished.cacheType) = (variant.format, variant.data.count, variant.cacheType)
                finished.cacheSource = variant.cacheSource
            case .failure(let error):
                finished.error = error as? WebImageError ?? .cancelled(url: url)
            }
            finished.totalDuration = .now - started
            let event = finished
            observerSlot.emit { .variantFinished(event) }
        }
        return try result.get()
    }

    /// A prepared variant from the memory tier, the stored bytes (unless `storedBytesChecked`), or
    /// the pipeline, filling `report` (when observed) with the key, whether the caller joined an
    /// encode, and the encode's time. Inlined: a warm memory hit is the server's hot path, and a
    /// second async frame cost it a fifth of its speed.
    @inline(__always)
    func variant(_ prepared: PreparedVariant, storedBytesChecked: Bool, report: inout VariantLoadReport?) async throws -> ImageVariant {
        let url = prepared.url
        guard !url.absoluteString.isEmpty else { throw WebImageError.invalidURL(url.absoluteString) }
        if isShutDown { throw WebImageError.shutDown(url: url) }
        let (options, context, variantKey) = (prepared.options, prepared.context, prepared.key)
        report?.variantKey = variantKey
        let cache = context.cache ?? self.cache
        if let variantKey, !options.contains(.fromLoaderOnly) {
            if storedBytesChecked {
                if let variant = variants.memoryValue(forKey: variantKey, context: context) { return variant }
            } else if let variant = await variants.lookUp(forKey: variantKey, context: context, cache: cache) {
                return variant
            }
        }
        if options.contains(.fromCacheOnly) { throw WebImageError.notInCache(url: url) }
        let pipeline = VariantPipeline(manager: self, request: prepared, cache: cache)
        let claimsFill = context.storeCacheType.includesDisk && !options.contains(.cacheMemoryOnly) && !options.contains(.fromLoaderOnly)
        var joined = false
        let encoded = try await variants.make(key: variantKey, url: url, context: context, cache: cache, claimsFill: claimsFill,
                                              joined: { joined = $0 }) { () async throws(WebImageError) in
            try await pipeline.run()
        }
        report?.joinedEncodeUnderWay = joined
        report?.encodeDuration = encoded.duration
        return encoded.product
    }

    /// The variant as ``loadVariant(url:format:encoding:options:context:)`` would answer it from the
    /// memory tier of encoded bytes or the cache's stored bytes, or `nil`: it never loads, decodes or
    /// encodes anything, and reports nothing to the observer (a miss is not a failure). A server
    /// answers warm requests with it before taking a processing slot, so they never wait behind cold
    /// work. The options processor runs as for a load.
    public func cachedVariant(url: URL, format: VariantFormat = .automatic(accept: nil), encoding: EncodeOptions = EncodeOptions(),
                              options: WebImageOptions = [], context: WebImageContext = WebImageContext()) async -> ImageVariant? {
        guard !url.absoluteString.isEmpty, !isShutDown else { return nil }
        return await cachedVariant(prepareVariant(url: url, format: format, encoding: encoding, options: options, context: context))
    }

    /// The variant as ``cachedVariant(url:format:encoding:options:context:)`` would answer it from the
    /// memory tier of encoded bytes alone, or `nil` (a miss, or a context whose query tiers leave
    /// memory out). Synchronous and non-blocking (a lock held for a dictionary lookup): a server
    /// calls it on its network thread, so that a memory hit is answered with no thread hop. Counts a
    /// memory hit like ``cachedVariant(url:format:encoding:options:context:)``; a miss counts nothing.
    public func memoryCachedVariant(url: URL, format: VariantFormat = .automatic(accept: nil), encoding: EncodeOptions = EncodeOptions(),
                                    options: WebImageOptions = [], context: WebImageContext = WebImageContext()) -> ImageVariant? {
        guard !url.absoluteString.isEmpty, !isShutDown else { return nil }
        return memoryCachedVariant(prepareVariant(url: url, format: format, encoding: encoding, options: options, context: context))
    }

    /// The key the variant of `url` is stored under for these parameters: the image's key
    /// (``cacheKey(for:context:options:)``) with `-Variant(<format or Accept choice>,<encode options>)`
    /// inserted before its extension. The options processor is not run: pass the context and options
    /// it would make (default none and `[]`). `nil`
    /// when the key filter says "cache nothing". A server can use it to find or remove a stored
    /// variant (``ImageCaching/removeImage(forKey:cacheType:)``).
    public func variantCacheKey(for url: URL, format: VariantFormat = .automatic(accept: nil), encoding: EncodeOptions = EncodeOptions(),
                                context: WebImageContext = WebImageContext(), options: WebImageOptions = []) -> String? {
        variantCacheKey(imageKey: cacheKey(for: url, context: context, options: options),
                        choice: Self.formatChoice(format, coders: context.coders ?? coders), encoding: encoding, options: options)
    }

    /// The variant's key on its pixels' key (`nil` stays `nil`: the key filter caches nothing).
    func variantCacheKey(imageKey: String?, choice: FormatChoice, encoding: EncodeOptions, options: WebImageOptions) -> String? {
        imageKey.map { CacheKeys.inserting(Self.variantPart(choice: choice, encoding: encoding, options: options), into: $0) }
    }

    /// The format part of a variant's key: the format asked for, or what an `Accept` header picks
    /// before the source is known (AVIF, WebP, or "the source's family").
    enum FormatChoice: Sendable, Hashable {
        case exactly(ImageFormat)
        case sourceFamily
        case sourceFormat
        case preferred([ImageFormat])
        case best(BestFormat)

        var keyPart: String {
            switch self {
            case .exactly(let format): format.rawValue
            case .sourceFamily: "family"
            case .sourceFormat: "source"
            case .preferred(let formats): "preferred-" + formats.map(\.rawValue).joined(separator: ".")
            case .best(let best): best.keyPart
            }
        }

        func format(for image: Image, coders: CoderRegistry) -> ImageFormat {
            switch self {
            case .exactly(let format): format
            case .sourceFamily: .family(ofAnimated: image.isAnimated, hasAlpha: image.pixelFormat.hasAlpha)
            case .sourceFormat:
                image.format != .unknown && coders.canEncode(image.format) ? image.format
                    : .family(ofAnimated: image.isAnimated, hasAlpha: image.pixelFormat.hasAlpha)
            case .preferred(let formats):
                Self.preferred(formats.filter(coders.canEncode), for: image)
                    ?? .family(ofAnimated: image.isAnimated, hasAlpha: image.pixelFormat.hasAlpha)
            case .best:   // the encode chooses (BestFormat.encode); this is its fallback
                .family(ofAnimated: image.isAnimated, hasAlpha: image.pixelFormat.hasAlpha)
            }
        }

        /// imgproxy's choice among its preferred formats (`findPreferredFormat`): the source's own
        /// when listed, else the first that can hold the image, else the first; `nil` for none.
        static func preferred(_ formats: [ImageFormat], for image: Image) -> ImageFormat? {
            if formats.contains(image.format) { return image.format }
            return formats.first { $0.canHold(animated: image.isAnimated, alpha: image.pixelFormat.hasAlpha) } ?? formats.first
        }
    }

    static func formatChoice(_ format: VariantFormat, coders: CoderRegistry) -> FormatChoice {
        switch format {
        case .exactly(let format): .exactly(format)
        case .source: .sourceFormat
        case .preferred(let formats): .preferred(formats)
        case .best(let best): .best(best)
        case .automatic(let accept): ImageFormat.modernChoice(accept: accept, coders: coders).map { .exactly($0) } ?? .sourceFamily
        }
    }

    /// `Variant(<format>,<encode options>)`, inserted into the image's key: every setting that
    /// changes the bytes, written the same way in every process.
    static func variantPart(choice: FormatChoice, encoding: EncodeOptions, options: WebImageOptions = []) -> String {
        let background = encoding.backgroundColor
        var part = "Variant(\(choice.keyPart),q\(Int((encoding.clampedQuality * 100).rounded()))"
        part += ",bg\(background.red).\(background.green).\(background.blue)"
        part += ",z\(encoding.pngCompressionLevel)"
        if let side = encoding.maxPixelSize { part += ",max\(side)" }
        if encoding.isLossless { part += ",lossless" }
        if let effort = encoding.clampedEffort { part += ",e\(Int((effort * 100).rounded()))" }
        if encoding.firstFrameOnly { part += ",first" }
        if let size = encoding.maxFileSize { part += ",size\(size)" }
        if encoding.isProgressive { part += ",progressive" }
        if encoding.passesVectorSource { part += ",vector" }
        if let automatic = encoding.automaticQuality { part += "," + automatic.keyPart }
        if let profile = encoding.colorProfile { part += ",icc" + MD5.hex(profile).prefix(12) }
        if let copyright = encoding.copyright { part += ",c" + MD5.hex(Array(copyright.utf8)).prefix(12) }
        if options.contains(.preserveCopyright) { part += ",copyright" }
        for (format, quality) in encoding.formatQualities.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            part += ",q\(format.rawValue)\(Int((min(max(quality, 0), 1) * 100).rounded()))"
        }
        for (format, effort) in encoding.formatEfforts.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            part += ",e\(format.rawValue)\(Int((min(max(effort, 0), 1) * 100).rounded()))"
        }
        return part + ")"
    }
}
