import Foundation
import Testing
@testable import webimage
@testable import WebImage

@Suite struct DecodeCommandTests {
    /// Runs the built `webimage` tool; returns its status and standard output lines.
    func run(_ arguments: [String]) async throws -> (status: Int32, lines: [String]) {
        let outcome = try await ChildProcess.run(arguments)
        return (outcome.status, outcome.outputLines)
    }

    @Test func parsesEveryOption() throws {
        guard case .success(let command) = DecodeCommand.parse(
            ["--checksum", "--orient", "--thumbnail", "64", "--transform", "resize=32x32,fit; blur=2", "--out", "/tmp/x",
             "--format", "jpeg", "a.png", "b.jpg"]
        ) else { Issue.record("parse failed"); return }
        #expect(command.transformer?.key == "ResizingTransformer(32x32,aspectFit)-BlurTransformer(2.000000)")
        #expect(command.checksum && command.orient)
        #expect(command.thumbnail == 64)
        #expect(command.outputDirectory?.path == "/tmp/x")
        #expect(command.outputFormat == .jpeg)
        #expect(command.files == ["a.png", "b.jpg"])
    }

    @Test(arguments: [["--thumbnail", "0", "a.png"], ["--bogus", "a.png"], [], ["--format", "tga", "a.png"], ["--out"],
                      ["--transform", "shrink=2", "a.png"], ["--transform"]])
    func rejectsBadUsage(arguments: [String]) {
        guard case .failure = DecodeCommand.parse(arguments) else {
            Issue.record("\(arguments) should be a usage error")
            return
        }
    }

    @Test func printsOneTabSeparatedLinePerFileWithTheManifestChecksum() async throws {
        let entries = Corpus.entries.filter { $0.path.hasSuffix("pngsuite/basn6a08.png") || $0.path.hasSuffix("pngsuite/basn0g04.png") }
        #expect(entries.count == 2)
        let (status, lines) = try await run(["decode", "--checksum"] + entries.map(\.url.path))
        #expect(status == 0)
        for (entry, line) in zip(entries, lines) {
            let fields = line.split(separator: "\t").map(String.init)
            #expect(fields.count == 6)
            #expect(fields[0] == entry.url.path && fields[1] == "png")
            #expect(fields[2] == String(entry.width ?? -1) && fields[3] == String(entry.height ?? -1))
            #expect(fields[5] == entry.expectedRGBASHA256)
        }
    }

    @Test func reportsAFailingFileAndKeepsGoingWithExitCodeOne() async throws {
        let good = try #require(Corpus.entries.first { $0.path.hasSuffix("pngsuite/basn2c08.png") })
        let bad = try #require(Corpus.entries.first { $0.path.hasSuffix("pngsuite/xd0n2c08.png") })
        let (status, lines) = try await run(["decode", bad.url.path, "/nonexistent/file.png", good.url.path])
        #expect(status == 1)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix(bad.url.path + "\terror\t"))
        #expect(lines[1].hasPrefix("/nonexistent/file.png\terror\t"))
        #expect(lines[2].hasPrefix(good.url.path + "\tpng\t32\t32\trgb8"))
    }

