import Foundation
import Synchronization

/// What a ``DownloadEventStream`` delivers.
public enum DownloadEvent: Sendable {
    /// Bytes arrived. When the consumer is slower than the network, the chunks that arrived since its
    /// last event come merged into one.
    case progress(ImageLoadProgress)
    /// The download completed; always the last event.
    case finished(ImageLoadResponse)
}

/// The events of one load, as ``Downloader/events(for:)`` returns them: `.progress` as bytes arrive,
/// then `.finished` with the response, or the load's error thrown.
///
/// Buffering is bounded by design: progress the consumer has not taken yet is merged into a single
/// pending event, so a slow consumer gets fewer, larger chunks, never a growing queue of events. What
/// waits is at most the body not yet consumed, which ``DownloaderConfig/maxResponseBytes`` bounds.
///
/// The stream is meant for one consumer. Dropping it and its iterator (ending a `for try await` loop
/// early) or cancelling the consuming task cancels this caller's load; a download shared with other
/// callers goes on for them.
public struct DownloadEventStream: AsyncSequence, Sendable {
    /// The stream's element.
    public typealias Element = DownloadEvent

    let channel: EventChannel<DownloadEvent>

    /// Starts `load`, feeding its progress and result to the stream.
    init(load: @escaping @Sendable (_ progress: @escaping ImageLoadProgressHandler) async throws -> ImageLoadResponse) {
        channel = EventChannel(coalesce: Self.coalesce) { yield in
            let response = try await load { yield(.progress($0)) }
            yield(.finished(response))
        }
    }

    /// Merges a progress event into a pending progress event (chunks appended, counts updated).
    static func coalesce(_ pending: inout [DownloadEvent], _ event: DownloadEvent) {
        if case .progress(let next) = event, case .progress(var merged)? = pending.last {
            merged.chunk.append(next.chunk)
            merged.receivedBytes = next.receivedBytes
            merged.expectedBytes = next.expectedBytes
            pending[pending.count - 1] = .progress(merged)
        } else {
            pending.append(event)
        }
    }

    /// Creates the iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(channel: channel)
    }

    /// Iterates a ``DownloadEventStream``.
    public struct Iterator: AsyncIteratorProtocol {
        let channel: EventChannel<DownloadEvent>

        /// The next event, waiting for it if need be; `nil` after `.finished`.
        /// - Throws: the load's ``WebImageError``; ``WebImageError/cancelled(url:)`` when the consuming
        ///   task is cancelled.
        public mutating func next() async throws -> DownloadEvent? {
            try await channel.next()
        }
    }
}
