import Foundation
import Synchronization
import Testing
@testable import WebImage
import WebImageWebP

/// Encoded variants: cold once for all callers, warm without decoding or encoding, keys and ETags
/// that follow the parameters, animation, orientation and metadata.
@Suite struct ManagerVariantTests: ManagerServerSuite {
    let server: TestHTTPServer
    let picture: Data
    static let coders = CoderRegistry(coders: [PNGCoder(), JPEGCoder(), GIFCoder(), WebPCoder()])

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture(width: 200, height: 100, as: .jpeg)
    }

    var thumbnail: WebImageContext {
        WebImageContext(thumbnailPixelSize: PixelSize(width: 64, height: 64))
    }

    @Test func aWarmVariantIsServedWithoutDecodingOrEncodingFromMemoryThenFromDisk() async throws {
        serve("/photo.jpg", headers: [("Content-Type", "image/jpeg")])
        let fixture = ManagerFixture(coders: Self.coders)
        let url = server.url("/photo.jpg")
        let cold = try await fixture.manager.loadVariant(url: url, format: .exactly(.webp), options: .waitStoreCache, context: thumbnail)
        #expect(cold.cacheType == .none && cold.format == .webp && cold.mimeType == "image/webp")
        #expect(cold.pixelSize == PixelSize(width: 64, height: 32))
        #expect(ImageFormat(sniffing: cold.data) == .webp)
        let afterCold = fixture.manager.statistics
        #expect(afterCold.encodes == 1 && afterCold.decodes == 1 && afterCold.downloads == 1)

        let fromMemory = try await fixture.manager.loadVariant(url: url, format: .exactly(.webp), context: thumbnail)
        #expect(fromMemory.cacheType == .memory && fromMemory.data == cold.data && fromMemory.entityTag == cold.entityTag)

        // A new manager over the same directory: another process, as far as the caches can tell.
        let cache = ImageCache(directory: fixture.directory.url, config: ImageCacheConfig(diskSweepInterval: nil))
        let second = WebImageManager(cache: cache, loader: LoadersManager(loaders: [Downloader(), FileLoader()]), coders: Self.coders)
        let fromDisk = try await second.loadVariant(url: url, format: .exactly(.webp), context: thumbnail)
        #expect(fromDisk.cacheType == .disk && fromDisk.data == cold.data && fromDisk.pixelSize == cold.pixelSize)
        #expect(fromDisk.entityTag == cold.entityTag, "the ETag is the same in every process")
        let warm = second.statistics
        #expect(warm.decodes == 0 && warm.encodes == 0 && warm.downloads == 0 && warm.variantDiskHits == 1)
        #expect(cache.statistics.diskHits == 0, "no image was decoded from disk")
        #expect(fixture.manager.statistics.decodes == 1 && fixture.manager.statistics.encodes == 1)
        #expect(server.requestCount(for: "/photo.jpg") == 1)
    }

    /// A server's admission: a new variant goes to disk only; asked again, it comes from disk and
    /// enters memory; the third time it is a memory hit. A variant kept in memory only is admitted at once.
    @Test func variantsAdmittedWhenReusedEnterMemoryOnTheirSecondRequest() async throws {
        serve("/photo.jpg", headers: [("Content-Type", "image/jpeg")])
        let fixture = ManagerFixture(config: WebImageManagerConfig(variantMemoryAdmission: .whenReused), coders: Self.coders)
        let url = server.url("/photo.jpg")
        let cold = try await fixture.manager.loadVariant(url: url, format: .exactly(.png), options: .waitStoreCache, context: thumbnail)
        #expect(cold.cacheType == .none)
        let second = try await fixture.manager.loadVariant(url: url, format: .exactly(.png), context: thumbnail)
        #expect(second.cacheType == .disk && second.data == cold.data)
        let third = try await fixture.manager.loadVariant(url: url, format: .exactly(.png), context: thumbnail)
        #expect(third.cacheType == .memory && third.data == cold.data)
        #expect(fixture.manager.statistics.encodes == 1)

        let memoryOnly = try await fixture.manager.loadVariant(url: url, format: .exactly(.jpeg), options: .cacheMemoryOnly, context: thumbnail)
        #expect(memoryOnly.cacheType == .none)
        let again = try await fixture.manager.loadVariant(url: url, format: .exactly(.jpeg), options: .cacheMemoryOnly, context: thumbnail)
        #expect(again.cacheType == .memory, "with no disk copy, a variant is kept in memory at once")
    }

    @Test func concurrentCallersOfOneVariantShareOneEncodeAndFormatsShareOneDownload() async throws {
        server.route("/slow.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: picture, delayBeforeHeaders: .milliseconds(200)))
        let fixture = ManagerFixture(coders: Self.coders)
        let url = server.url("/slow.jpg")
        let context = thumbnail
        let variants = try await withThrowingTaskGroup(of: ImageVariant.self) { group in
            for index in 0..<12 {
                let format: ImageFormat = [.jpeg, .png, .webp][index % 3]
                group.addTask { try await fixture.manager.loadVariant(url: url, format: .exactly(format), context: context) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(variants.map(\.format)) == [.jpeg, .png, .webp])
        for format in [ImageFormat.jpeg, .png, .webp] {
            #expect(Set(variants.filter { $0.format == format }.map(\.entityTag)).count == 1, "one encode per variant")
        }
        let statistics = fixture.manager.statistics
        #expect(statistics.encodes == 3, "one encode per format for twelve callers")
        #expect(statistics.downloads == 1, "one download for every format: \(statistics)")
        #expect(server.requestCount(for: "/slow.jpg") == 1)
    }

    @Test func theKeyAndTheETagFollowTheParameters() async throws {
        serve("/p.jpg", headers: [("Content-Type", "image/jpeg")])
        server.route("/other.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: try encodedPicture(width: 200, height: 100, seed: 9, as: .jpeg)))
        let fixture = ManagerFixture(coders: Self.coders)
        let url = server.url("/p.jpg")
        let high = try await fixture.manager.loadVariant(url: url, format: .exactly(.jpeg), encoding: EncodeOptions(compressionQuality: 0.9), context: thumbnail)
        let low = try await fixture.manager.loadVariant(url: url, format: .exactly(.jpeg), encoding: EncodeOptions(compressionQuality: 0.3), context: thumbnail)
        let again = try await fixture.manager.loadVariant(url: url, format: .exactly(.jpeg), encoding: EncodeOptions(compressionQuality: 0.9), context: thumbnail)
        let other = try await fixture.manager.loadVariant(url: server.url("/other.jpg"), format: .exactly(.jpeg), encoding: EncodeOptions(compressionQuality: 0.9), context: thumbnail)
        #expect(high.entityTag != low.entityTag && high.data.count > low.data.count)
        #expect(again.cacheType == .memory && again.entityTag == high.entityTag)
        #expect(other.entityTag != high.entityTag, "another source, another tag")
        #expect(fixture.manager.statistics.encodes == 3)
        let key = try #require(fixture.manager.variantCacheKey(for: url, format: .exactly(.jpeg), encoding: EncodeOptions(compressionQuality: 0.3),
                                                                context: thumbnail))
        #expect(key.hasSuffix("-Variant(jpeg,q30,bg255.255.255,z3).jpg"))
        await fixture.manager.backgroundWrites.waitUntilIdle()
        #expect(await fixture.cache.diskImageExists(forKey: key), "the variant is stored under its key")
        await fixture.cache.removeImage(forKey: key, cacheType: .all)
        #expect(await fixture.cache.diskImageExists(forKey: key) == false)
    }

    @Test func theAutomaticChoiceIsPartOfTheKey() async throws {
        serve("/auto.jpg", headers: [("Content-Type", "image/jpeg")])
        let fixture = ManagerFixture(coders: Self.coders)
        let url = server.url("/auto.jpg")
        let modern = try await fixture.manager.loadVariant(url: url, format: .automatic(accept: "image/webp,*/*"), context: thumbnail)
        let old = try await fixture.manager.loadVariant(url: url, format: .automatic(accept: "*/*"), context: thumbnail)
        let oldAgain = try await fixture.manager.loadVariant(url: url, format: .automatic(accept: nil), context: thumbnail)
        #expect(modern.format == .webp && old.format == .jpeg)
        #expect(oldAgain.cacheType == .memory && oldAgain.data == old.data, "no header and */* choose the same stored variant")
    }

    @Test func animationsStayAnimatedWhereTheFormatCanAnimate() async throws {
        let frames = try (0..<3).map { index in
            let shade = UInt8(index * 80)
            return ImageFrame(image: try Image(width: 8, height: 8, pixelFormat: .rgba8, pixels: Array([[UInt8]](repeating: [shade, shade, shade, 255], count: 64).joined())),
                              duration: .milliseconds(100))
        }
        let animation = try Image(frames: frames, loopCount: 0)
        serve("/anim.gif", try CoderRegistry.shared.encode(animation, as: .gif), headers: [("Content-Type", "image/gif")])
        let fixture = ManagerFixture(coders: Self.coders)
        let url = server.url("/anim.gif")
        let context = WebImageContext()
        let gif = try await fixture.manager.loadVariant(url: url, context: context)
        #expect(gif.format == .gif, "an animation's family is GIF")
        #expect(try Self.coders.decode(gif.data).frames.count == 3)
        let webp = try await fixture.manager.loadVariant(url: url, format: .exactly(.webp), context: context)
        #expect(try Self.coders.decode(webp.data).frames.count == 3)
        let jpeg = try await fixture.manager.loadVariant(url: url, format: .exactly(.jpeg), context: context)
        #expect(try Self.coders.decode(jpeg.data).frames.count == 1)
    }

    @Test(arguments: ["jpeg/valid/exif-orientation-examples/Landscape_6.jpg", "jpeg/valid/pillow/empty_gps_ifd.jpg"])
    func outputsAreUprightAndCarryNoMetadata(_ path: String) async throws {
        let source = try Data(contentsOf: Corpus.root.appendingPathComponent(path))
        server.route("/meta.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: source))
        let fixture = ManagerFixture(coders: Self.coders)
        // Fitted into 128 px (decoded small through DCT scaling): the encodes stay cheap for the suite.
        let fitted = try CoderRegistry.shared.decode(source, options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 128, height: 128)))
        #expect(fitted.width >= fitted.height, "both sources are landscape or square once upright")
        let context = WebImageContext(thumbnailPixelSize: PixelSize(width: 128, height: 128))
        for format in [ImageFormat.jpeg, .png, .webp] {
            let variant = try await fixture.manager.loadVariant(url: server.url("/meta.jpg"), format: .exactly(format), context: context)
            #expect(variant.pixelSize == fitted.size, "upright: the decoder applied the orientation")
            for marker in ["Exif", "eXIf", "EXIF", "XMP", "http://ns.adobe.com/xap", "iCCP", "ICC_PROFILE"] {
                #expect(variant.data.range(of: Data(marker.utf8)) == nil, "\(format) output of \(path) carries \(marker)")
            }
        }
    }

    @Test func everyCallIsReportedWithItsTierSizeAndEncodeTime() async throws {
        serve("/r.jpg", headers: [("Content-Type", "image/jpeg")])
        let fixture = ManagerFixture(coders: Self.coders)
        let observer = RecordingObserver()
        fixture.manager.observer = observer
        let url = server.url("/r.jpg")
        let cold = try await fixture.manager.loadVariant(url: url, format: .exactly(.png), context: thumbnail)
        let warm = try await fixture.manager.loadVariant(url: url, format: .exactly(.png), context: thumbnail)
        await #expect(throws: WebImageError.notInCache(url: url)) {
            try await fixture.manager.loadVariant(url: url, format: .exactly(.webp), options: .fromCacheOnly, context: thumbnail)
        }
        let reports = observer.variants
        try #require(reports.count == 3)
        let key = fixture.manager.variantCacheKey(for: url, format: .exactly(.png), context: thumbnail)
        #expect(reports[0].cacheType == .none && reports[0].encodeDuration != nil && reports[0].byteCount == cold.data.count)
        #expect(reports[0].format == .png && reports[0].variantKey == key && reports[0].error == nil && !reports[0].joinedEncodeUnderWay)
        #expect(reports[1].cacheType == .memory && reports[1].encodeDuration == nil && reports[1].byteCount == warm.data.count)
        #expect(reports[2].error == .notInCache(url: url) && reports[2].format == nil && reports[2].byteCount == 0)
        #expect(reports.allSatisfy { $0.totalDuration >= .zero && $0.url == url })
        #expect(observer.loads.count == 1, "the cold call's image load is reported as a load of its own")
    }

    @Test func aFormatNoCoderWritesIsATypedError() async throws {
        serve("/x.jpg", headers: [("Content-Type", "image/jpeg")])
        let fixture = ManagerFixture(coders: Self.coders)
        let url = server.url("/x.jpg")
        await #expect(throws: WebImageError.encodingFailed(.unsupportedEncoding(format: .tiff, pixelFormat: .rgb8), url: url)) {
            try await fixture.manager.loadVariant(url: url, format: .exactly(.tiff), context: thumbnail)
        }
        await fixture.manager.shutdown()
        await #expect(throws: WebImageError.shutDown(url: url)) { try await fixture.manager.loadVariant(url: url, context: thumbnail) }
    }
}

