import Foundation

/// The memory behind an ``Image``'s pixels: one allocation, returned to the buffer pool when the
/// last image using it goes away.
///
/// `@unchecked Sendable` is safe because of how it is used: only the decoder or transformer that
/// allocated a storage writes to it, and only before handing it to an `Image` (which publishes it to
/// other threads); from then on every access is a read.
final class PixelStorage: @unchecked Sendable {
    let bytes: UnsafeMutableRawPointer
    let capacity: Int

    /// Allocates at least `byteCount` bytes (contents undefined).
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)`` if the allocation fails.
    init(byteCount: Int) throws(ImageCodingError) {
        guard byteCount >= 0, let (pointer, capacity) = PixelBufferPool.shared.allocate(capacity: byteCount) else {
            throw .insufficientMemory(byteCount: byteCount)
        }
        self.bytes = pointer
        self.capacity = capacity
    }

    deinit {
        PixelBufferPool.shared.recycle(bytes, capacity: capacity)
    }
}
