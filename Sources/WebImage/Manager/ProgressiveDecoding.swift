import Foundation
import Synchronization

/// Feeds a download's chunks to an ``IncrementalDecoder`` off the loader's delivery thread and
/// emits partial images, one decode at a time and at most once per interval.
///
/// The loader's progress handler only appends chunks under a lock; one drain task at a time does
/// the decoding, so a slow decode never holds up other downloads' bytes. At the end the decoder's
/// own result is the final image when it saw every byte, saving a second decode.
final class ProgressiveDecoding: Sendable {
    /// The decoder is a non-Sendable class; every call to it happens in the drain task while
    /// `isDraining` is set (or in ``finish(expectedBytes:)`` after the last drain has ended), so no
    /// two threads ever use it at once.
    private final class DecoderBox: @unchecked Sendable {
        let decoder: any IncrementalDecoder
        var failed = false
        init(_ decoder: any IncrementalDecoder) { self.decoder = decoder }
    }

    private struct State {
        var pending: [Data] = []
        var isDraining = false
        var drain: Task<Void, Never>?
        var lastPartial: ContinuousClock.Instant?
    }

    private let box: DecoderBox
    private let state = Mutex(State())
    private let interval: Duration
    private let emit: @Sendable (Image) -> Void

    init(decoder: any IncrementalDecoder, interval: Duration, emit: @escaping @Sendable (Image) -> Void) {
        box = DecoderBox(decoder)
        self.interval = interval
        self.emit = emit
    }

    /// Queues `chunk` and starts a drain if none runs.
    func append(_ chunk: Data) {
        state.withLock { state in
            state.pending.append(chunk)
            guard !state.isDraining else { return }
            state.isDraining = true
            state.drain = Task { self.drainLoop() }
        }
    }

    private func drainLoop() {
        while true {
            let (chunks, wantsPartial): ([Data], Bool) = state.withLock { state in
                let chunks = state.pending
                state.pending.removeAll()
                if chunks.isEmpty { state.isDraining = false }
                let now = ContinuousClock.now
                let due = state.lastPartial.map { now - $0 >= interval } ?? true
                if due && !chunks.isEmpty { state.lastPartial = now }
                return (chunks, due)
            }
            if chunks.isEmpty { return }
            guard !box.failed else { continue }
            do {
                for chunk in chunks { try box.decoder.append(chunk) }
            } catch {
                box.failed = true   // the final full decode reports the error
                continue
            }
            if wantsPartial, let partial = box.decoder.makePartialImage() { emit(partial) }
        }
    }

    /// Waits for the drain to end, then returns the decoder's final image if it received exactly
    /// `expectedBytes` bytes without error; `nil` means "decode the data in full instead".
    func finish(expectedBytes: Int) async -> Image? {
        while let drain = state.withLock({ $0.isDraining ? $0.drain : nil }) { await drain.value }
        guard !box.failed, box.decoder.receivedByteCount == expectedBytes else { return nil }
        return try? box.decoder.finish()
    }
}
