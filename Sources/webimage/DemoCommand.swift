import Foundation
import WebImage

/// `webimage` with no arguments: decodes the sample images shipped in `Samples/`, prints a table and
/// writes a PNG thumbnail of each.
struct DemoCommand {
    var thumbnailSize = 128
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

    func run() -> Int32 {
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
        let files = names.filter { !$0.hasSuffix(".py") && !$0.hasPrefix(".") }.sorted()
        var rows = [["file", "format", "size", "pixels", "orientation", "decode ms", "thumbnail"]]
        var failed = false
        for name in files {
            let url = samples.appendingPathComponent(name)
            do {
                let data = try Data(contentsOf: url)
                let start = ContinuousClock.now
                let stored = try CoderRegistry.shared.decode(data, options: DecodeOptions(applyOrientation: false))
                let image = try stored.oriented()
                let elapsed = ContinuousClock.now - start
                let thumbnailOptions = DecodeOptions(thumbnailPixelSize: PixelSize(width: thumbnailSize, height: thumbnailSize))
                let thumbnail = try CoderRegistry.shared.decode(data, options: thumbnailOptions)
                let target = outputDirectory.appendingPathComponent(url.deletingPathExtension().lastPathComponent + ".png")
                try CoderRegistry.shared.encode(thumbnail, as: .png).write(to: target)
                rows.append([name, image.format.rawValue, "\(image.width)x\(image.height)", image.pixelFormat.description,
                             stored.orientation == .up ? "up" : "\(stored.orientation) (\(stored.orientation.rawValue)), applied", Self.milliseconds(elapsed), "\(thumbnail.width)x\(thumbnail.height)"])
            } catch {
                failed = true
                rows.append([name, "error", DecodeCommand.message(for: error), "", "", "", ""])
            }
        }
        Console.write(Self.table(rows))
        Console.write("\nthumbnails (fit in \(thumbnailSize)x\(thumbnailSize)) written to \(outputDirectory.path)/\n")
        return failed ? 1 : 0
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
