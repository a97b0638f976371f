/// The events of one load, as ``WebImageManager/imageEvents(url:options:context:)`` returns them:
/// progress and partial images while downloading, the cached image first under
/// ``WebImageOptions/refreshCached``, then exactly one ``ImageLoadEvent/finished(_:)``, or the load's
/// ``WebImageError`` thrown.
///
/// Buffering is bounded: a consumer slower than the load gets only the latest progress and the
/// latest partial image it has not taken yet, never a growing queue of them. The stream is meant
/// for one consumer; ending a `for try await` loop early (dropping the stream) or cancelling the
/// consuming task cancels the load (work shared with other callers goes on for them).
public struct ImageEventStream: AsyncSequence, Sendable {
    /// The stream's element.
    public typealias Element = ImageLoadEvent

    let channel: EventChannel<ImageLoadEvent>

    init(load: @escaping @Sendable (_ events: @escaping @Sendable (ImageLoadEvent) -> Void) async throws -> ImageResult) {
        channel = EventChannel(coalesce: Self.coalesce) { yield in
            let result = try await load(yield)
            yield(.finished(result))
        }
    }

    /// Replaces a pending progress or partial image with a newer one; other events queue.
    static func coalesce(_ pending: inout [ImageLoadEvent], _ event: ImageLoadEvent) {
        let index: Int?
        switch event {
        case .progress: index = pending.firstIndex { if case .progress = $0 { true } else { false } }
        case .partialImage: index = pending.firstIndex { if case .partialImage = $0 { true } else { false } }
        case .cachedImage, .finished: index = nil
        }
        if let index { pending[index] = event } else { pending.append(event) }
    }

    /// Creates the iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(channel: channel)
    }

    /// Iterates an ``ImageEventStream``.
    public struct Iterator: AsyncIteratorProtocol {
        let channel: EventChannel<ImageLoadEvent>

        /// The next event, waiting for it if need be; `nil` after `.finished`.
        /// - Throws: the load's ``WebImageError``; ``WebImageError/cancelled(url:)`` when the consuming
        ///   task is cancelled.
        public mutating func next() async throws -> ImageLoadEvent? {
            try await channel.next()
        }
    }
}
