import Testing
@testable import WebImage

@Suite struct ImageOrientationTests {
    /// A 3×2 image whose pixels are their own indices, so every move is visible.
    func labelled(_ orientation: ImageOrientation) throws -> Image {
        try Image(width: 3, height: 2, pixelFormat: .gray8, pixels: [0, 1, 2, 3, 4, 5], orientation: orientation)
    }

    /// The obviously correct model: where each displayed pixel comes from, written out by hand for
    /// the 3×2 image  0 1 2 / 3 4 5.
    let expected: [ImageOrientation: (width: Int, pixels: [UInt8])] = [
        .up: (3, [0, 1, 2, 3, 4, 5]),
        .upMirrored: (3, [2, 1, 0, 5, 4, 3]),
        .down: (3, [5, 4, 3, 2, 1, 0]),
        .downMirrored: (3, [3, 4, 5, 0, 1, 2]),
        .leftMirrored: (2, [0, 3, 1, 4, 2, 5]),
        .right: (2, [3, 0, 4, 1, 5, 2]),
        .rightMirrored: (2, [5, 2, 4, 1, 3, 0]),
        .left: (2, [2, 5, 1, 4, 0, 3]),
    ]

    @Test(arguments: ImageOrientation.allCases)
    func orientingMovesPixelsAsTheEXIFTagSays(orientation: ImageOrientation) throws {
        let upright = try labelled(orientation).oriented()
        #expect(upright.orientation == .up)
        #expect(upright.width == expected[orientation]!.width)
        #expect(upright.height == 6 / upright.width)
        #expect(Array(upright.pixels) == expected[orientation]!.pixels)
    }

    @Test func orientingMovesWholePixelsOfWiderFormats() throws {
        let image = try Image(width: 2, height: 1, pixelFormat: .rgba8, pixels: [1, 2, 3, 4, 5, 6, 7, 8], orientation: .right)
        let upright = try image.oriented()
        #expect(upright.width == 1 && upright.height == 2)
        #expect(Array(upright.pixels) == [1, 2, 3, 4, 5, 6, 7, 8])
        let mirrored = try Image(width: 2, height: 1, pixelFormat: .rgb8, pixels: [1, 2, 3, 4, 5, 6], orientation: .upMirrored)
        #expect(Array(try mirrored.oriented().pixels) == [4, 5, 6, 1, 2, 3])
    }

    @Test func exifValuesOutsideOneToEightMeanUp() {
        #expect(ImageOrientation(exifValue: 0) == .up)
        #expect(ImageOrientation(exifValue: 9) == .up)
        #expect(ImageOrientation(exifValue: 6) == .right)
        #expect(ImageOrientation.allCases.filter(\.swapsDimensions).map(\.rawValue) == [5, 6, 7, 8])
    }
}
