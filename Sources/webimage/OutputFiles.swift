import Foundation
import Synchronization

/// The files `webimage fetch --out` writes: unique names in one directory, each written to a
/// temporary file and renamed into place (never half-written), without `fsync` (Foundation's
/// `Data.write` syncs every file: 233 µs per small file here, see PLATFORM-NOTES).
final class OutputFiles: Sendable {
    let directory: URL
    private let taken = Mutex<Set<String>>([])

    init(directory: URL) {
        self.directory = directory
    }

    /// A name not given out before: the URL's last path component without its extension, then
    /// `.fileExtension` (`-2`, `-3`... on a clash).
    func reserveName(for url: URL, fileExtension: String) -> String {
        var stem = url.deletingPathExtension().lastPathComponent
        if stem.isEmpty || stem == "/" || url.scheme == "data" { stem = "image" }
        return taken.withLock { taken in
            var name = stem + "." + fileExtension
            var counter = 1
            while taken.contains(name) {
                counter += 1
                name = "\(stem)-\(counter).\(fileExtension)"
            }
            taken.insert(name)
            return name
        }
    }

    /// Writes `data` as `name` in the directory: a temporary file in the same directory, renamed.
    /// - Throws: a `POSIXError` (nothing is left behind).
    func write(_ data: Data, as name: String) throws {
        let path = directory.appendingPathComponent(name).path
        let temporary = directory.appendingPathComponent(".\(name).\(getpid()).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var failure: Int32 = 0
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
        if close(descriptor) != 0 && failure == 0 { failure = errno }
        if failure == 0 && rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
        }
    }
}
