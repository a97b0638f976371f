import CColor
import Foundation
import Synchronization

/// Converts decoded pixels from their embedded ICC profile to sRGB with Little CMS, as imgproxy and
/// sharp do before resizing and encoding (``DecodeOptions/convertsToSRGB``).
///
/// Only RGB profiles on RGB(A) pixels are converted; a gray or CMYK profile, a profile lcms2 refuses,
/// or an image without a profile is left as it is (taken to be sRGB). A transform costs about a
/// millisecond to build, so the last few are kept, by the profile's bytes; converting is then one
/// pass over the pixels, in place.
enum SRGBConverter {
    /// An lcms2 transform, shared by every thread that converts pixels with the same profile.
    ///
    /// `@unchecked Sendable`, because `OpaquePointer` is not `Sendable`. It is safe: the handle is
    /// set once in `init` and never changed (`let`); after that it is only passed to
    /// `ccolor_transform_apply` (lcms2's `cmsDoTransformLineStride`, which the lcms2 manual allows
    /// from several threads on one transform when it was created with `cmsFLAGS_NOCACHE`, as
    /// `ccolor_transform_create` does: the transform is then read-only) and to
    /// `ccolor_transform_destroy` in `deinit`, which runs once, when no thread holds the object.
    final class Transform: @unchecked Sendable {
        let handle: OpaquePointer

        init?(profile: Data, channels: Int) {
            let created = profile.withUnsafeBytes { ccolor_transform_create($0.baseAddress, $0.count, Int32(channels)) }
            guard let created else { return nil }
            handle = created
        }

        deinit { ccolor_transform_destroy(handle) }
    }

    private struct CacheKey: Hashable {
        var profile: Data
        var channels: Int
    }

    /// The last transforms built (a missing entry is a profile lcms2 refused, stored as `nil`).
    private static let cache = Mutex<[CacheKey: Transform?]>([:])
    private static let cacheLimit = 8

    /// Converts `image` (every frame) to sRGB in place when `data`, the bytes it was decoded from,
    /// embeds a usable RGB profile; returns whether it did. The image must be one the caller has just
    /// decoded and shares with nobody yet.
    @discardableResult
    static func convert(_ image: Image, decodedFrom data: Data) -> Bool {
        guard image.pixelFormat == .rgb8 || image.pixelFormat == .rgba8,
              let profile = ICCProfileReader.profile(in: data),
              let transform = transform(for: profile, channels: image.pixelFormat.bytesPerPixel)
        else { return false }
        var converted = Set<ObjectIdentifier>()
        for frame in image.frames where converted.insert(ObjectIdentifier(frame.image.storage)).inserted {
            let target = frame.image
            ccolor_transform_apply(transform.handle, target.storage.bytes, Int32(target.width), Int32(target.height), target.bytesPerRow)
        }
        return true
    }

    private static func transform(for profile: Data, channels: Int) -> Transform? {
        let key = CacheKey(profile: profile, channels: channels)
        if let cached = cache.withLock({ $0[key] }) { return cached }
        let made = Transform(profile: profile, channels: channels)
        cache.withLock { cache in
            if cache.count >= cacheLimit { cache.removeAll() }
            cache[key] = .some(made)
        }
        return made
    }
}
