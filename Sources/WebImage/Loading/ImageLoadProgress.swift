import Foundation

/// Bytes that have just arrived for a load in progress.
public struct ImageLoadProgress: Sendable {
    /// Body bytes received so far.
    public var receivedBytes: Int
    /// The body size the server announced, if it did.
    public var expectedBytes: Int?
    /// The bytes that arrived since the previous progress report (for incremental decoding). A caller
    /// that joins a download already under way first gets everything received so far in one chunk, and
    /// the first report of a resumed download carries the bytes kept from the earlier attempt too.
    public var chunk: Data

    /// Creates a progress report.
    public init(receivedBytes: Int, expectedBytes: Int?, chunk: Data) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
        self.chunk = chunk
    }
}

/// Called with each chunk of a load in progress, in order, on one thread at a time. It runs on the
/// loader's delivery thread: keep it short (a slow handler slows the download, it never makes the
/// loader buffer more).
public typealias ImageLoadProgressHandler = @Sendable (ImageLoadProgress) -> Void
