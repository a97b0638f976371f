import Foundation
import WebImage

/// `webimage decode`: decodes files and prints one tab-separated line each.
struct DecodeCommand {
    var checksum = false
    var frames = false
    var orient = false
    var thumbnail: Int?
    var page = 0
    var iconSide: Int?
    var transformer: PipelineTransformer?
    var outputDirectory: URL?
    var outputFormat = ImageFormat.png
    var files: [String] = []

    /// Parses `arguments`, decodes every file, and returns the exit status: 0 when all decoded,
    /// 1 when any file failed, 2 for a usage error.
    static func run(_ arguments: [String]) -> Int32 {
        switch parse(arguments) {
        case .failure(let message):
            Console.error("webimage decode: \(message)\n\n" + options.help)
            return 2
        case .success(let command):
            return command.decodeAll()
        }
    }

    static func parse(_ arguments: [String]) -> ParseResult<DecodeCommand> {
        var command = DecodeCommand()
        do {
            try options.parse(arguments, into: &command)
        } catch {
            return .failure(error.message)
        }
        if command.files.isEmpty { return .failure("no files given") }
        return .success(command)
    }

    /// `webimage decode`'s flags, declared once: ``parse(_:)`` reads them and `--help` prints them.
    static let options = CommandOptions<DecodeCommand>(
        usage: "webimage decode [options] FILE...",
        summary: """
        one tab-separated line per file: path, format, width, height, pixel format[, sha256 of RGBA pixels];
        a file that fails prints: path, error, message (exit code 1)
        """,
        options: [
            .flag("--checksum", help: "add the sha256 of the pixels as 8-bit straight-alpha RGBA (the corpus manifest's definition)") {
                $0.checksum = true
            },
            .flag("--frames", help: "one line per frame instead: path, format, width, height, pixel format, frame (from 0), frames, "
                      + "stored duration in ms, loop count (0 = forever), sha256 of the composited canvas; a multi-page TIFF: one line "
                      + "per page") { $0.frames = true },
            .value("--page", "N", need: "a page number from 0", default: "0", help: "the page of a multi-page file (TIFF) to decode") {
                command, text in
                guard let page = Int(text), page >= 0 else { return false }
                command.page = page
                return true
            },
            .value("--icon-size", "N", need: "a positive pixel size", default: "the largest entry",
                   help: "an icon's (ICO, CUR) entry nearest N pixels") { command, text in
                guard let side = Int(text), side > 0 else { return false }
                command.iconSide = side
                return true
            },
            .flag("--orient", help: "apply the EXIF orientation before reporting and hashing (default: stored pixels)") { $0.orient = true },
            .thumbnail(\.thumbnail, help: "decode to fit inside N x N pixels (aspect ratio kept, never enlarged)"),
            .transform(\.transformer, help: "transform each image after decoding (upright first); SPEC: webimage help"),
            .folder("--out", \.outputDirectory, help: "write each decoded image into DIR as <name>.png (or the --format's extension)"),
            .value("--format", "F", need: "one of \(writableFormatNames)", default: "png",
                   help: "the format --out writes, by any name of `webimage formats`; animations stay animated in png (APNG), gif, "
                       + "webp, avif and jxl") { command, text in
                guard let format = ImageFormat(named: text), CoderRegistry.shared.canEncode(format) else { return false }
                command.outputFormat = format
                return true
            },
        ],
        operand: { command, file in command.files.append(file) })

    func decodeAll() -> Int32 {
        if let outputDirectory {
            do {
                try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
            } catch {
                Console.error("webimage decode: cannot create \(outputDirectory.path): \(error.localizedDescription)\n")
                return 1
            }
        }
        var failed = false
        for path in files {
            do {
                Console.write(try decode(path) + "\n")
            } catch {
                failed = true
                Console.write("\(path)\terror\t\(Self.message(for: error))\n")
            }
        }
        return failed ? 1 : 0
    }

    /// Decodes one file and returns its report line.
    func decode(_ path: String) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var options = DecodeOptions(applyOrientation: orient)
        if let thumbnail { options.thumbnailPixelSize = PixelSize(width: thumbnail, height: thumbnail) }
        options.page = page
        options.iconSide = iconSide
        var image = try CoderRegistry.shared.decode(data, options: options)
        if let transformer { image = try transformer.transform(image, forKey: path) }
        if frames, page == 0, image.format.descriptor?.traits.contains(.pages) == true { return try pageLines(of: data, first: image, path: path, options: options) }
        if frames { return frameLines(of: image, path: path) }
        var fields = [path, image.format.rawValue, String(image.width), String(image.height), image.pixelFormat.description]
        if checksum { fields.append(image.rgbaSHA256()) }
        if let outputDirectory {
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            let target = outputDirectory.appendingPathComponent(name).appendingPathExtension(outputFormat.fileExtension ?? "img")
            try CoderRegistry.shared.encode(image, as: outputFormat).write(to: target)
        }
        return fields.joined(separator: "\t")
    }

    /// One line per frame: path, format, width, height, pixel format, frame (from 0), frames, stored
    /// duration in milliseconds, loop count, sha256 of the composited canvas as RGBA.
    func frameLines(of image: Image, path: String) -> String {
        let all = image.frames
        return all.enumerated().map { index, frame in
            let milliseconds = frame.storedDuration.components.seconds * 1000 + frame.storedDuration.components.attoseconds / 1_000_000_000_000_000
            return [path, image.format.rawValue, String(frame.image.width), String(frame.image.height),
                    frame.image.pixelFormat.description, String(index), String(all.count), String(milliseconds),
                    String(image.loopCount), frame.image.rgbaSHA256()].joined(separator: "\t")
        }.joined(separator: "\n")
    }

    /// `--frames` for a multi-page file: one line per page, as ``frameLines(of:path:)`` prints frames (the
    /// pages may differ in size; durations and loop count are 0).
    func pageLines(of data: Data, first: Image, path: String, options: DecodeOptions) throws -> String {
        var pages = [first]
        var options = options
        while true {
            options.page = pages.count
            do {
                pages.append(try CoderRegistry.shared.decode(data, options: options))
            } catch ImageCodingError.pageNotFound {
                break
            }
        }
        return pages.enumerated().map { index, page in
            [path, page.format.rawValue, String(page.width), String(page.height), page.pixelFormat.description, String(index),
             String(pages.count), "0", "0", page.rgbaSHA256()].joined(separator: "\t")
        }.joined(separator: "\n")
    }

    /// The names of every format a registered coder can write, for `--format`'s messages.
    static var writableFormatNames: String {
        ImageFormatRegistry.shared.descriptors.filter { CoderRegistry.shared.canEncode($0.format) }.map(\.names[0]).joined(separator: ", ")
    }

    static func message(for error: any Error) -> String {
        if let coding = error as? ImageCodingError { return coding.description }
        if let transform = error as? ImageTransformError { return transform.description }
        return (error as NSError).localizedDescription
    }
}
