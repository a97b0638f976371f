import CGIF
import Foundation

/// Writes ``Image``s as GIF through giflib (the encoding half of ``GIFCoder``; the palette work is in
/// CGIF's gif_encoder.c and gif_quantize.c).
enum GIFEncoding {
    static func encode(_ image: Image, options: EncodeOptions) throws(ImageCodingError) -> Data {
        let frames = try options.frames(of: image).map { (frame) throws(ImageCodingError) in
            (image: frame.image.pixelFormat == .rgba8 ? frame.image : try frame.image.converted(to: .rgba8),
             delay: centiseconds(milliseconds: frame.storedMilliseconds))
        }
        let size = frames[0].image.size
        guard frames.allSatisfy({ $0.image.size == size }) else {
            throw .encodingFailed(format: .gif, reason: "the frames of an animation must share one size")
        }
        // The model's loop count 1 (play once) is a GIF without a NETSCAPE extension, as it decodes.
        let loop: Int32 = image.loopCount == 1 ? -1 : Int32(clamping: min(max(image.loopCount, 0), 65535))
        var output: UnsafeMutablePointer<UInt8>?
        var count = 0
        let messageCapacity = 256
        var message = [CChar](repeating: 0, count: messageCapacity)
        let status = withFrames(frames.map(\.image), delays: frames.map(\.delay)) { descriptors in
            cgif_encode(descriptors.baseAddress, descriptors.count, UInt32(clamping: size.width), UInt32(clamping: size.height),
                        loop, 0, &output, &count, &message, messageCapacity)
        }
        guard status == .OK, let output else {
            let reason = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw status == .noMemory ? .insufficientMemory(byteCount: size.pixelCount * 4) : .encodingFailed(format: .gif, reason: reason)
        }
        return Data(bytesNoCopy: output, count: count, deallocator: .custom { pointer, _ in cgif_encode_free(pointer) })
    }

    /// `milliseconds` in GIF's hundredths of a second, rounded, at most 65535.
    static func centiseconds(milliseconds: Int) -> UInt32 {
        UInt32(min((milliseconds + 5) / 10, 65535))
    }

    /// Calls `body` with a descriptor of every frame, their pixels held alive during the call.
    private static func withFrames<Result>(_ images: [Image], delays: [UInt32],
                                           _ body: (UnsafeBufferPointer<CGIFEncodeFrame>) -> Result) -> Result {
        func nest(_ index: Int, _ descriptors: inout [CGIFEncodeFrame]) -> Result {
            guard index < images.count else { return descriptors.withUnsafeBufferPointer(body) }
            return images[index].withUnsafePixels { pixels in
                descriptors.append(CGIFEncodeFrame(rgba: pixels.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                   bytes_per_row: images[index].bytesPerRow, delay_centiseconds: delays[index]))
                return nest(index + 1, &descriptors)
            }
        }
        var descriptors: [CGIFEncodeFrame] = []
        descriptors.reserveCapacity(images.count)
        return nest(0, &descriptors)
    }
}