extension ManagerVariantTests {
    /// WebP encoding that takes 300 ms: a shutdown that did not wait for variant encodes would return
    /// before this one's disk write starts.
    struct SlowWebPEncoder: ImageCoder {
        func canDecode(_ data: Data) -> Bool { false }
        func decode(_ data: Data, options: DecodeOptions) throws -> Image { throw ImageCodingError.unsupportedFormat(.webp) }
        func canEncode(_ format: ImageFormat) -> Bool { format == .webp }
        func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws -> Data {
            usleep(300_000)
            return try WebPCoder().encode(image, as: format, options: options)
        }
    }

    @Test func aShutdownWaitsForAVariantUnderWayAndItsDiskWrite() async throws {
        serve("/late.jpg", headers: [("Content-Type", "image/jpeg")])
        let fixture = ManagerFixture(coders: CoderRegistry(coders: [PNGCoder(), JPEGCoder(), GIFCoder(), SlowWebPEncoder()]))
        let url = server.url("/late.jpg")
        let context = thumbnail
        let variant = Task { try await fixture.manager.loadVariant(url: url, format: .exactly(.webp), context: context) }
        try await waitUntil { fixture.manager.statistics.decodes == 1 }   // the image is in; the encode is under way
        await fixture.manager.shutdown()
        let key = try #require(fixture.manager.variantCacheKey(for: url, format: .exactly(.webp), context: context))
        let stored = try await fixture.cache.cachedData(forKey: key)
        let encoded = try await variant.value
        #expect(stored?.data == encoded.data, "the variant's background write finished before shutdown returned")
        #expect(stored?.metadata?.entityTag == encoded.entityTag)
    }

