import Foundation
import WebImage

extension FetchCommand {
    /// `webimage fetch`'s flags, declared once: ``parse(_:)`` reads them and `--help` prints them.
    static let options = CommandOptions<FetchCommand>(
        usage: "webimage fetch [options] URL...",
        summary: """
        load each URL (http, https, s3, file, data, or a local path) through the manager; one tab-separated line per URL:
        url, source tier (none/memory/disk), width, height, bytes (- when none), ms; or url, error, message. A summary and
        (on a terminal) a progress bar go to stderr; exit code 1 if any failed.
        """,
        options: [
            .thumbnail(\.thumbnail, help: "decode to fit inside N x N pixels (cached under its own key)"),
            .transform(\.transformer, help: "transform each image (cached under its own key, derived from a cached original); SPEC: webimage help"),
            .folder("--out", \.outputDirectory, help: "write each image into DIR (JPEG sources as .jpg, everything else as .png)"),
            .folder("--cache-dir", \.cacheDirectory, default: "the shared cache's folder", help: "the disk cache folder"),
            .value("--concurrency", "N", need: "a positive number", default: "6", help: "loads and downloads at once") { command, text in
                guard let count = Int(text), count > 0 else { return false }
                command.concurrency = count
                return true
            },
            .flag("--refresh", help: "revalidate cached images with the server (ETag / Last-Modified)") { $0.refresh = true },
            .value("--format", "F", need: "auto, best, \(DecodeCommand.writableFormatNames)", default: "none: images, not variants",
                   help: "load encoded variants in format F (auto: AVIF or WebP when --accept lists them, else JPEG, PNG or GIF by the "
                       + "source; best: the smallest of JPEG, PNG and what --accept lists, lossless for flat pictures), cached as such: "
                       + "a warm run decodes nothing; --out then writes each variant's bytes") { command, text in
                let name = text.lowercased()
                if name == "auto" {
                    command.variantFormat = .automatic(accept: nil)
                } else if name == "best" {
                    command.variantFormat = .best(BestFormat(candidates: []))   // its candidates come from --accept, read later
                } else if let format = ImageFormat(named: name), CoderRegistry.shared.canEncode(format) {
                    command.variantFormat = .exactly(format)
                } else {
                    return false
                }
                return true
            },
            .value("--quality", "Q", need: "a number from 1 to 100, or auto[:TARGET] (TARGET: a DSSIM above 0)", default: "90",
                   help: "the variants' lossy quality (needs --format); auto: the lowest quality from 70 to 80 (AVIF 60 to 65) whose DSSIM "
                       + "against the unencoded picture is at most TARGET (default 0.02), searched per picture") { command, text in
                if text == "auto" || text.hasPrefix("auto:") {
                    let target = text == "auto" ? AutomaticQuality.defaultDSSIMTarget : Double(text.dropFirst(5)) ?? -1
                    guard target > 0, target.isFinite else { return false }
                    command.automaticQuality = .dssim(target: target)
                    return true
                }
                guard let quality = Double(text), (1...100).contains(quality) else { return false }
                command.quality = quality
                return true
            },
            .value("--accept", "HEADER", need: "an Accept header such as 'image/avif,image/webp,*/*'",
                   help: "the Accept header --format auto chooses for (needs --format)") { command, text in
                command.accept = text
                return true
            },
            .flag("--keep-profile", help: "keep each source's pixels and ICC profile (default: converted to sRGB, no profile)") {
                $0.keeps.insert(.preserveColorProfile)
            },
            .flag("--keep-copyright", help: "keep each source's EXIF copyright notice in its variant (default: no metadata)") {
                $0.keeps.insert(.preserveCopyright)
            },
        ] + RedisArguments.options.map { $0.lifted(\.redis) } + S3Arguments.options.map { $0.lifted(\.s3) },
        operand: { command, url in command.urls.append(url) })
}
