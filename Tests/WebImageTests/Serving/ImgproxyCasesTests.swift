import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// imgproxy's own processing test cases (`processing/*_test.go`), ported as data
/// (`Fixtures/imgproxy/processing-cases.tsv`): resizing types × enlarge × extend ×
/// extend_aspect_ratio, gravity × fill × dpr, crop, padding, rotate/flip × EXIF orientation,
/// result-dimension limits, filters, backgrounds. Each case states the source's size and orientation,
/// the options and imgproxy's output size; sources are generated pictures of that size, in the format
/// imgproxy's test read (BMP for its watermark and flatten tests, TIFF for its colour-space tests, else PNG;
/// the watermark is a 200x100 picture as theirs).
/// WebImage refuses none of them now (`preserve_hdr` was the last); a row marked `refused` must be answered 400.
/// Their bit depths (16-bit kept or narrowed) are checked in `HighBitDepthServingTests`.
@Suite struct ImgproxyCasesTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var source: PixelSize
        var orientation: ImageOrientation
        var options: String
        /// `nil`: refused with 400.
        var expected: PixelSize?
        var description: String { "\(name) [\(options)]" }
    }

    static let cases: [Case] = {
        let file = Corpus.packageRoot.appendingPathComponent("Tests/WebImageTests/Fixtures/imgproxy/processing-cases.tsv")
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { fatalError("missing \(file.path)") }
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.dropFirst().map { line in
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let expected = f[5] == "refused" ? nil : PixelSize(width: Int(f[5])!, height: Int(f[6])!)
            return Case(name: f[0], source: PixelSize(width: Int(f[1])!, height: Int(f[2])!),
                        orientation: ImageOrientation(rawValue: Int(f[3])!) ?? .up, options: f[4], expected: expected)
        }
    }()

    /// The source as a viewer shows it (orientations 5–8 swap the sides).
    static func upright(_ testCase: Case) -> PixelSize {
        switch testCase.orientation {
        case .leftMirrored, .right, .rightMirrored, .left: PixelSize(width: testCase.source.height, height: testCase.source.width)
        default: testCase.source
        }
    }

    static func path(_ testCase: Case, source: String) -> String {
        "/insecure/" + (testCase.options.isEmpty ? "" : testCase.options + "/") + "plain/" + source
    }

    @Test func theCasesAreAllThere() {
        #expect(Self.cases.count == 589)
        #expect(Self.cases.filter { $0.expected != nil }.count == 589)
    }

    /// Every case's size from the plan alone (no pixels): the geometry is imgproxy's to the pixel.
    @Test func everyCasesPlannedSizeIsImgproxys() throws {
        var mismatches: [String] = []
        for testCase in Self.cases {
            let path = try ProcessingPath(path: Self.path(testCase, source: "http://h/x.png"))
            guard let expected = testCase.expected else {
                if (try? ProcessingRequest(path: path, allowsSecurityOptions: true)) != nil { mismatches.append("\(testCase): not refused") }
                continue
            }
            let request = try ProcessingRequest(path: path, allowsSecurityOptions: true)
            let source = request.processing.autoRotate ? Self.upright(testCase) : testCase.source
            let size = ProcessingPlan(source: source, options: request.processing).outputSize(options: request.processing)
            if size != expected { mismatches.append("\(testCase): \(size), imgproxy \(expected)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) cases differ:\n\(mismatches.joined(separator: "\n"))")
    }

    /// Every case through `webimage serve`'s server: real HTTP, a real source with its EXIF
    /// orientation, decode, process, encode; the answer's pixel size (or its 400).
    @Test func everyCaseThroughTheServer() async throws {
        let watermark = try WatermarkImage(image: try CoderRegistry.shared.decode(try Self.source(PixelSize(width: 200, height: 100),
                                                                                                   orientation: .up)))
        let fixture = try await ServerFixture {
            $0.allowsSecurityOptions = true
            $0.watermark = watermark
        }
        var routes: Set<String> = []
        for testCase in Self.cases {
            let route = Self.route(testCase)
            if routes.insert(route).inserted {
                let body = try Self.source(testCase)
                fixture.sources.route(route, TestResponse(headers: [("Content-Type", ImageFormat(sniffing: body).mimeType)], body: body))
            }
        }
        #expect(routes.contains { $0.hasSuffix(".bmp") } && routes.contains { $0.hasSuffix("-alpha.bmp") } && routes.contains { $0.hasSuffix(".tiff") })
        let mismatches = try await Self.mismatches(Self.cases) { testCase in
            let route = Self.route(testCase)
            let reply = try await fixture.get(Self.path(testCase, source: fixture.source(route)))
            guard let expected = testCase.expected else {
                return reply.status == 400 ? nil : "\(testCase): \(reply.status), expected 400"
            }
            guard reply.status == 200 else { return "\(testCase): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))" }
            let size = try ServerFixture.coders.decode(reply.body).size
            return size == expected ? nil : "\(testCase): \(size), imgproxy \(expected)"
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) cases differ:\n\(mismatches.sorted().joined(separator: "\n"))")
        await fixture.stop()
    }

    /// The same cases on an animated source of the same size (a 3-frame GIF; the cases without an
    /// EXIF orientation, which a GIF cannot carry), through the server: the answer stays animated (but
    /// as JPEG), and every frame has imgproxy's output size. (The variant path once skipped the transformer for
    /// animations: `rs:fill:160:90` gave 160×160 and `c:` and `dpr:` were ignored.)
    @Test func everyUprightCaseOnAnAnimationKeepsItsGeometryOnEveryFrame() async throws {
        let watermark = try WatermarkImage(image: try CoderRegistry.shared.decode(try Self.source(PixelSize(width: 200, height: 100),
                                                                                                   orientation: .up)))
        let fixture = try await ServerFixture {
            $0.allowsSecurityOptions = true
            $0.watermark = watermark
        }
        let cases = Self.cases.filter { $0.orientation == .up && $0.expected != nil }
        #expect(cases.count == 351)
        for size in Set(cases.map { "\($0.source.width)x\($0.source.height)" }) {
            let parts = size.split(separator: "x").compactMap { Int($0) }
            let gif = try ServerFixture.coders.encode(try Self.animation(PixelSize(width: parts[0], height: parts[1])), as: .gif)
            fixture.sources.route("/\(size).gif", TestResponse(headers: [("Content-Type", "image/gif")], body: gif))
        }
        let mismatches = try await Self.mismatches(cases) { testCase in
            let route = "/\(testCase.source.width)x\(testCase.source.height).gif"
            let reply = try await fixture.get(Self.path(testCase, source: fixture.source(route)))
            guard reply.status == 200 else { return "\(testCase): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))" }
            let image = try ServerFixture.coders.decode(reply.body)
            let sizes = image.frames.map(\.image.size)
            // JPEG (`f:jpeg`) holds one frame; every other output here keeps the three.
            let frames = reply.header("Content-Type") == "image/jpeg" ? 1 : 3
            guard sizes.count == frames else { return "\(testCase): \(sizes.count) frames, expected \(frames)" }
            let wrong = sizes.filter { $0 != testCase.expected }
            return wrong.isEmpty && image.size == testCase.expected ? nil
                : "\(testCase): \(image.size), frames \(sizes), imgproxy \(testCase.expected!)"
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) cases differ:\n\(mismatches.sorted().prefix(40).joined(separator: "\n"))")
        await fixture.stop()
    }

    /// Runs `check` on every case, four at a time (the server's processing slots on two cores);
    /// returns what the checks found wrong.
    static func mismatches(_ cases: [Case], _ check: @escaping @Sendable (Case) async throws -> String?) async throws -> [String] {
        try await withThrowingTaskGroup(of: String?.self) { group in
            var pending = cases.makeIterator()
            func addNext() {
                guard let testCase = pending.next() else { return }
                group.addTask { try await check(testCase) }
            }
            for _ in 0..<4 { addNext() }
            var found: [String] = []
            while let result = try await group.next() {
                if let result { found.append(result) }
                addNext()
            }
            return found
        }
    }

    /// A 3-frame animation of `size`: the gradient of ``source(_:orientation:)`` shifted per frame.
    static func animation(_ size: PixelSize) throws -> Image {
        let frames = try (0..<3).map { index in
            var pixels = [UInt8](repeating: 0, count: size.width * size.height * 3)
            for y in 0..<size.height {
                for x in 0..<size.width {
                    let offset = (y * size.width + x) * 3
                    pixels[offset] = UInt8(truncatingIfNeeded: x * 255 / max(size.width - 1, 1) + index * 40)
                    pixels[offset + 1] = UInt8(y * 255 / max(size.height - 1, 1))
                    pixels[offset + 2] = UInt8(truncatingIfNeeded: index * 80)
                }
            }
            let frame = try Image(width: size.width, height: size.height, pixelFormat: .rgb8, pixels: pixels)
            return ImageFrame(image: frame, duration: .milliseconds(100))
        }
        return try Image(frames: frames, loopCount: 0)
    }

    /// A `size` PNG of a gradient with an alpha-free body, carrying EXIF `orientation` in an `eXIf` chunk.
    /// The source format imgproxy's test used: its watermark tests read `test-images/bmp/24-bpp.bmp`, its
    /// flatten tests `32-bpp-with-alpha.bmp`, its colour-space tests TIFFs; the others PNG (or JPEG: only the
    /// geometry matters, and a PNG carries the EXIF orientation).
    static func route(_ testCase: Case) -> String {
        let stem = "/\(testCase.source.width)x\(testCase.source.height)-o\(testCase.orientation.rawValue)"
        guard testCase.orientation == .up else { return stem + ".png" }
        if testCase.name.hasPrefix("TestWatermark") { return stem + ".bmp" }
        if testCase.name.hasPrefix("TestFlatten") { return stem + "-alpha.bmp" }
        if testCase.name.hasPrefix("TestColorspace") { return stem + ".tiff" }
        return stem + ".png"
    }

    /// The bytes ``route(_:)`` names for a case: its geometry in the format its imgproxy test used.
    static func source(_ testCase: Case) throws -> Data {
        let png = try source(testCase.source, orientation: testCase.orientation)
        let route = route(testCase)
        guard !route.hasSuffix(".png") else { return png }
        let image = try PNGCoder().decode(png)
        if route.hasSuffix(".tiff") { return try ServerFixture.coders.encode(image, as: .tiff) }
        return try BMPCoder().encode(route.hasSuffix("-alpha.bmp") ? try image.converted(to: .rgba8) : image, as: .bmp)
    }

    static func source(_ size: PixelSize, orientation: ImageOrientation) throws -> Data {
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 3)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let index = (y * size.width + x) * 3
                pixels[index] = UInt8(x * 255 / max(size.width - 1, 1))
                pixels[index + 1] = UInt8(y * 255 / max(size.height - 1, 1))
                pixels[index + 2] = UInt8((x + y) & 0xFF)
            }
        }
        let png = try PNGCoder().encode(try Image(width: size.width, height: size.height, pixelFormat: .rgb8, pixels: pixels), as: .png)
        guard orientation != .up else { return png }
        // A big-endian TIFF header and one IFD entry: Orientation (0x0112), SHORT, 1, value.
        let exif: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1,
                             0, UInt8(orientation.rawValue), 0, 0, 0, 0, 0, 0]
        let type = Array("eXIf".utf8)
        var chunk = withUnsafeBytes(of: UInt32(exif.count).bigEndian) { Array($0) } + type + exif
        chunk += withUnsafeBytes(of: CRC32.checksum(type + exif).bigEndian) { Array($0) }
        var bytes = [UInt8](png)
        bytes.insert(contentsOf: chunk, at: 8 + 25)   // after the signature and IHDR
        return Data(bytes)
    }
}
