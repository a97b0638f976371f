import Foundation
import WebImage

/// The largest image the fuzzers let a header declare: 16 MP. Bigger declarations must be refused
/// with `imageTooLarge` before anything is allocated, so hostile sizes cost nothing.
public let fuzzPixelCountLimit = 16 * 1024 * 1024

/// The outcome of one decode: an image or the error it threw.
public typealias DecodeOutcome = Result<Image, ImageCodingError>

/// Runs `body`, checking the documented contract that every failure is an ``ImageCodingError``.
public func decodeOutcome(_ body: () throws -> Image) -> DecodeOutcome {
    do {
        let image = try body()
        checkImage(image)
        return .success(image)
    } catch let error as ImageCodingError {
        return .failure(error)
    } catch {
        preconditionFailure("a decoder threw \(type(of: error)) (\(error)), not ImageCodingError")
    }
}

/// Checks an image's geometry and touches the ends of its pixel memory, so an image whose
/// storage is smaller than `bytesPerRow × height` shows up under ASan.
public func checkImage(_ image: Image) {
    for frame in image.frames {
        let frameImage = frame.image
        precondition(frameImage.width > 0 && frameImage.height > 0, "empty image \(frameImage.size)")
        precondition(frameImage.bytesPerRow >= frameImage.width * frameImage.pixelFormat.bytesPerPixel,
                     "bytesPerRow \(frameImage.bytesPerRow) too small for \(frameImage.width) × \(frameImage.pixelFormat)")
        precondition(frameImage.cost >= frameImage.bytesPerRow * frameImage.height, "cost below the pixel bytes")
        var sink: UInt8 = 0
        frameImage.withUnsafePixels { pixels in
            precondition(pixels.count == frameImage.bytesPerRow * frameImage.height)
            sink ^= pixels[0] ^ pixels[pixels.count - 1]
        }
        frameImage.withUnsafeRow(frameImage.height - 1) { row in sink ^= row[row.count - 1] }
        blackHole(sink)
    }
}

@inline(never) public func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

/// Feeds `data` to an incremental decoder in the chunks `control` chooses, asking for a few partial
/// images along the way, and returns what `finish()` gives.
public func decodeIncrementally(
    _ coder: some ProgressiveImageCoder, _ data: Data, options: DecodeOptions, control: inout FuzzControl
) -> DecodeOutcome {
    let decoder = coder.makeIncrementalDecoder(options: options)
    let ranges = control.chunkRanges(count: data.count)
    // Chunks are either slices of the input (startIndex != 0) or fresh copies (startIndex == 0), as
    // URLSession delivers them; decoders must handle both.
    let slices = control.bool()
    var partialBudget = control.int(in: 0...3)
    var partialsMade = 0
    var appended = 0
    var appendFailure: ImageCodingError?
    for range in ranges {
        let chunk = slices ? data[range] : Data(data[range])
        do {
            try decoder.append(chunk)
        } catch let error as ImageCodingError {
            appendFailure = error
            break
        } catch {
            preconditionFailure("append threw \(type(of: error)) (\(error)), not ImageCodingError")
        }
        appended += range.count
        precondition(decoder.receivedByteCount == appended,
                     "receivedByteCount \(decoder.receivedByteCount) after appending \(appended) bytes")
        if partialBudget > 0, control.next() % 8 == 0 {
            partialBudget -= 1
            partialsMade += 1
            if let partial = decoder.makePartialImage() { checkImage(partial) }
        }
    }
    let outcome = decodeOutcome { try decoder.finish() }
    lastChunking = "\(ranges.count) chunk(s) of \(ranges.prefix(8).map(\.count))\(ranges.count > 8 ? "…" : "")"
        + "\(slices ? " as slices" : " as copies"), \(partialsMade) partial image(s)"
    if let appendFailure {
        // Failures are sticky: finish() throws what append threw.
        guard case .failure(let finishFailure) = outcome, finishFailure == appendFailure else {
            preconditionFailure("append threw \(appendFailure) but finish() gave \(describe(outcome))")
        }
    }
    return outcome
}

/// How the last ``decodeIncrementally`` cut its input, for the failure messages. The fuzzers run one
/// input at a time on one thread.
nonisolated(unsafe) var lastChunking = ""

/// The contract of ``IncrementalDecoder``: the final image equals a full decode of the same bytes,
/// byte for byte, and a failure is the same failure. Crashes (precondition) when they differ.
public func checkSameOutcome(full: DecodeOutcome, incremental: DecodeOutcome, context: String) {
    guard differentialChecksEnabled else { return }
    let context = "\(context), incremental in \(lastChunking)"
    switch (full, incremental) {
    case (.success(let a), .success(let b)):
        if let difference = firstDifference(a, b) {
            preconditionFailure("\(context): incremental image \(describe(incremental)) != full decode \(describe(full)): \(difference)")
        }
    case (.failure(let a), .failure(let b)):
        precondition(sameKind(a, b), "\(context): incremental decode threw \(b), full decode threw \(a)")
    default:
        preconditionFailure("\(context): full decode gave \(describe(full)), incremental gave \(describe(incremental))")
    }
}

/// Same error case; the library's free-text reason may differ with where the bytes were cut.
private func sameKind(_ a: ImageCodingError, _ b: ImageCodingError) -> Bool {
    switch (a, b) {
    case (.corruptData(let f1, _), .corruptData(let f2, _)): f1 == f2
    case (.unsupportedFeature(let f1, _), .unsupportedFeature(let f2, _)): f1 == f2
    default: a == b
    }
}

/// Where two images first differ, or nil when they are the same (geometry, format, every frame's pixels).
public func firstDifference(_ a: Image, _ b: Image) -> String? {
    guard a.width == b.width, a.height == b.height, a.pixelFormat == b.pixelFormat else { return "geometry" }
    guard a.orientation == b.orientation else { return "orientation \(a.orientation) vs \(b.orientation)" }
    guard a.format == b.format else { return "format" }
    guard a.frames.count == b.frames.count else { return "frame count \(a.frames.count) vs \(b.frames.count)" }
    for (index, (fa, fb)) in zip(a.frames, b.frames).enumerated() {
        guard fa.duration == fb.duration else { return "frame \(index) duration" }
        let (x, y) = (fa.image, fb.image)
        guard x.width == y.width, x.height == y.height, x.pixelFormat == y.pixelFormat else { return "frame \(index) geometry" }
        var differingRows = 0
        var firstRow = -1
        for row in 0..<x.height {
            let equal = x.withUnsafeRow(row) { r1 in
                y.withUnsafeRow(row) { r2 in r1.count == r2.count && memcmp(r1.baseAddress!, r2.baseAddress!, r1.count) == 0 }
            }
            if !equal {
                differingRows += 1
                if firstRow < 0 { firstRow = row }
            }
        }
        if differingRows > 0 {
            return "frame \(index): \(differingRows) of \(x.height) rows differ, the first is row \(firstRow)"
        }
    }
    return nil
}

public func describe(_ outcome: DecodeOutcome) -> String {
    switch outcome {
    case .success(let image): "image \(image.width)x\(image.height) \(image.pixelFormat) \(image.frames.count) frame(s)"
    case .failure(let error): "error \(error)"
    }
}
