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
            Console.error("webimage decode: \(message)\n\n" + Usage.text)
            return 2
        case .success(let command):
            return command.decodeAll()
        }
    }

    static func parse(_ arguments: [String]) -> ParseResult<DecodeCommand> {
        var command = DecodeCommand()
        var cursor = ArgumentCursor(arguments)
        while let argument = cursor.next() {
            switch argument {
            case "--checksum": command.checksum = true
            case "--frames": command.frames = true
            case "--orient": command.orient = true
            case "--page":
                guard let text = cursor.next(), let page = Int(text), page >= 0 else { return .failure("--page needs a page number from 0") }
                command.page = page
            case "--icon-size":
                guard let text = cursor.next(), let side = Int(text), side > 0 else { return .failure("--icon-size needs a positive pixel size") }
                command.iconSide = side
            case "--thumbnail":
                guard let text = cursor.next(), let size = Int(text), size > 0 else {
                    return .failure("--thumbnail needs a positive pixel size")
                }
                command.thumbnail = size
            case "--transform":
                guard let text = cursor.next() else { return .failure("--transform needs a specification such as resize=256x256;round=16") }
                do {
                    command.transformer = try PipelineTransformer(parsing: text)
                } catch {
                    return .failure(error.description)
                }
            case "--out":
                guard let path = cursor.next() else { return .failure("--out needs a directory") }
                command.outputDirectory = URL(fileURLWithPath: path, isDirectory: true)
            case "--format":
                let writable = Self.writableFormatNames
                guard let name = cursor.next(), let format = ImageFormat(named: name), CoderRegistry.shared.canEncode(format) else {
                    return .failure("--format takes \(writable)")
                }
                command.outputFormat = format
            case "--":
                command.files += cursor.remaining()
            default:
                if argument.hasPrefix("--") { return .failure("unknown option \(argument)") }
                command.files.append(argument)
            }
        }
        if command.files.isEmpty { return .failure("no files given") }
        return .success(command)
    }

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
