import Foundation
import WebImage

/// The page `/` serves with `--demo` or `--unsigned`: the package's sample images through the server
/// at several sizes and formats, so a person can open it in a browser and look. The sources are the
/// server's own `/samples/` route (``ImageServerConfig/demoSamplesDirectory``), fetched by the
/// manager over HTTP like any source; URLs are signed when the server has a key.
enum DemoPage {
    /// Sample files `webimage serve` shows, by name.
    static let samples = ["mandelbrot.jpg", "gradient-rgba.png", "spinner.gif"]
    static let sizes = [64, 160, 320]
    static let formats = ["", "jpg", "png", "webp", "avif"]

    /// The page, for sources at `sampleBase` (an http URL ending in `/`), its image URLs under `pathPrefix`.
    static func html(signature: String?, sampleBase: String, signer: ProcessingURLSigner?, pathPrefix: String = "") -> String {
        var rows = ""
        for sample in samples {
            rows += "<h2>\(sample)</h2>\n<div class=\"row\">\n"
            for size in sizes {
                for format in formats {
                    let suffix = format.isEmpty ? "" : "@\(format)"
                    let path = "/rs:fit:\(size):\(size)/plain/\(sampleBase)\(sample)\(suffix)"
                    let src = pathPrefix + "/" + (signature ?? signer?.signature(of: path) ?? "insecure") + path
                    let label = "\(size) px, \(format.isEmpty ? "auto (Accept)" : format)"
                    rows += "  <figure><img src=\"\(src)\" alt=\"\(sample) \(label)\"><figcaption>\(label)</figcaption></figure>\n"
                }
            }
            rows += "</div>\n"
        }
        return """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>WebImage serve</title>
        <style>body{font-family:sans-serif;margin:2em;background:#f4f4f4}.row{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-end}
        figure{margin:0;background:#fff;padding:8px;border-radius:6px}figcaption{font-size:12px;color:#555}
        img{display:block;background:repeating-conic-gradient(#ddd 0 25%,#fff 0 50%) 0 0/16px 16px}</style></head>
        <body><h1>WebImage serve</h1>
        <p>Each picture is an imgproxy-style URL answered by this server: fitted, encoded and cached. The automatic column
        follows your browser's <code>Accept</code> header. <a href="\(pathPrefix)/metrics">/metrics</a> · <a href="\(pathPrefix)/health">/health</a></p>
        \(rows)<script>
        // For people and for scripts/demo-screenshot.sh: how many pictures loaded, in the title.
        window.addEventListener('load', () => {
          const images = [...document.images];
          const loaded = images.filter(image => image.complete && image.naturalWidth > 0).length;
          document.title = `WebImage serve: ${loaded}/${images.length} images loaded`;
        });
        </script></body></html>
        """
    }
}