    @Test func writesThumbnailsThatDecodeAgain() async throws {
        let directory = TestScratch.root.appendingPathComponent("decode-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let samples = Corpus.packageRoot.appendingPathComponent("Samples")
        let input = samples.appendingPathComponent("mandelbrot.jpg").path
        let (status, lines) = try await run(["decode", "--thumbnail", "100", "--out", directory.path, input])
        #expect(status == 0)
        #expect(lines.first?.hasSuffix("\tjpeg\t100\t67\trgb8") == true)
        let written = try Data(contentsOf: directory.appendingPathComponent("mandelbrot.png"))
        let image = try CoderRegistry.shared.decode(written)
        #expect(image.format == .png && image.width == 100 && image.height == 67)
    }

    @Test func transformsEachImageBeforeReportingAndWritingIt() async throws {
        let directory = TestScratch.root.appendingPathComponent("decode-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = Corpus.packageRoot.appendingPathComponent("Samples/mandelbrot.jpg").path
        let (status, lines) = try await run(["decode", "--transform", "resize=100x100,cover;round=50", "--out", directory.path, input])
        #expect(status == 0)
        #expect(lines.first?.hasSuffix("\tjpeg\t100\t100\trgba8") == true)
        let written = try CoderRegistry.shared.decode(Data(contentsOf: directory.appendingPathComponent("mandelbrot.png")))
        #expect(written.size == PixelSize(width: 100, height: 100) && written.pixelFormat == .rgba8)
        let bytes = Array(written.pixels)
        #expect(bytes[3] == 0)                                  // a corner outside the circle is transparent
        #expect(bytes[(50 * 100 + 50) * 4 + 3] == 255)          // the centre is opaque
    }

    @Test func aTransformThatLeavesNoPixelsIsAnErrorLine() async throws {
        let input = Corpus.packageRoot.appendingPathComponent("Samples/mandelbrot.jpg").path
        let (status, lines) = try await run(["decode", "--transform", "crop=5000,5000,10x10", input])
        #expect(status == 1)
        #expect(lines.first?.hasPrefix(input + "\terror\tthe transform leaves no pixels") == true)
    }

    @Test func framesPrintsOneLinePerCompositedFrameAsFRAMESTSVDescribesIt() async throws {
        let path = Corpus.root.appendingPathComponent("gif/valid/wuffs/animated-red-blue.gif").path
        let (status, lines) = try await run(["decode", "--frames", path])
        #expect(status == 0)
        let expected = Corpus.frames.filter { $0.path == "gif/valid/wuffs/animated-red-blue.gif" }
        #expect(lines.count == expected.count && lines.count == 4)
        for (line, row) in zip(lines, expected) {
            let fields = line.split(separator: "\t").map(String.init)
            #expect(fields == [path, "gif", "64", "48", "rgba8", String(row.index), "4", String(row.durationMilliseconds ?? 0),
                               String(row.loop ?? 1), row.rgbaSHA256])
        }
    }

    @Test(arguments: ["gif", "webp", "avif", "png"])
    func writesAnAnimationAnimatedInEveryFormatThatAnimates(_ format: String) async throws {
        let input = Corpus.root.appendingPathComponent("gif/valid/wuffs/animated-red-blue.gif").path
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (status, _) = try await run(["decode", "--out", directory.url.path, "--format", format, input])
        #expect(status == 0)
        let written = directory.url.appendingPathComponent("animated-red-blue").appendingPathExtension(format)
        let (again, lines) = try await run(["decode", "--frames", written.path])
        #expect(again == 0)
        #expect(lines.count == 4, "\(format): \(lines)")
        #expect(lines.map { $0.split(separator: "\t")[7] } == ["100", "200", "300", "400"], "\(format)")
    }
}

extension DecodeCommandTests {
    /// `webimage formats` prints the registry, as the tool registers its coders: what corpus-check.py reads.
    @Test func formatsListsTheRegistryAndWhatTheToolWrites() async throws {
        let (status, lines) = try await run(["formats"])
        #expect(status == 0 && lines.count == ImageFormatRegistry.shared.descriptors.count)
        #expect(lines.contains("jpeg,jpg\timage/jpeg\tjpg\twrites\t80\ticc,quality"))
        #expect(lines.contains { $0.hasPrefix("jxl\timage/jxl\tjxl\twrites\t77\t") })
        #expect(lines.contains { $0.hasPrefix("tiff,tif\timage/tiff\ttiff\twrites\t-\t") && $0.hasSuffix("pages") })
        #expect(lines.contains { $0.hasPrefix("svg\timage/svg+xml\tsvg\t-\t") }, "SVG is read, never written")
        #expect(try await run(["formats", "extra"]).status == 2)
        // The decode command decodes the new formats and writes any writable one.
        let (decoded, out) = try await run(["decode", "--page", "1", Corpus.root.appendingPathComponent("tiff/valid/pillow/multipage.tiff").path])
        #expect(decoded == 0 && out.first?.contains("\ttiff\t10\t10\t") == true, "\(out)")
    }
}
