import Foundation
import Testing

/// The part of the team's image corpus that the tests read, tracked in the repository under
/// `Tests/WebImageTests/Fixtures/Corpus` with the corpus's own layout and the `MANIFEST.tsv` and
/// `FRAMES.tsv` rows of exactly those files (`scripts/make-test-fixtures.py` copies them). A clone
/// alone passes `swift test`; the whole corpus is checked by `scripts/corpus-check.py`.
enum Corpus {
    struct Entry: Sendable, CustomStringConvertible {
        var path: String
        var format: String
        var width: Int?
        var height: Int?
        var mode: String
        var valid: Bool
        var expectedRGBASHA256: String?
        var exifOrientation: Int?
        var orientedWidth: Int?
        var orientedHeight: Int?
        var orientedRGBASHA256: String?
        var reference: String
        var notes: String

        var url: URL { Corpus.root.appendingPathComponent(path) }
        var description: String { path }
        var data: Data {
            get throws { try Data(contentsOf: url) }
        }
        /// Whether the notes say a reference decoder only warned about this invalid file, so that
        /// decoding it is allowed.
        var referenceOnlyWarns: Bool {
            notes.contains("=warn(") || notes.contains("decodes this invalid file without error")
        }
    }

    /// The package root, found from this file's path.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let root = packageRoot.appendingPathComponent("Tests/WebImageTests/Fixtures/Corpus")

    /// Every manifest row. Crashes the test run with a clear message if the fixtures are missing
    /// (they are tracked, so only a damaged checkout lacks them).
    static let entries: [Entry] = {
        let manifest = root.appendingPathComponent("MANIFEST.tsv")
        guard let text = try? String(contentsOf: manifest, encoding: .utf8) else {
            fatalError("The test fixtures are missing: expected \(manifest.path)")
        }
        func field(_ s: Substring) -> String? { s == "-" || s.isEmpty ? nil : String(s) }
        return text.split(separator: "\n").dropFirst().map { line in
            let f = line.split(separator: "\t", omittingEmptySubsequences: false)
            return Entry(
                path: String(f[0]), format: String(f[1]), width: Int(f[2]), height: Int(f[3]), mode: String(f[4]),
                valid: f[5] == "yes", expectedRGBASHA256: field(f[6]), exifOrientation: Int(f[7]),
                orientedWidth: Int(f[8]), orientedHeight: Int(f[9]), orientedRGBASHA256: field(f[10]),
                reference: String(f[11]), notes: f.count > 14 ? String(f[14]) : ""
            )
        }
    }()

    /// Rows of one format ("PNG", "JPEG", ...), excluding the big benchmark files under large/.
    static func entries(format: String) -> [Entry] {
        entries.filter { $0.format == format && !$0.path.hasPrefix("large/") }
    }

    /// One row of FRAMES.tsv: one composited frame of an animated file.
    struct Frame: Sendable {
        var path: String
        var index: Int
        var frameCount: Int
        var canvasWidth: Int
        var canvasHeight: Int
        /// The stored delay in milliseconds, when the file has one.
        var durationMilliseconds: Int?
        /// The stored loop count, when the file has one.
        var loop: Int?
        var rgbaSHA256: String
        /// Whether a correct decoder must produce this row (the references agree).
        var binding: Bool
    }

    /// Every FRAMES.tsv row.
    static let frames: [Frame] = {
        let file = root.appendingPathComponent("FRAMES.tsv")
        guard let text = try? String(contentsOf: file, encoding: .utf8) else {
            fatalError("The test fixtures are missing: expected \(file.path)")
        }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let f = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard f.count >= 11, let index = Int(f[1]), let count = Int(f[2]), let width = Int(f[3]), let height = Int(f[4]) else {
                return nil
            }
            return Frame(path: String(f[0]), index: index, frameCount: count, canvasWidth: width, canvasHeight: height,
                         durationMilliseconds: Int(f[5]), loop: Int(f[6]), rgbaSHA256: String(f[7]), binding: f[10] == "yes")
        }
    }()
}
