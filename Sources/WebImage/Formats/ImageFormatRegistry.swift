import Synchronization

/// The formats WebImage recognises, one ``ImageFormatDescriptor`` each, asked in the order registered.
///
/// ``shared`` starts with every format WebImage knows (``ImageFormatDescriptor/builtIn``): PNG, JPEG,
/// GIF, WebP, TIFF, PDF, AVIF, HEIC, HEIF, JPEG XL, BMP, ICO and SVG. A product that brings a coder for
/// a new format registers its descriptor with ``register(_:)`` (a descriptor for a format already known
/// replaces it in place). Thread-safe.
public final class ImageFormatRegistry: Sendable {
    /// The registry ``ImageFormat`` reads its names, media types and sniffing from.
    public static let shared = ImageFormatRegistry()

    private let storage: Mutex<[ImageFormatDescriptor]>

    /// Creates a registry holding `descriptors`, asked in order; default ``ImageFormatDescriptor/builtIn``.
    public init(descriptors: [ImageFormatDescriptor] = ImageFormatDescriptor.builtIn) {
        storage = Mutex(descriptors)
    }

    /// Every registered descriptor, in the order they are asked.
    public var descriptors: [ImageFormatDescriptor] { storage.withLock { $0 } }

    /// Registers `descriptor`: it replaces the one of the same format in place, or is asked after every
    /// binary format and before SVG (whose text detector is the loosest) when its format is new.
    public func register(_ descriptor: ImageFormatDescriptor) {
        storage.withLock { list in
            if let index = list.firstIndex(where: { $0.format == descriptor.format }) {
                list[index] = descriptor
            } else if let svg = list.firstIndex(where: { $0.format == .svg }) {
                list.insert(descriptor, at: svg)
            } else {
                list.append(descriptor)
            }
        }
    }

    /// The descriptor of `format`, or `nil` for a format nobody registered (``ImageFormat/unknown``).
    public func descriptor(for format: ImageFormat) -> ImageFormatDescriptor? {
        storage.withLock { list in list.first { $0.format == format } }
    }

    /// The format a name stands for, such as `jpg`, `JPEG` or `tif` (any case); `nil` for a name no
    /// descriptor lists.
    public func format(named name: String) -> ImageFormat? {
        let lowered = name.lowercased()
        return storage.withLock { list in list.first { $0.names.contains(lowered) }?.format }
    }

    /// The format whose detector accepts `head` (the first bytes of a file, up to 1 KiB), asked in
    /// order; `nil` when none does.
    public func format(detecting head: [UInt8]) -> ImageFormat? {
        guard !head.isEmpty else { return nil }
        let list = descriptors
        return list.first { $0.detector(head) }?.format
    }

    /// The formats a client's `Accept` header may choose, best first (ordered by
    /// ``ImageFormatDescriptor/negotiationRank``).
    public var negotiableFormats: [ImageFormat] {
        descriptors.compactMap { descriptor in descriptor.negotiationRank.map { (descriptor.format, $0) } }
            .sorted { $0.1 < $1.1 }.map(\.0)
    }

    /// The formats whose encodes take a quality (``ImageFormatDescriptor/Traits/quality``).
    public var qualityFormats: [ImageFormat] {
        descriptors.filter { $0.traits.contains(.quality) }.map(\.format)
    }

    /// Each format's default quality (``ImageFormatDescriptor/defaultQuality``), where it differs from
    /// `base` (the server's one quality): imgproxy's `IMGPROXY_FORMAT_QUALITY` defaults.
    public func defaultQualities(differingFrom base: Int) -> [ImageFormat: Int] {
        var qualities: [ImageFormat: Int] = [:]
        for descriptor in descriptors {
            if let quality = descriptor.defaultQuality, quality != base { qualities[descriptor.format] = quality }
        }
        return qualities
    }
}
