import Foundation

/// Writes an animated PNG: each frame is encoded by libpng as a still PNG of the canvas, and its
/// `IDAT` data becomes the frame's data (`IDAT` for the first frame, which is also the default image
/// viewers without APNG support show; `fdAT` for the others), after an `fcTL` that places it over the
/// whole canvas with blend `SOURCE` and dispose `NONE`.
enum APNGEncoding {
    /// The APNG file of `frames` (at least two, all of one size), playing `loopCount` times (0 forever).
    /// - Throws: ``ImageCodingError/encodingFailed(format:reason:)`` from libpng;
    ///   ``ImageCodingError/insufficientMemory(byteCount:)`` when frames of several pixel formats are
    ///   converted to RGBA.
    static func encode(_ frames: [ImageFrame], loopCount: Int, level: Int32) throws(ImageCodingError) -> Data {
        let size = frames[0].image.size
        guard frames.allSatisfy({ $0.image.size == size }) else {
            throw .encodingFailed(format: .png, reason: "the frames of an animation must share one size")
        }
        let common = frames[0].image.pixelFormat
        let uniform = frames.allSatisfy { $0.image.pixelFormat == common }
        var out: [UInt8] = []
        var sequence: UInt32 = 0
        for (index, frame) in frames.enumerated() {
            let pixels = uniform ? frame.image : try frame.image.converted(to: .rgba8)
            let still = try PNGCoder.encodeStill(pixels, level: level)
            let chunks = still.withUnsafeBytes { Self.chunks(of: $0) }
            if index == 0 {
                out.append(contentsOf: still.prefix(8))
                out.append(contentsOf: chunks.header)
                APNGStructure.appendChunk("acTL", bigEndian(UInt32(frames.count)) + bigEndian(UInt32(clamping: max(loopCount, 0))), to: &out)
            }
            APNGStructure.appendChunk("fcTL", frameControl(sequence: sequence, size: size, milliseconds: frame.storedMilliseconds), to: &out)
            sequence += 1
            for data in chunks.data {
                if index == 0 {
                    APNGStructure.appendChunk("IDAT", data, to: &out)
                } else {
                    APNGStructure.appendChunk("fdAT", bigEndian(sequence) + data, to: &out)
                    sequence += 1
                }
            }
        }
        APNGStructure.appendChunk("IEND", [UInt8](), to: &out)
        return Data(out)
    }

    /// The chunks of a PNG libpng wrote: `IHDR` (whole, with its CRC) and the payloads of its `IDAT`s.
    static func chunks(of png: UnsafeRawBufferPointer) -> (header: [UInt8], data: [[UInt8]]) {
        var header: [UInt8] = [], data: [[UInt8]] = []
        var offset = 8
        while offset + 12 <= png.count {
            let length = (0..<4).reduce(0) { $0 << 8 | Int(png[offset + $1]) }
            let type = String(decoding: png[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let payload = (offset + 8)..<(offset + 8 + length)
            if type == "IHDR" { header = Array(png[offset..<(payload.upperBound + 4)]) }
            if type == "IDAT" { data.append(Array(png[payload])) }
            offset = payload.upperBound + 4
        }
        return (header, data)
    }

    /// An `fcTL` payload: the whole canvas, a delay of `milliseconds` (clamped to 65535), blend SOURCE, dispose NONE.
    static func frameControl(sequence: UInt32, size: PixelSize, milliseconds: Int) -> [UInt8] {
        return bigEndian(sequence) + bigEndian(UInt32(size.width)) + bigEndian(UInt32(size.height))
            + bigEndian(UInt32(0)) + bigEndian(UInt32(0))
            + bigEndian(UInt16(clamping: milliseconds)) + bigEndian(UInt16(1000)) + [0, 0]
    }

    static func bigEndian<Value: FixedWidthInteger>(_ value: Value) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}
