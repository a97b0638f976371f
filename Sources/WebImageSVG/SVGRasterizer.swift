import Foundation
import Synchronization
import WebImage

/// One `rsvg-convert` run: the sanitised document on its standard input, a PNG of exactly the asked size
/// on its standard output, under a time limit (the child is killed with SIGKILL when it passes) and, through
/// util-linux's `prlimit`, an address-space limit. A crash, a refusal or a timeout is a typed error of this
/// document only.
///
/// Like every coder's work, a render blocks the calling thread until the child ends (at most ``timeout``):
/// callers run coders off the cooperative pool, as the manager does on its work executor.
struct SVGRasterizer {
    var executable: String
    var timeout: Duration
    var memoryLimit: Int

    /// Where util-linux's `prlimit` is (Debian installs it with util-linux, always present).
    static let prlimit = "/usr/bin/prlimit"

    func render(_ document: Data, size: PixelSize) throws(ImageCodingError) -> Data {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw .unsupportedFeature(format: .svg, reason: "\(executable) is not installed (Debian: librsvg2-bin)")
        }
        let process = Process()
        var arguments = ["--width", String(size.width), "--height", String(size.height), "--format", "png"]
        if memoryLimit > 0, FileManager.default.isExecutableFile(atPath: Self.prlimit) {
            process.executableURL = URL(fileURLWithPath: Self.prlimit)
            arguments = ["--as=\(memoryLimit)", "--", executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
        }
        process.arguments = arguments
        // No base URL and a scratch working directory: relative references have nothing to resolve against.
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        process.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
        // Standard error goes to an unlinked temporary file, read once the child has ended: no thread and
        // no pipe to drain beside standard output.
        let errors = Self.scratchFile()
        defer { try? errors?.close() }
        let input = Pipe(), output = Pipe()
        (process.standardInput, process.standardOutput) = (input, output)
        process.standardError = errors ?? FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw .unsupportedFeature(format: .svg, reason: "\(executable) cannot be started: \(error)")
        }
        let timedOut = TimeoutFlag()
        // The child is killed by its PID; the timer is cancelled as soon as the child has been reaped, so a
        // PID reused in that window is the only (vanishingly small) risk.
        let deadline = DispatchWorkItem { [pid = process.processIdentifier] in
            timedOut.set()
            kill(pid, SIGKILL)
        }
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: deadline)
        // The document is written on a thread of its own while the answer is read here: a child that stops
        // reading (or writes a lot first) never blocks both sides.
        let writer = Thread {
            Self.write(document, to: input.fileHandleForWriting.fileDescriptor)
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let png = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        deadline.cancel()
        let message = errors.map(Self.text(of:)) ?? ""
        if timedOut.isSet { throw .corruptData(format: .svg, reason: "rendering took longer than \(timeout)") }
        if process.terminationReason == .uncaughtSignal {
            throw .corruptData(format: .svg, reason: "rsvg-convert crashed on the document (signal \(process.terminationStatus))")
        }
        guard process.terminationStatus == 0, !png.isEmpty else {
            throw .corruptData(format: .svg, reason: message.isEmpty ? "rsvg-convert refused the document" : message)
        }
        return png
    }
}

extension SVGRasterizer {
    /// Writes `data` to the child's standard input with `SIGPIPE` blocked in this thread: a child that exits
    /// (refused, killed) before reading everything makes the write fail with `EPIPE` instead of ending the
    /// whole process. A signal raised by `write(2)` goes to the writing thread, and a pending one is
    /// dropped when the thread ends.
    static func write(_ data: Data, to descriptor: Int32) {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return   // EPIPE: the child is gone; its exit status says why
                }
            }
        }
    }
}

extension SVGRasterizer {
    /// A read-write file with no name (created in the temporary directory and unlinked at once), or `nil`.
    static func scratchFile() -> FileHandle? {
        var template = Array((NSTemporaryDirectory() + "/webimage-svg-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { return nil }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// The first 4 KiB of what the child wrote to `file`, trimmed.
    static func text(of file: FileHandle) -> String {
        guard (try? file.seek(toOffset: 0)) != nil, let data = try? file.read(upToCount: 4096) else { return "" }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Whether the deadline fired: set on the timer's queue, read after the child ended (an atomic: `Sendable`
/// by construction).
private final class TimeoutFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}
