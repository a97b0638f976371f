import Foundation
import Testing
@testable import WebImage

/// The corpus rows of one format checked against one coder, as `scripts/corpus-check.py` checks the
/// whole corpus: every valid file's stored and oriented checksums, every invalid file refused with a
/// typed error (unless a reference decoder only warns), and every binding frame or page.
enum CorpusConformance {
    /// The mismatches of `format`'s fixture rows decoded by `coder` (empty when all agree), and how many
    /// valid and invalid rows were checked. `skip`: paths whose reference a test checks otherwise.
    /// Off the cooperative pool (decoding is CPU work; the pool's two threads serve every other test).
    static func mismatches(format: String, coder: any ImageCoder, skip: Set<String> = []) async throws -> (problems: [String], valid: Int, invalid: Int) {
        try await offThePool { mismatchesNow(format: format, coder: coder, skip: skip) }
    }

    private static func mismatchesNow(format: String, coder: any ImageCoder, skip: Set<String>) -> (problems: [String], valid: Int, invalid: Int) {
        var problems: [String] = []
        var valid = 0, invalid = 0
        for entry in Corpus.entries(format: format) where !skip.contains(entry.path) {
            guard let data = try? entry.data else { problems.append("\(entry): unreadable fixture"); continue }
            if !entry.valid {
                invalid += 1
                do {
                    _ = try coder.decode(data, options: DecodeOptions(applyOrientation: false))
                    if !entry.referenceOnlyWarns { problems.append("\(entry): an invalid file decoded") }
                } catch is ImageCodingError {
                } catch {
                    problems.append("\(entry): not an ImageCodingError: \(error)")
                }
                continue
            }
            valid += 1
            do {
                let stored = try coder.decode(data, options: DecodeOptions(applyOrientation: false, firstFrameOnly: true))
                if let expected = entry.expectedRGBASHA256, stored.rgbaSHA256() != expected { problems.append("\(entry): stored checksum") }
                if let oriented = entry.orientedRGBASHA256 {
                    let upright = try coder.decode(data, options: DecodeOptions(firstFrameOnly: true))
                    if upright.rgbaSHA256() != oriented || upright.width != entry.orientedWidth || upright.height != entry.orientedHeight {
                        problems.append("\(entry): oriented \(upright.size)")
                    }
                }
            } catch {
                problems.append("\(entry): \(error)")
            }
        }
        return (problems, valid, invalid)
    }

    /// The mismatches of every binding FRAMES.tsv row under `prefix` (a format's folder): frames of an
    /// animation, or pages (``DecodeOptions/page``) when `pages`.
    static func frameMismatches(prefix: String, coder: any ImageCoder, pages: Bool = false) async throws -> (problems: [String], files: Int) {
        try await offThePool { frameMismatchesNow(prefix: prefix, coder: coder, pages: pages) }
    }

    private static func frameMismatchesNow(prefix: String, coder: any ImageCoder, pages: Bool) -> (problems: [String], files: Int) {
        let rows = Corpus.frames.filter { $0.path.hasPrefix(prefix) && $0.binding }
        var problems: [String] = []
        for (path, frames) in Dictionary(grouping: rows, by: \.path) {
            do {
                let data = try Data(contentsOf: Corpus.root.appendingPathComponent(path))
                var images: [(Image, Int?, Int)] = []
                if pages {
                    for page in 0..<frames[0].frameCount {
                        var options = DecodeOptions(applyOrientation: false)
                        options.page = page
                        images.append((try coder.decode(data, options: options), nil, 0))
                    }
                    var past = DecodeOptions()
                    past.page = frames[0].frameCount
                    do {
                        _ = try coder.decode(data, options: past)
                        problems.append("\(path): a page past the last decoded")
                    } catch ImageCodingError.pageNotFound(_, let count) where count == frames[0].frameCount {
                    }
                } else {
                    let image = try coder.decode(data, options: DecodeOptions(applyOrientation: false))
                    images = image.frames.map { ($0.image, $0.storedMilliseconds, image.loopCount) }
                }
                if images.count != frames[0].frameCount { problems.append("\(path): \(images.count) frames, expected \(frames[0].frameCount)") }
                for row in frames where row.index < images.count {
                    let (image, milliseconds, loop) = images[row.index]
                    if image.rgbaSHA256() != row.rgbaSHA256 { problems.append("\(path) frame \(row.index): checksum") }
                    if pages, image.size != PixelSize(width: row.canvasWidth, height: row.canvasHeight) {
                        problems.append("\(path) page \(row.index): \(image.size)")
                    }
                    if let expected = row.durationMilliseconds, let milliseconds, milliseconds != expected {
                        problems.append("\(path) frame \(row.index): \(milliseconds) ms, expected \(expected)")
                    }
                    if let expected = row.loop, row.frameCount > 1, !pages, loop != expected {
                        problems.append("\(path) frame \(row.index): loop \(loop), expected \(expected)")
                    }
                }
            } catch {
                problems.append("\(path): \(error)")
            }
        }
        return (problems, Set(rows.map(\.path)).count)
    }
}
