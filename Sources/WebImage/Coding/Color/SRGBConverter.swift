import CColor
import Foundation
import Synchronization

/// Converts decoded pixels from their embedded ICC profile to sRGB with Little CMS, as imgproxy and
/// sharp do before resizing and encoding (``DecodeOptions/convertsToSRGB``).
///
/// RGB profiles on RGB(A) pixels are converted by an lcms2 transform, gray profiles on gray pixels
/// through a 256-level tone table, and CMYK profiles by the JPEG decoder itself, row by row, from the
/// CMYK samples (``cmykTransform(for:)``: the RGB it would otherwise make has lost the fourth
/// channel). A profile lcms2 refuses, one that does not match the pixels, or an image without a
/// profile is left as it is (taken to be sRGB). A transform costs about a
/// millisecond to build, so the last few are kept, by the profile's bytes; converting is then one
/// pass over the pixels, in place.
package enum SRGBConverter {
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

        /// `channels` 3 or 4: RGB(A) to sRGB; ``cmykChannels``: inverted CMYK to sRGB RGB.
        init?(profile: Data, channels: Int) {
            let created = profile.withUnsafeBytes { bytes in
                channels == SRGBConverter.cmykChannels ? ccolor_cmyk_transform_create(bytes.baseAddress, bytes.count)
                    : ccolor_transform_create(bytes.baseAddress, bytes.count, Int32(channels))
            }
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
    /// The transform key of CMYK profiles (what JPEG's decoder converts row by row).
    static let cmykChannels = 0
    /// Gray profiles' tone tables (256 sRGB levels), by profile; `nil` for a profile lcms2 refused.
    private static let grayTables = Mutex<[Data: [UInt8]?]>([:])

    /// Converts `image` (every frame) to sRGB in place when `data`, the bytes it was decoded from,
    /// embeds a usable RGB profile; returns whether it did. The image must be one the caller has just
    /// decoded and shares with nobody yet.
    @discardableResult
    static func convert(_ image: Image, decodedFrom data: Data) -> Bool {
        guard let profile = ICCProfileReader.profile(in: data) else { return false }
        return convert(image, profile: profile)
    }

    /// Converts `image` (every frame) to sRGB in place from `profile`, for coders whose library reads
    /// the profile itself (TIFF, JPEG XL); returns whether it did. The image must be one the caller has
    /// just decoded and shares with nobody yet.
    @discardableResult
    package static func convert(_ image: Image, profile: Data) -> Bool {
        if image.pixelFormat == .gray8 || image.pixelFormat == .grayAlpha8 {
            guard let table = grayTable(for: profile) else { return false }
            applyGrayTable(table, to: image)
            return true
        }
        guard image.pixelFormat == .rgb8 || image.pixelFormat == .rgba8,
              let transform = transform(for: profile, channels: image.pixelFormat.bytesPerPixel)
        else { return false }
        var converted = Set<ObjectIdentifier>()
        for frame in image.frames where converted.insert(ObjectIdentifier(frame.image.storage)).inserted {
            let target = frame.image
            ccolor_transform_apply(transform.handle, target.storage.bytes, Int32(target.width), Int32(target.height), target.bytesPerRow)
        }
        return true
    }

    /// The transform for a CMYK JPEG's embedded CMYK profile (``JPEGDecompressor`` converts each
    /// batch of rows with it as libjpeg delivers them), or `nil` when lcms2 cannot use the profile.
    static func cmykTransform(for profile: Data) -> Transform? {
        transform(for: profile, channels: cmykChannels)
    }

    private static func grayTable(for profile: Data) -> [UInt8]? {
        if let cached = grayTables.withLock({ $0[profile] }) { return cached }
        var table = [UInt8](repeating: 0, count: 256)
        let made = profile.withUnsafeBytes { bytes in table.withUnsafeMutableBufferPointer { ccolor_gray_table(bytes.baseAddress, bytes.count, $0.baseAddress) } } == 0
        grayTables.withLock { tables in
            if tables.count >= cacheLimit { tables.removeAll() }
            tables[profile] = made ? table : nil
        }
        return made ? table : nil
    }

    /// The gray channel of every frame mapped through `table`, in place (alpha untouched).
    private static func applyGrayTable(_ table: [UInt8], to image: Image) {
        var converted = Set<ObjectIdentifier>()
        for frame in image.frames where converted.insert(ObjectIdentifier(frame.image.storage)).inserted {
            let target = frame.image
            let step = target.pixelFormat.bytesPerPixel
            for y in 0..<target.height {
                let row = target.storage.bytes.assumingMemoryBound(to: UInt8.self) + y * target.bytesPerRow
                for x in 0..<target.width { row[x * step] = table[Int(row[x * step])] }
            }
        }
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
