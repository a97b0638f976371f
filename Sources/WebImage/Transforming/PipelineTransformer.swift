/// Applies several transformers in order (SDWebImage's `SDImagePipelineTransformer`).
public struct PipelineTransformer: ImageTransformer {
    /// The transformers, applied first to last.
    public let transformers: [any ImageTransformer]

    /// Creates a transformer that applies `transformers` first to last; an empty list returns
    /// images unchanged.
    public init(_ transformers: [any ImageTransformer]) {
        self.transformers = transformers
    }

    /// The transformers' keys joined by `-`, as SDWebImage builds it (empty for an empty pipeline,
    /// which then adds nothing to cache keys).
    public var key: String { transformers.map(\.key).joined(separator: "-") }

    /// Whether every transformer keeps its input's metadata (`true` for an empty pipeline): one that
    /// opts out decides the pipeline's result. Each stage's own choice applies between stages.
    public var preservesImageMetadata: Bool { transformers.allSatisfy(\.preservesImageMetadata) }

    /// Every stage's planned images in turn, each stage planned from the last one's result; stops at
    /// the first stage that cannot tell.
    public func plannedSizes(for source: PixelSize) -> [PixelSize] {
        var sizes: [PixelSize] = [], current = source
        for transformer in transformers {
            let stage = transformer.plannedSizes(for: current)
            guard let result = stage.last else { break }
            sizes += stage
            current = result
        }
        return sizes
    }

    /// `true`: each stage is handed 16-bit images only when it takes them (``ImageTransformer/acceptsHighBitDepth``).
    public var acceptsHighBitDepth: Bool { true }

    /// Returns `image` passed through every transformer in turn, each stage keeping its input's
    /// metadata unless it opts out (see ``ImageTransformer/preservesImageMetadata``).
    /// - Throws: the first error a transformer throws; the later ones do not run.
    public func transform(_ image: Image, forKey key: String) throws -> Image {
        try transformers.reduce(image) { partial, transformer in try transformer.transformKeepingMetadata(partial, forKey: key) }
    }
}
