import Foundation
import WebImage

/// BlurHash and ThumbHash of a 2040×1356 JPEG (the serving benchmark's first DIV2K source), decode
/// included, against what a team runs today in one process: Pillow's `thumbnail` then woltapp's C
/// encoder (blurhash-python), and thumbhash-python; and each encoder alone on the same 100-pixel
/// image against woltapp's C and evanw's JavaScript (when `$THUMBHASH_JS` names a copy). The
/// references run in `placeholders/reference_bench.py`, in the venv of `scripts/placeholder-venv.sh`
/// (`$PLACEHOLDER_PYTHON`, default `/tmp/webimage-placeholder-venv/bin/python`).
enum PlaceholderBenchmarks {
    static func run(iterations: Int) throws -> [Row] {
        let photo = FileManager.default.temporaryDirectory.path + "/webimage-bench-nginx/serving/div2k/jpg/0.jpg"
        guard let data = FileManager.default.contents(atPath: photo) else {
            fail("missing \(photo): run Benchmarks/serving/prepare.py (see Benchmarks/serving/README.md)")
        }
        let box = PixelSize(width: 100, height: 100)
        let blurWithDecode = try Measure.median(iterations: iterations) {
            _ = try BlurHash(encoding: CoderRegistry.shared.decode(data, options: DecodeOptions(thumbnailPixelSize: box)))
        }
        let thumbWithDecode = try Measure.median(iterations: iterations) {
            _ = try ThumbHash(encoding: CoderRegistry.shared.decode(data, options: DecodeOptions(thumbnailPixelSize: box)))
        }
        let small = try CoderRegistry.shared.decode(data, options: DecodeOptions(thumbnailPixelSize: box)).placeholderSource()
        let blurAlone = try Measure.median(iterations: iterations) { _ = try BlurHash(encoding: small) }
        let thumbAlone = try Measure.median(iterations: iterations) { _ = try ThumbHash(encoding: small) }

        let python = ProcessInfo.processInfo.environment["PLACEHOLDER_PYTHON"] ?? "/tmp/webimage-placeholder-venv/bin/python"
        let script = packageRoot.appendingPathComponent("Benchmarks/placeholders/reference_bench.py").path
        var reference: [String: Any] = [:]
        var note = "scripts/placeholder-venv.sh, then PLACEHOLDER_PYTHON=<its python>"
        if FileManager.default.isExecutableFile(atPath: python) {
            let (status, output) = try Measure.run(python, [script, "--photo", photo, "--iterations", String(iterations)])
            if status == 0, let line = output.split(separator: "\n").last,
               let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] {
                reference = object
            } else {
                note = "reference_bench.py failed: \(output.suffix(200))"
            }
        }
        if reference["thumbhash_js_encode_only"] == nil, !reference.isEmpty { note = "THUMBHASH_JS=<a copy of evanw's js/thumbhash.js> and node" }
        let size = "\(small.width)x\(small.height)"
        return [
            Row(name: "BlurHash 4x3 of a 2040x1356 JPEG, decode to 100 px included", ours: blurWithDecode,
                reference: "Pillow thumbnail(100) + woltapp's C encoder (blurhash-python)",
                referenceValue: reference["blurhash_with_decode"] as? Double, note: note),
            Row(name: "ThumbHash of a 2040x1356 JPEG, decode to 100 px included", ours: thumbWithDecode,
                reference: "Pillow thumbnail(100) + thumbhash-python",
                referenceValue: reference["thumbhash_with_decode"] as? Double, note: note),
            Row(name: "BlurHash 4x3 encode alone, \(size) pixels", ours: blurAlone, reference: "woltapp's C encoder (blurhash-python)",
                referenceValue: reference["blurhash_encode_only"] as? Double, note: note),
            Row(name: "ThumbHash encode alone, \(size) pixels", ours: thumbAlone, reference: "evanw's JavaScript rgbaToThumbHash (node)",
                referenceValue: reference["thumbhash_js_encode_only"] as? Double, note: note),
        ]
    }
}
