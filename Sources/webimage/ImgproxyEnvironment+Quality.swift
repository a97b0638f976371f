import Foundation
import WebImage
import WebImageServer

extension ImgproxyEnvironment {
    /// imgproxy Pro's automatic quality and best format (`IMGPROXY_AUTOQUALITY_*`,
    /// `IMGPROXY_BEST_FORMAT_*`), with its names, syntax and defaults.
    static let qualitySettings: [String: @Sendable (String, inout ServeCommand) throws(Invalid) -> Void] = [
        "IMGPROXY_AUTOQUALITY_METHOD": { value, command throws(Invalid) in
            guard let method = AutoQualitySettings.Method(rawValue: value.trimmingCharacters(in: .whitespaces).lowercased()) else {
                throw Invalid(name: "IMGPROXY_AUTOQUALITY_METHOD", reason: "not none, size, dssim, ml or ssimulacra2: \(value)")
            }
            command.server.processingDefaults.autoQuality.method = method
        },
        "IMGPROXY_AUTOQUALITY_TARGET": { value, command throws(Invalid) in
            guard let target = Double(value.trimmingCharacters(in: .whitespaces)), target.isFinite, target > 0 else {
                throw Invalid(name: "IMGPROXY_AUTOQUALITY_TARGET", reason: "not a number above 0: \(value)")
            }
            command.server.processingDefaults.autoQuality.target = target
        },
        "IMGPROXY_AUTOQUALITY_MIN": { value, command throws(Invalid) in
            command.server.processingDefaults.autoQuality.minQuality = try quality(value, "IMGPROXY_AUTOQUALITY_MIN")
        },
        "IMGPROXY_AUTOQUALITY_MAX": { value, command throws(Invalid) in
            command.server.processingDefaults.autoQuality.maxQuality = try quality(value, "IMGPROXY_AUTOQUALITY_MAX")
        },
        "IMGPROXY_AUTOQUALITY_FORMAT_MIN": { value, command throws(Invalid) in
            command.server.processingDefaults.autoQuality.formatMinQualities = try formatQualities(value, "IMGPROXY_AUTOQUALITY_FORMAT_MIN")
        },
        "IMGPROXY_AUTOQUALITY_FORMAT_MAX": { value, command throws(Invalid) in
            command.server.processingDefaults.autoQuality.formatMaxQualities = try formatQualities(value, "IMGPROXY_AUTOQUALITY_FORMAT_MAX")
        },
        "IMGPROXY_AUTOQUALITY_ALLOWED_ERROR": { value, command throws(Invalid) in
            guard let error = Double(value.trimmingCharacters(in: .whitespaces)), error.isFinite, (0...100).contains(error) else {
                throw Invalid(name: "IMGPROXY_AUTOQUALITY_ALLOWED_ERROR", reason: "not a number from 0 to 100: \(value)")
            }
            command.server.processingDefaults.autoQuality.allowedError = error
        },
        "IMGPROXY_AUTOQUALITY_MAX_RESOLUTION": { value, command throws(Invalid) in
            command.server.processingDefaults.autoQuality.maxPixelCount = try megapixelLimit(value, "IMGPROXY_AUTOQUALITY_MAX_RESOLUTION")
        },
        "IMGPROXY_BEST_FORMAT_COMPLEXITY_THRESHOLD": { value, command throws(Invalid) in
            guard let threshold = Double(value.trimmingCharacters(in: .whitespaces)), threshold.isFinite, threshold >= 0 else {
                throw Invalid(name: "IMGPROXY_BEST_FORMAT_COMPLEXITY_THRESHOLD", reason: "not a number of at least 0: \(value)")
            }
            command.server.bestFormat.complexityThreshold = threshold
        },
        "IMGPROXY_BEST_FORMAT_MAX_RESOLUTION": { value, command throws(Invalid) in
            command.server.bestFormat.maxPixelCount = try megapixelLimit(value, "IMGPROXY_BEST_FORMAT_MAX_RESOLUTION")
        },
        "IMGPROXY_BEST_FORMAT_BY_DEFAULT": { value, command throws(Invalid) in
            command.server.bestFormat.isDefault = try bool(value, "IMGPROXY_BEST_FORMAT_BY_DEFAULT")
        },
        "IMGPROXY_BEST_FORMAT_ALLOW_SKIPS": { value, command throws(Invalid) in
            command.server.bestFormat.allowsSkips = try bool(value, "IMGPROXY_BEST_FORMAT_ALLOW_SKIPS")
        },
    ]

    /// The names of imgproxy Pro's machine-learning models, which are not run (`ml` is answered as `dssim`).
    static let modelSettings = ["IMGPROXY_AUTOQUALITY_JPEG_NET", "IMGPROXY_AUTOQUALITY_WEBP_NET", "IMGPROXY_AUTOQUALITY_AVIF_NET",
                                "IMGPROXY_AUTOQUALITY_JXL_NET", "IMGPROXY_AUTOQUALITY_ML_INFERENCE_NUM_STREAMS",
                                "IMGPROXY_AUTOQUALITY_ML_INFERENCE_NUM_THREADS", "IMGPROXY_AUTOQUALITY_ML_EXECUTION_MODE",
                                "IMGPROXY_AUTOQUALITY_ML_CPU_PINNING"]

    /// Refuses automatic-quality settings that cannot be searched once every variable is read: a
    /// minimum above the maximum, a `size` method whose target is not a byte count.
    static func checkQualitySettings(_ command: ServeCommand) throws(Invalid) {
        let settings = command.server.processingDefaults.autoQuality
        guard settings.minQuality <= settings.maxQuality else {
            throw Invalid(name: "IMGPROXY_AUTOQUALITY_MIN", reason: "\(settings.minQuality) is above IMGPROXY_AUTOQUALITY_MAX, \(settings.maxQuality)")
        }
        do {
            _ = try settings.automaticQuality()
        } catch {
            throw Invalid(name: "IMGPROXY_AUTOQUALITY_TARGET", reason: error.reason)
        }
    }
}
