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

    @Test func aThumbnailSizedBufferIsReusedWithItsPagesMapped() throws {
        let pool = PixelBufferPool()
        let size = 512 * 340 * 3
        let first = try #require(pool.allocate(capacity: size))
        UnsafeMutableRawBufferPointer(start: first.pointer, count: size).initializeMemory(as: UInt8.self, repeating: 7)
        pool.recycle(first.pointer, capacity: first.capacity)
        #expect(pool.pooledBytes == first.capacity, "freed, it stays mapped in the pool")
        let second = try #require(pool.allocate(capacity: size))
        #expect(second.pointer == first.pointer)
        // The same pages, as they were written: not a fresh (zeroed) mapping at the same address.
        #expect(UnsafeRawBufferPointer(start: second.pointer, count: size).allSatisfy { $0 == 7 })
        pool.recycle(second.pointer, capacity: second.capacity)
        pool.drain()
    }

    @Test func midSizedBuffersHaveTheirOwnLimitAndNeverDisplaceLargeOnes() throws {
        let pool = PixelBufferPool()
        let large = try (0..<pool.maxLargeEntries).map { _ in try #require(pool.allocate(capacity: 4 << 20)) }
        for buffer in large { pool.recycle(buffer.pointer, capacity: buffer.capacity) }
        let mid = try (0..<(pool.maxMidEntries + 3)).map { _ in try #require(pool.allocate(capacity: 256 << 10)) }
        for buffer in mid { pool.recycle(buffer.pointer, capacity: buffer.capacity) }
        #expect(pool.pooledBytes == pool.maxLargeEntries * (4 << 20) + pool.maxMidEntries * (256 << 10))
        // The large ones are all still there: as many 4 MB requests are answered from the pool.
        let again = try (0..<pool.maxLargeEntries).map { _ in try #require(pool.allocate(capacity: 4 << 20)) }
        #expect(Set(again.map(\.pointer)) == Set(large.map(\.pointer)))
        for buffer in again { pool.recycle(buffer.pointer, capacity: buffer.capacity) }
        pool.drain()
        #expect(pool.pooledBytes == 0)
    }

    @Test func smallBuffersAreNotPooled() throws {
        let pool = PixelBufferPool()
        let small = try #require(pool.allocate(capacity: 1000))
        pool.recycle(small.pointer, capacity: small.capacity)
        #expect(pool.pooledBytes == 0)
    }

    @Test(arguments: [PixelBufferPool.minMappedCapacity, 512 << 10, PixelBufferPool.largeCapacity + 1])
    func mappedBuffersAreZeroedWritableAndGoBackWhole(size: Int) throws {
        let pool = PixelBufferPool()
        for _ in 0..<3 {
            let fresh = pool.pooledBytes == 0
            let buffer = try #require(pool.allocate(capacity: size))
            #expect(buffer.capacity >= size)
            let bytes = UnsafeMutableRawBufferPointer(start: buffer.pointer, count: size)
            if fresh { #expect(bytes.allSatisfy { $0 == 0 }) }   // new pages, not a reused buffer
            bytes.initializeMemory(as: UInt8.self, repeating: 0xAB)
            #expect(bytes[size - 1] == 0xAB)
            pool.recycle(buffer.pointer, capacity: buffer.capacity)
        }
        // Every mapped buffer is held for the next decode of a similar size (the same one each time).
        #expect(pool.pooledBytes == size)
        pool.drain()
        #expect(pool.pooledBytes == 0)
    }
}
