import Foundation

/// The incremental decoder a ``CoderRegistry`` hands out: it waits for enough bytes to recognise the
/// format, then forwards everything to the chosen coder's incremental decoder, or, when no coder
/// decodes the format progressively, keeps the bytes for one full decode at the end.
final class RegistryIncrementalDecoder: IncrementalDecoder {
    /// Enough bytes to sniff every binary format.
    private static let sniffLength = 32

    private let registry: CoderRegistry
    private let options: DecodeOptions
    private var pending = Data()
    private var delegate: (any IncrementalDecoder)?
    private var decidedWithoutDelegate = false
    private(set) var receivedByteCount = 0

    init(registry: CoderRegistry, options: DecodeOptions) {
        self.registry = registry
        self.options = options
    }

    func append(_ chunk: Data) throws {
        receivedByteCount += chunk.count
        if let delegate {
            try delegate.append(chunk)
            return
        }
        pending.append(chunk)
        if !decidedWithoutDelegate && pending.count >= Self.sniffLength {
            try choose()
        }
    }

    func makePartialImage() -> Image? {
        delegate?.makePartialImage()
    }

    func finish() throws -> Image {
        if delegate == nil && !decidedWithoutDelegate { try choose() }
        if let delegate { return try delegate.finish() }
        return try registry.decode(pending, options: options)
    }

    private func choose() throws {
        let progressive = registry.coders.last { $0.canDecode(pending) }.flatMap { $0 as? any ProgressiveImageCoder }
        guard let progressive else {
            decidedWithoutDelegate = true
            return
        }
        let decoder = progressive.makeIncrementalDecoder(options: options)
        let buffered = pending
        pending = Data()
        delegate = decoder
        try decoder.append(buffered)
    }
}
