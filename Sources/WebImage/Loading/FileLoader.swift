import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads `file:` URLs from the local file system (Linux's URLSession refuses them) and `data:` URLs
/// (RFC 2397), with the same progress reports and errors as the ``Downloader``.
public struct FileLoader: ImageLoader {
    /// The size of each read, and of each progress chunk; default 64 KiB.
    public let chunkSize: Int
    /// The largest file accepted, as ``DownloaderConfig/maxResponseBytes``; default 64 MiB.
    public let maxBytes: Int

    /// Creates a file loader; both parameters default to the properties' documented defaults.
    public init(chunkSize: Int = 64 << 10, maxBytes: Int = 64 << 20) {
        self.chunkSize = max(chunkSize, 1)
        self.maxBytes = maxBytes
    }

    /// Whether `url` is a `file:` or `data:` URL.
    public func canLoad(_ url: URL) -> Bool {
        let scheme = url.scheme?.lowercased()
        return scheme == "file" || scheme == "data"
    }

    /// Reads the file (in chunks, reporting each) or decodes the data URL.
    /// - Throws: ``WebImageError``: `transport` with `URLError(.fileDoesNotExist)` or
    ///   `URLError(.noPermissionsToReadFile)`, `responseTooLarge`, `emptyResponse`, `cancelled`,
    ///   `invalidURL` for a malformed data URL or another scheme.
    public func load(_ request: ImageLoadRequest, progress: ImageLoadProgressHandler? = nil) async throws -> ImageLoadResponse {
        let url = request.url
        switch url.scheme?.lowercased() {
        case "file": return try readFile(url, progress: progress)
        case "data": return try decodeDataURL(url, progress: progress)
        default: throw WebImageError.invalidURL(url.absoluteString)
        }
    }

    private func readFile(_ url: URL, progress: ImageLoadProgressHandler?) throws -> ImageLoadResponse {
        let start = ContinuousClock.now
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code: URLError.Code = errno == ENOENT || errno == ENOTDIR ? .fileDoesNotExist
                : errno == EACCES ? .noPermissionsToReadFile : .cannotOpenFile
            throw WebImageError.transport(URLError(code), url: url)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw WebImageError.transport(URLError(.fileIsDirectory), url: url)
        }
        let expected = Int(info.st_size)
        guard expected <= maxBytes else { throw WebImageError.responseTooLarge(limit: maxBytes, url: url) }
        var data = Data(capacity: expected)
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while true {
            if Task.isCancelled { throw WebImageError.cancelled(url: url) }
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw WebImageError.transport(URLError(.cannotOpenFile), url: url)
            }
            if count == 0 { break }
            let piece = Data(chunk[0..<count])
            data.append(piece)
            guard data.count <= maxBytes else { throw WebImageError.responseTooLarge(limit: maxBytes, url: url) }
            progress?(ImageLoadProgress(receivedBytes: data.count, expectedBytes: expected, chunk: piece))
        }
        guard !data.isEmpty else { throw WebImageError.emptyResponse(url: url) }
        var metrics = DownloadMetrics()
        metrics.receivedBytes = data.count
        metrics.transferDuration = ContinuousClock.now - start
        return ImageLoadResponse(data: data, url: url, contentType: ImageFormat(sniffing: data).mimeType, metrics: metrics)
    }

    private func decodeDataURL(_ url: URL, progress: ImageLoadProgressHandler?) throws -> ImageLoadResponse {
        let text = url.absoluteString
        guard let comma = text.firstIndex(of: ","), text.lowercased().hasPrefix("data:") else {
            throw WebImageError.invalidURL(text)
        }
        let header = text[text.index(text.startIndex, offsetBy: 5)..<comma]
        let payload = String(text[text.index(after: comma)...])
        let parameters = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        let isBase64 = parameters.last?.lowercased() == "base64"
        let mediaType = parameters.first.flatMap { $0.contains("/") ? String($0) : nil }
        let data: Data?
        if isBase64 {
            let compact = (payload.removingPercentEncoding ?? payload).filter { !$0.isWhitespace }
            data = Data(base64Encoded: compact + String(repeating: "=", count: (4 - compact.count % 4) % 4))
        } else {
            data = payload.removingPercentEncoding.map { Data($0.utf8) }
        }
        guard let data else { throw WebImageError.invalidURL(String(text.prefix(64))) }
        guard data.count <= maxBytes else { throw WebImageError.responseTooLarge(limit: maxBytes, url: url) }
        guard !data.isEmpty else { throw WebImageError.emptyResponse(url: url) }
        progress?(ImageLoadProgress(receivedBytes: data.count, expectedBytes: data.count, chunk: data))
        var metrics = DownloadMetrics()
        metrics.receivedBytes = data.count
        return ImageLoadResponse(data: data, url: url, contentType: mediaType ?? "text/plain", metrics: metrics)
    }
}
