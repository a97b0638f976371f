import Foundation

/// Where a `local:///path` source lives under ``ImageServerConfig/localRoot``: the file URL, or why
/// not. The path is percent-decoded once; it is refused when a `..` segment appears, and when the
/// file (every symbolic link on its way resolved) is not inside the root (itself resolved).
enum LocalSource {
    enum Refusal: Error, Equatable {
        /// No local root is configured.
        case disabled
        /// The path leads outside the root.
        case outside
    }

    static func fileURL(for source: URL, root: URL?) throws(Refusal) -> URL {
        guard let root else { throw .disabled }
        let path = source.path.removingPercentEncoding ?? source.path
        let segments = path.split(separator: "/")
        guard !segments.isEmpty, !segments.contains("..") else { throw .outside }
        let realRoot = root.resolvingSymlinksInPath().standardizedFileURL.path
        let file = URL(fileURLWithPath: realRoot).appendingPathComponent(segments.joined(separator: "/"))
        let realFile = file.resolvingSymlinksInPath().standardizedFileURL.path
        guard realFile.hasPrefix(realRoot.hasSuffix("/") ? realRoot : realRoot + "/") else { throw .outside }
        return URL(fileURLWithPath: realFile)
    }
}