    /// Runs its jobs on a serial queue of its own, which a job can recognize itself on.
    final class QueueExecutor: TaskExecutor, Sendable {
        static let marker = DispatchSpecificKey<Bool>()
        let queue = DispatchQueue(label: "wi.test-work")
        init() { queue.setSpecific(key: Self.marker, value: true) }
        func enqueue(_ job: UnownedJob) {
            queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
        static var isCurrent: Bool { DispatchQueue.getSpecific(key: marker) == true }
    }

    /// An ``ImageCache`` that notes, for each variant it stores, whether the store ran on a
    /// ``QueueExecutor``.
    final class WriteRecorder: ImageCaching, Sendable {
        let base: ImageCache
        let onExecutor = Mutex<[Bool]>([])
        let keys = Mutex<[String]>([])
        init(base: ImageCache) { self.base = base }
        func query(forKey key: String, query: ImageCacheQuery) async throws -> ImageCacheResult? { try await base.query(forKey: key, query: query) }
        func store(_ image: Image, data: Data?, forKey key: String, cacheType: ImageCacheType, metadata: DiskCacheMetadata?) async throws {
            try await base.store(image, data: data, forKey: key, cacheType: cacheType, metadata: metadata)
        }
        func storeData(_ data: Data, forKey key: String, metadata: DiskCacheMetadata?) async throws {
            onExecutor.withLock { $0.append(QueueExecutor.isCurrent) }
            keys.withLock { $0.append(key) }
            try await base.storeData(data, forKey: key, metadata: metadata)
        }
        func cachedData(forKey key: String) async throws -> CachedData? { try await base.cachedData(forKey: key) }
        func removeImage(forKey key: String, cacheType: ImageCacheType) async { await base.removeImage(forKey: key, cacheType: cacheType) }
        func containsImage(forKey key: String, cacheType: ImageCacheType) async -> ImageCacheType { await base.containsImage(forKey: key, cacheType: cacheType) }
        func clear(_ cacheType: ImageCacheType) async { await base.clear(cacheType) }
    }

