import Foundation
import Synchronization

/// The coders WebImage decodes and encodes with, asked newest first.
///
/// ``shared`` starts with the PNG, JPEG, GIF, BMP and ICO coders. ``add(_:)`` a coder to support another format, or to
/// take over one: the last coder added is asked first. Thread-safe: coders can be added and removed
/// while other threads decode. The registry is itself an ``ImageCoder`` that delegates to the first coder
/// that accepts the data.
public final class CoderRegistry: ProgressiveImageCoder {
    /// The registry ``WebImageManager/shared`` uses, with the core's coders: ``PNGCoder``, ``JPEGCoder``,
    /// ``GIFCoder``, ``BMPCoder`` and ``ICOCoder``.
    public static let shared = CoderRegistry()

    private let storage: Mutex<[any ImageCoder]>

    /// Creates a registry holding `coders`, the last one asked first.
    /// Default: ``PNGCoder``, ``JPEGCoder``, ``GIFCoder``, ``BMPCoder`` and ``ICOCoder``.
    public init(coders: [any ImageCoder] = [PNGCoder(), JPEGCoder(), GIFCoder(), BMPCoder(), ICOCoder()]) {
        storage = Mutex(coders)
    }

    /// The registered coders, in the order they were added (the last is asked first).
    public var coders: [any ImageCoder] { storage.withLock { $0 } }

    /// Registers `coder`; it is asked before every coder added earlier.
    public func add(_ coder: any ImageCoder) {
        storage.withLock { $0.append(coder) }
    }

    /// Removes every registered coder of type `type`.
    public func remove<Coder: ImageCoder>(_ type: Coder.Type) {
        storage.withLock { $0.removeAll { $0 is Coder } }
    }

    /// Removes every coder.
    public func removeAll() {
        storage.withLock { $0.removeAll() }
    }

    /// The coder that will decode `data`: the most recently added one that accepts it, or `nil`.
    public func coder(for data: Data) -> (any ImageCoder)? {
        coders.last { $0.canDecode(data) }
    }

    /// Whether any registered coder can decode `data`.
    public func canDecode(_ data: Data) -> Bool {
        coder(for: data) != nil
    }

    /// Decodes `data` with the first coder (newest first) that accepts it, then, with
    /// ``DecodeOptions/convertsToSRGB``, converts an embedded ICC profile's pixels to sRGB.
    /// - Throws: ``ImageCodingError/unsupportedFormat(_:)`` when no coder accepts the data, otherwise
    ///   what that coder throws.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        guard let coder = coder(for: data) else {
            throw ImageCodingError.unsupportedFormat(ImageFormat(sniffing: data))
        }
        return try WorkSection.run { () throws -> Image in
            let image = try coder.decode(data, options: options)
            if options.convertsToSRGB { SRGBConverter.convert(image, decodedFrom: data) }
            return image
        }
    }

    /// Whether any registered coder can encode `format`.
    public func canEncode(_ format: ImageFormat) -> Bool {
        coders.contains { $0.canEncode(format) }
    }

    /// Encodes with the newest coder that can write `format`, then writes
    /// ``EncodeOptions/colorProfile`` and ``EncodeOptions/copyright`` into JPEG, PNG and WebP bytes
    /// (AVIF's coder writes them itself; GIF has no place for them). With an
    /// ``EncodeOptions/automaticQuality`` the quality is searched first
    /// (``encodeSearchingQuality(_:as:options:)``).
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)`` when none can, otherwise
    ///   what that coder throws.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws -> Data {
        if options.automaticQuality != nil { return try encodeSearchingQuality(image, as: format, options: options).data }
        guard let coder = coders.last(where: { $0.canEncode(format) }) else {
            throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat)
        }
        let data = try WorkSection.run { () throws -> Data in try coder.encode(image, as: format, options: options) }
        guard options.colorProfile != nil || options.copyright != nil else { return data }
        var canvas = image.size
        if let side = options.maxPixelSize, side > 0, max(image.width, image.height) > side { canvas = PNGCoder.size(of: image.size, fittingSide: side) }
        return MetadataEmbedder.embed(colorProfile: options.colorProfile, exif: options.copyright.map(EXIFCopyright.tiff(copyright:)),
                                      in: data, format: format, canvas: canvas, hasAlpha: image.pixelFormat.hasAlpha)
    }

    /// Creates an incremental decoder that picks its coder once the first bytes arrive (the newest
    /// ``ProgressiveImageCoder`` that accepts them); bytes no progressive coder accepts are buffered
    /// and decoded whole by ``IncrementalDecoder/finish()``.
    public func makeIncrementalDecoder(options: DecodeOptions = DecodeOptions()) -> any IncrementalDecoder {
        RegistryIncrementalDecoder(registry: self, options: options)
    }
}
