import CSVG
import Foundation
import WebImage

/// Reads SVG: sanitises it as imgproxy does (libxml2; no entity is ever expanded, nothing is fetched) and
/// renders it with librsvg's `rsvg-convert` (Debian's `librsvg2-bin`) in a child process, at the size the
/// caller asks for. Register it once with `CoderRegistry.shared.add(SVGCoder())`.
///
/// **Why a child process**: librsvg 2.54 (Debian 12) still aborts or crashes inside cairo on some hostile
/// files even after sanitising (`Sources/CSVG/include/csvg.h` lists what was found); a crash, a hang or a
/// memory blow-up then ends one `rsvg-convert`, never the server. The child gets a time limit
/// (``timeout``) and an address-space limit (``memoryLimit``, through util-linux's `prlimit`).
///
/// **Size**: the document's own size (absolute `width`/`height`, or its `viewBox`, or 300 × 150 as browsers
/// use) when no size is asked for; with ``DecodeOptions/thumbnailPixelSize`` or
/// ``DecodeOptions/maxPixelCount`` the document is rendered straight at the size they give (a vector has no
/// resolution of its own: a file declaring 10⁶ × 10⁶ costs only the asked size). The size rendered is
/// checked against ``DecodeOptions/pixelCountLimit`` before the child starts.
///
/// Pixels are ``PixelFormat/rgba8`` (straight alpha, transparent where nothing is drawn). Encoding is not
/// supported: an SVG output is the source itself, sanitised unless ``sanitizesPassthrough`` is off
/// (``PassthroughImageCoder``), as imgproxy answers an SVG asked for as SVG.
public struct SVGCoder: PassthroughImageCoder {
    /// The `rsvg-convert` executable; default `/usr/bin/rsvg-convert`.
    public var rasterizer: String
    /// How long one render may take before the child is killed; default 10 seconds.
    public var timeout: Duration
    /// The address space the child may use, in bytes; default 2 GiB. 0: no limit (or no `prlimit`).
    public var memoryLimit: Int
    /// Whether an SVG passed through to a client (``passthroughDocument(_:)``) is sanitised first;
    /// default `true`, as imgproxy's `IMGPROXY_SANITIZE_SVG`. Off, the source's bytes are sent as they
    /// are (only for trusted sources: scripts in them then run in the client's context unless the
    /// server's `Content-Security-Policy` stops them). A render always sanitises.
    public var sanitizesPassthrough: Bool

    /// Creates the coder; see each property for its default.
    public init(rasterizer: String = "/usr/bin/rsvg-convert", timeout: Duration = .seconds(10), memoryLimit: Int = 2 << 30,
                sanitizesPassthrough: Bool = true) {
        self.rasterizer = rasterizer
        self.timeout = timeout
        self.memoryLimit = memoryLimit
        self.sanitizesPassthrough = sanitizesPassthrough
    }

    /// ``ImageFormat/svg``.
    public var passthroughFormats: Set<ImageFormat> { [.svg] }

    /// The document a client is sent for an SVG asked for as SVG: ``sanitize(_:)``'s result, or `data`
    /// itself without ``sanitizesPassthrough``.
    /// - Throws: what ``sanitize(_:)`` throws; ``ImageCodingError/unsupportedFormat(_:)`` for bytes that are not SVG.
    public func passthroughDocument(_ data: Data) throws -> Data {
        let sniffed = ImageFormat(sniffing: data)
        guard sniffed == .svg else { throw ImageCodingError.unsupportedFormat(sniffed) }
        return sanitizesPassthrough ? try Self.sanitize(data) : data
    }

    /// Whether `data` looks like SVG (text whose first tag is followed by `<svg` within 1 KiB).
    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .svg
    }

    /// Sanitises `data` as imgproxy does: scripts, event attributes, `foreignObject`, external and
    /// `javascript:` references removed, no entity expanded (a DTD declaring entities is refused).
    /// - Returns: the sanitised document, UTF-8, without an XML declaration.
    /// - Throws: ``ImageCodingError/corruptData(format:reason:)`` for bytes that are not XML or not SVG, a DTD
    ///   with entities, or a document nested too deep; ``ImageCodingError/imageTooLarge(width:height:limit:)``
    ///   for embedded images of more than 50 megapixels in all.
    public static func sanitize(_ data: Data) throws -> Data {
        guard !data.isEmpty else { throw ImageCodingError.truncatedData(format: .svg) }
        var message = [CChar](repeating: 0, count: 256)
        var output: UnsafeMutablePointer<UInt8>?
        var count = 0
        let status = data.withUnsafeBytes { bytes in
            csvg_sanitize(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count, &output, &count, &message, message.count)
        }
        guard status == 0, let output else {
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("too large") { throw ImageCodingError.imageTooLarge(width: 0, height: 0, limit: Int(CSVG_MAX_EMBEDDED_PIXELS)) }
            throw ImageCodingError.corruptData(format: .svg, reason: text.isEmpty ? "the SVG cannot be sanitised" : text)
        }
        return Data(bytesNoCopy: output, count: count, deallocator: .custom { pointer, _ in csvg_free(pointer) })
    }

    /// Sanitises and renders an SVG document.
    ///
    /// - Parameters:
    ///   - data: the whole file.
    ///   - options: the size (see the type's description), the pixel-count limit and ``DecodeOptions/scale``.
    /// - Returns: the rendered image, with format ``ImageFormat/svg``.
    /// - Throws: ``ImageCodingError``: `unsupportedFormat` for another format; what ``sanitize(_:)`` throws;
    ///   `imageTooLarge` for a size over the limit; `corruptData` when `rsvg-convert` refuses the document,
    ///   crashes or runs out of time; `unsupportedFeature` when `rsvg-convert` is not installed.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        let sniffed = ImageFormat(sniffing: data)
        guard sniffed == .svg || sniffed == .unknown else { throw ImageCodingError.unsupportedFormat(sniffed) }
        let clean = try Self.sanitize(data)
        let intrinsic = SVGIntrinsicSize(document: clean)
        let size = intrinsic.renderSize(for: options)
        guard size.width <= 32_767, size.height <= 32_767, size.width * size.height <= options.pixelCountLimit else {
            throw ImageCodingError.imageTooLarge(width: size.width, height: size.height, limit: options.pixelCountLimit)
        }
        let png = try SVGRasterizer(executable: rasterizer, timeout: timeout, memoryLimit: memoryLimit).render(clean, size: size)
        var pngOptions = DecodeOptions(pixelCountLimit: options.pixelCountLimit, scale: options.scale)
        pngOptions.convertsToSRGB = false
        let image = try PNGCoder().decode(png, options: pngOptions)
        let rgba = image.pixelFormat == .rgba8 ? image : try image.converted(to: .rgba8)
        return rgba.withFormat(.svg)
    }

    /// `false`: an SVG output is the sanitised source (``sanitize(_:)``), never an encode of pixels.
    public func canEncode(_ format: ImageFormat) -> Bool { false }

    /// Always throws: SVG is not written from pixels.
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)``.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws -> Data {
        throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat)
    }
}