    /// The disk writes a load does not wait for (the original's, the new variant's) run on the
    /// context's work executor (a server's cold threads: the CPU the encode just left, not a
    /// cooperative-pool thread woken wherever it last ran), and land.
    @Test func backgroundWritesRunOnTheWorkExecutor() async throws {
        serve("/photo.jpg", headers: [("Content-Type", "image/jpeg")])
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let recorder = WriteRecorder(base: ImageCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil)))
        let manager = WebImageManager(cache: recorder, loader: LoadersManager(loaders: [Downloader(), FileLoader()]), coders: Self.coders)
        var context = thumbnail
        context.workExecutor = QueueExecutor()
        let cold = try await manager.loadVariant(url: server.url("/photo.jpg"), format: .exactly(.png), context: context)
        #expect(cold.cacheType == .none)
        await manager.backgroundWrites.waitUntilIdle()
        #expect(recorder.onExecutor.withLock { $0 } == [true, true], "the original's write, then the variant's")
        let variantKey = try #require(recorder.keys.withLock { $0.last })
        #expect(try await recorder.base.cachedData(forKey: variantKey)?.data == cold.data)
    }
}

extension ManagerVariantTests {
    /// A prepared request carries one key for the memory lookup, the stored lookup and the load; a load that
    /// follows a stored miss does not read the stored bytes again, but still finds a variant made meanwhile in
    /// memory.
    @Test func aPreparedVariantIsKeyedOnceAndALoadAfterAStoredMissSkipsTheDisk() async throws {
        serve("/prepared.jpg", headers: [("Content-Type", "image/jpeg")])
        let fixture = ManagerFixture(coders: Self.coders)
        let url = server.url("/prepared.jpg")
        let prepared = fixture.manager.prepareVariant(url: url, format: .exactly(.webp), options: .waitStoreCache, context: thumbnail)
        #expect(prepared.key == fixture.manager.variantCacheKey(for: url, format: .exactly(.webp), context: thumbnail, options: .waitStoreCache))
        #expect(fixture.manager.memoryCachedVariant(prepared) == nil)
        #expect(await fixture.manager.cachedVariant(prepared) == nil)
        let made = try await fixture.manager.loadVariant(prepared, storedBytesChecked: true)
        #expect(made.cacheType == .none && made.format == .webp && fixture.manager.statistics.encodes == 1)
        #expect(fixture.manager.memoryCachedVariant(prepared)?.data == made.data, "kept in memory under the same key")
        let again = try await fixture.manager.loadVariant(prepared, storedBytesChecked: true)
        #expect(again.cacheType == .memory && fixture.manager.statistics.encodes == 1, "memory is looked at again")

        // Only on disk (another process made it): a load after a stored miss does not read it, a plain load does.
        let second = WebImageManager(cache: ImageCache(directory: fixture.directory.url, config: ImageCacheConfig(diskSweepInterval: nil)),
                                     loader: LoadersManager(loaders: [Downloader(), FileLoader()]), coders: Self.coders)
        let other = second.prepareVariant(url: url, format: .exactly(.webp), context: thumbnail)
        _ = try await second.loadVariant(other, storedBytesChecked: true)
        #expect(second.statistics.variantDiskHits == 0 && second.statistics.encodes == 1, "the stored bytes were not read again")
        let third = WebImageManager(cache: ImageCache(directory: fixture.directory.url, config: ImageCacheConfig(diskSweepInterval: nil)),
                                    loader: LoadersManager(loaders: [Downloader(), FileLoader()]), coders: Self.coders)
        let stored = try await third.loadVariant(third.prepareVariant(url: url, format: .exactly(.webp), context: thumbnail))
        #expect(stored.cacheType == .disk && third.statistics.variantDiskHits == 1 && third.statistics.encodes == 0)
    }
}
