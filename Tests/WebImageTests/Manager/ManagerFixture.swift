import Foundation
@testable import WebImage

/// An encoded test picture: a `width`×`height` RGB gradient, varied by `seed` so that two pictures differ.
func encodedPicture(width: Int = 64, height: Int = 48, seed: Int = 0, as format: ImageFormat = .png) throws -> Data {
    var pixels = [UInt8]()
    pixels.reserveCapacity(width * height * 3)
    for y in 0..<height {
        for x in 0..<width {
            pixels += [UInt8(truncatingIfNeeded: x * 4 + seed), UInt8(truncatingIfNeeded: y * 5), UInt8(truncatingIfNeeded: seed * 37)]
        }
    }
    let image = try Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    return try CoderRegistry.shared.encode(image, as: format)
}

/// Keeps the left half of an image (a transformer for tests; the real ones are tested on their own).
struct LeftHalfTransformer: ImageTransformer {
    var key: String { "LeftHalf" }

    func transform(_ image: Image, forKey key: String) throws -> Image {
        let width = max(1, image.width / 2)
        var pixels = [UInt8]()
        for y in 0..<image.height {
            image.withUnsafeRow(y) { pixels += $0.prefix(width * image.pixelFormat.bytesPerPixel) }
        }
        return try Image(width: width, height: image.height, pixelFormat: image.pixelFormat, pixels: pixels, format: image.format)
    }
}

/// A transformer that always fails.
struct FailingTransformer: ImageTransformer {
    struct Failure: Error {}
    var key: String { "Failing" }
    func transform(_ image: Image, forKey key: String) throws -> Image { throw Failure() }
}

/// A manager over its own disk cache (in a temporary directory), downloader and file loader.
///
/// The fixture cleans up after itself: the directory is removed when the last copy of the fixture
/// goes away (a test may still remove it earlier with `directory.remove()`; removing twice is harmless).
struct ManagerFixture {
    let directory = TemporaryDirectory()
    let cache: ImageCache
    let downloader: Downloader
    let manager: WebImageManager
    /// Shared by every copy of the fixture: its deinit removes `directory`.
    private let cleanup: DirectoryRemover

    init(config: WebImageManagerConfig = WebImageManagerConfig(), downloaderConfig: DownloaderConfig = patientDownloads,
         coders: CoderRegistry = .shared) {
        cleanup = DirectoryRemover(directory)
        cache = ImageCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil))
        downloader = Downloader(config: downloaderConfig)
        manager = WebImageManager(cache: cache, loader: LoadersManager(loaders: [downloader, FileLoader()]), coders: coders, config: config)
    }
}

/// Removes a temporary directory when the last reference to it goes away.
private final class DirectoryRemover: Sendable {
    let directory: TemporaryDirectory

    init(_ directory: TemporaryDirectory) {
        self.directory = directory
    }

    deinit {
        directory.remove()
    }
}

/// Decodes the bytes "WANI" to a two-frame 4×2 gray animation (frames of 10s and of 200s).
struct AnimatedCoder: ImageCoder {
    func canDecode(_ data: Data) -> Bool { data == Data("WANI".utf8) }

    func decode(_ data: Data, options: DecodeOptions) throws -> Image {
        let second = try Image(width: 4, height: 2, pixelFormat: .gray8, pixels: [UInt8](repeating: 200, count: 8))
        let storage = try PixelStorage(byteCount: 8)
        storage.bytes.initializeMemory(as: UInt8.self, repeating: 10, count: 8)
        return Image(storage: storage, width: 4, height: 2, pixelFormat: .gray8, bytesPerRow: 4,
                     laterFrames: [ImageFrame(image: second, duration: .milliseconds(200))], firstFrameDuration: .milliseconds(100))
    }

    func canEncode(_ format: ImageFormat) -> Bool { false }

    func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws -> Data {
        throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat)
    }
}

/// What every manager suite has: a local server and the picture it serves unless told otherwise.
protocol ManagerServerSuite {
    var server: TestHTTPServer { get }
    var picture: Data { get }
}

extension ManagerServerSuite {
    func serve(_ path: String, _ body: Data? = nil, headers: [(String, String)] = [("Content-Type", "image/png")]) {
        server.route(path, TestResponse(headers: headers, body: body ?? picture))
    }
}
