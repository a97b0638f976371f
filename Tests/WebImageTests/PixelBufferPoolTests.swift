import Testing
@testable import WebImage

@Suite struct PixelBufferPoolTests {
    @Test func reusesALargeFreedBufferForASimilarSize() throws {
        let pool = PixelBufferPool()
        let size = 8 << 20
        let first = try #require(pool.allocate(capacity: size))
        pool.recycle(first.pointer, capacity: first.capacity)
        #expect(pool.pooledBytes == size)
        let second = try #require(pool.allocate(capacity: size - 1000))
        #expect(second.pointer == first.pointer)
        #expect(pool.pooledBytes == 0)
        pool.recycle(second.pointer, capacity: second.capacity)
        pool.drain()
        #expect(pool.pooledBytes == 0)
    }

    @Test func doesNotHandOutABufferMoreThanTwiceTheRequest() throws {
        let pool = PixelBufferPool()
        let big = try #require(pool.allocate(capacity: 40 << 20))
        pool.recycle(big.pointer, capacity: big.capacity)
        let small = try #require(pool.allocate(capacity: 5 << 20))
        #expect(small.pointer != big.pointer)
        pool.recycle(small.pointer, capacity: small.capacity)
        pool.drain()
    }

    @Test func holdsNoMoreThanItsLimits() throws {
        let pool = PixelBufferPool()
        let buffers = try (0..<5).map { _ in try #require(pool.allocate(capacity: 80 << 20)) }
        for buffer in buffers { pool.recycle(buffer.pointer, capacity: buffer.capacity) }
        #expect(pool.pooledBytes <= pool.maxPooledBytes)
        #expect(pool.pooledBytes == 160 << 20)
        pool.drain()
    }

    @Test func smallBuffersAreNotPooled() throws {
        let pool = PixelBufferPool()
        let small = try #require(pool.allocate(capacity: 1000))
        pool.recycle(small.pointer, capacity: small.capacity)
        #expect(pool.pooledBytes == 0)
    }
}
