/// The encoding a caller wants for an ``ImageVariant``: one format, or the best one for a client.
public enum VariantFormat: Sendable, Hashable {
    /// The best format for a client that sent `accept` (its HTTP `Accept` header; `nil` or empty for
    /// none): the first of ``ImageFormatRegistry/negotiableFormats`` (JPEG XL, AVIF, WebP) the client lists
    /// and a registered coder writes; else the
    /// source's family (``ImageFormat/family(ofAnimated:hasAlpha:)``). See
    /// ``ImageFormat/negotiated(accept:isAnimated:hasAlpha:coders:)``. A server using it must send
    /// `Vary: Accept` with the response.
    case automatic(accept: String?)
    /// Exactly this format (`jpeg`, `png`, `gif`, `webp`, `avif`: whichever coders can encode).
    case exactly(ImageFormat)
    /// The source's own format when a coder can write it (a PNG stays PNG, a WebP stays WebP), else
    /// its family (``ImageFormat/family(ofAnimated:hasAlpha:)``: a HEIF becomes JPEG, or PNG with alpha).
    /// What imgproxy 3 did when a URL named no format.
    case source
    /// The source's own format when it is one of `formats` and a coder can write it; else the first
    /// of `formats` that can hold the image (an animation needs GIF, WebP or AVIF, alpha anything
    /// but JPEG); else the first. What imgproxy 4 does when a URL names no format, with its
    /// `IMGPROXY_PREFERRED_FORMATS` (default JPEG, PNG, GIF: a WebP source becomes a JPEG).
    case preferred([ImageFormat])
    /// The smallest file among several formats (imgproxy Pro's `format:best`): lossless for a flat
    /// picture, lossy otherwise, each candidate tried (see ``BestFormat``). A server building the
    /// candidates from `Accept` must send `Vary: Accept`.
    case best(BestFormat)
}

extension ImageFormat {
    /// The format a server should send a client whose `Accept` header is `accept`, for a source
    /// image with these traits: the first of ``ImageFormatRegistry/negotiableFormats`` (JPEG XL, AVIF,
    /// WebP: imgproxy's order) whose media type the client lists (with a non-zero `q`) and `coders` can
    /// encode; else the source's family
    /// (``family(ofAnimated:hasAlpha:)``).
    ///
    /// Only explicit media types count: `*/*` and `image/*` do not mean a browser decodes AVIF or
    /// WebP (browsers that do list them), as imgproxy and thumbor also decide.
    /// - Parameters:
    ///   - accept: the `Accept` header, or `nil`/empty for none.
    ///   - isAnimated: whether the source has several frames.
    ///   - hasAlpha: whether the source has an alpha channel.
    ///   - coders: the registry whose encoders are available; default ``CoderRegistry/shared``.
    public static func negotiated(accept: String?, isAnimated: Bool, hasAlpha: Bool, coders: CoderRegistry = .shared) -> ImageFormat {
        modernChoice(accept: accept, coders: coders) ?? family(ofAnimated: isAnimated, hasAlpha: hasAlpha)
    }

    /// The format of the family a source belongs to, for clients that take neither AVIF nor WebP:
    /// GIF for an animation, PNG for a still with alpha, JPEG for an opaque still.
    public static func family(ofAnimated isAnimated: Bool, hasAlpha: Bool) -> ImageFormat {
        isAnimated ? .gif : hasAlpha ? .png : .jpeg
    }

    /// A negotiable format the client lists and a coder can encode; `nil` when the source's
    /// family decides. Depends only on the header and the registry, so it can be part of a cache
    /// key before the source is known.
    static func modernChoice(accept: String?, coders: CoderRegistry) -> ImageFormat? {
        ImageFormatRegistry.shared.negotiableFormats.first { $0.isAccepted(by: accept) && coders.canEncode($0) }
    }

    /// Whether `accept` lists this format's media type with a non-zero quality (`*/*` and `image/*`
    /// do not count: see ``negotiated(accept:isAnimated:hasAlpha:coders:)``).
    package func isAccepted(by accept: String?) -> Bool {
        guard let accept, !accept.isEmpty else { return false }
        return Self.acceptedTypes(accept).contains(mimeType)
    }

    /// Whether an encode in this format can hold `image`'s traits, as its descriptor says: several
    /// frames (``ImageFormatDescriptor/Traits/animationSave``: GIF, WebP, AVIF, JPEG XL) and alpha
    /// (anything but JPEG).
    func canHold(animated: Bool, alpha: Bool) -> Bool {
        let traits = descriptor?.traits ?? []
        if animated && !traits.contains(.animationSave) { return false }
        if alpha && !traits.contains(.alpha) { return false }
        return true
    }

    /// The media types an `Accept` header lists with a non-zero quality, lower-cased.
    static func acceptedTypes(_ accept: String) -> Set<String> {
        var types = Set<String>()
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let type = parts.first, !type.isEmpty else { continue }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if quality > 0 { types.insert(type) }
        }
        return types
    }
}

import Foundation
