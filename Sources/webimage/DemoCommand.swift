import Foundation
import WebImage

/// `webimage` with no arguments: loads the sample images shipped in `Samples/` through the whole
/// pipeline (file URLs, a disk cache in a temporary folder) twice, the second time with a new cache
/// over the same folder, prints where each came from, and writes a PNG thumbnail and a round avatar
/// of each, derived from the cached originals.
struct DemoCommand {
    var thumbnailSize = 128
    /// The avatar each sample becomes: a square cut from the middle with round corners and a border.
    var avatar = PipelineTransformer([
        ResizingTransformer(size: PixelSize(width: 96, height: 96), scaleMode: .aspectFill),
        RoundCornerTransformer(radius: 48, borderWidth: 3, borderColor: .white),
    ])
    var outputDirectory = URL(fileURLWithPath: "webimage-samples", isDirectory: true)

    /// The Samples folder: `./Samples` when run from the package root, else next to the sources.
    static func samplesDirectory() -> URL? {
        let candidates = [
            URL(fileURLWithPath: "Samples", isDirectory: true),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Samples", isDirectory: true),
        ]
        return candidates.first { FileManager.default.fileExists(atPath: $0.path) }
    }

    func run() async -> Int32 {
        guard let samples = Self.samplesDirectory(),
              let names = try? FileManager.default.contentsOfDirectory(atPath: samples.path)
        else {
            Console.error("webimage: cannot find the Samples folder (run from the package root)\n")
            return 1
        }
        do {
            try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        } catch {
            Console.error("webimage: cannot create \(outputDirectory.path): \(error.localizedDescription)\n")
            return 1
        }
        let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cacheDirectory) }
        let urls = names.filter { !$0.hasSuffix(".py") && !$0.hasPrefix(".") }.sorted().map { samples.appendingPathComponent($0) }

        var rows = [["pass", "file", "tier", "bytes", "size", "pixels", "frames", "ms"]]
        var failed = false
        var lastManager: WebImageManager?
        for pass in 1...2 {
            // A new cache each pass: the second one finds the first one's files on disk.
            let manager = WebImageManager(cache: ImageCache(directory: cacheDirectory), loader: FileLoader())
            for url in urls {
                let start = ContinuousClock.now
                do {
                    let result = try await manager.loadImage(url: url, options: .waitStoreCache)
                    rows.append(["\(pass)", url.lastPathComponent, Self.tierName(result.cacheType), result.data.map { "\($0.count)" } ?? "-",
                                 "\(result.image.width)x\(result.image.height)", result.image.pixelFormat.description,
                                 "\(result.image.frames.count)", Self.milliseconds(ContinuousClock.now - start)])
                } catch {
                    failed = true
                    rows.append(["\(pass)", url.lastPathComponent, "error", "\(error)", "", "", "", ""])
                }
            }
            lastManager = manager
        }
        Console.write(Self.table(rows))

        var written = 0
        let variants = [
            ("", WebImageContext(thumbnailPixelSize: PixelSize(width: thumbnailSize, height: thumbnailSize))),
            ("-avatar", WebImageContext(transformer: avatar)),
        ]
        for url in urls {
            for (suffix, context) in variants {
                do {
                    guard let manager = lastManager else { break }
                    let variant = try await manager.loadImage(url: url, options: .fromCacheOnly, context: context)
                    // mandelbrot.webp → mandelbrot-webp.png: samples of one picture in several formats keep apart.
                    let name = url.deletingPathExtension().lastPathComponent + "-" + url.pathExtension
                    let target = outputDirectory.appendingPathComponent(name + suffix + ".png")
                    try CoderRegistry.shared.encode(variant.image, as: .png).write(to: target)
                    written += 1
                } catch {
                    failed = true
                    Console.error("webimage: \(suffix.isEmpty ? "thumbnail" : "avatar") of \(url.lastPathComponent): \(error)\n")
                }
            }
        }
        Console.write("\n\(written) images (a thumbnail to fit in \(thumbnailSize)x\(thumbnailSize) and a round avatar "
                      + "\"\(avatar.key)\" each), derived from the cached originals, written to \(outputDirectory.path)/\n")
        return failed ? 1 : 0
    }

    static func tierName(_ type: ImageCacheType) -> String {
        switch type {
        case .memory: "memory"
        case .disk: "disk"
        case .none, .all: "none (loaded)"
        }
    }

    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let value = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return String(format: "%.2f", value)
    }

    static func table(_ rows: [[String]]) -> String {
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n") + "\n"
    }
}
