// swift-tools-version:6.0
// Benchmarks live in their own package so the library keeps zero dependencies.
// Run: swift run -c release --package-path Benchmarks bench   (see Benchmarks/README.md)
import PackageDescription

let package = Package(
    name: "WebImageBenchmarks",
    dependencies: [.package(name: "WebImage", path: "..")],
    targets: [
        .systemLibrary(name: "BenchLibPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "BenchLibJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg-dev"])]),
        .systemLibrary(name: "BenchLibWebP", pkgConfig: "libwebp", providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(name: "BenchLibGIF", providers: [.apt(["libgif-dev"])]),
        .systemLibrary(name: "BenchLibAVIF", providers: [.apt(["libavif-dev"])]),
        .systemLibrary(name: "BenchLibTIFF", pkgConfig: "libtiff-4", providers: [.apt(["libtiff-dev"])]),
        .systemLibrary(name: "BenchLibJXL", providers: [.apt(["libjxl-dev"])]),
        // The reference: the same libraries called from a bare C loop, reusing one output buffer.
        .target(name: "CBaseline", dependencies: ["BenchLibPNG", "BenchLibJPEG", "BenchLibWebP", "BenchLibGIF", "BenchLibAVIF",
                                                  "BenchLibTIFF", "BenchLibJXL"]),
        // The Redis reference: a bare hiredis GET loop in C.
        .systemLibrary(name: "BenchHiredis", providers: [.apt(["libhiredis-dev"])]),
        .target(name: "CRedisBaseline", dependencies: ["BenchHiredis"]),
        .executableTarget(
            name: "bench",
            dependencies: [
                .product(name: "WebImage", package: "WebImage"), .product(name: "WebImageWebP", package: "WebImage"),
                .product(name: "WebImageAVIF", package: "WebImage"), .product(name: "WebImageRedis", package: "WebImage"),
                .product(name: "WebImageS3", package: "WebImage"), .product(name: "WebImageTIFF", package: "WebImage"),
                .product(name: "WebImageJXL", package: "WebImage"), .product(name: "WebImageSVG", package: "WebImage"),
                .product(name: "WebImageHEIF", package: "WebImage"),
                "CBaseline", "CRedisBaseline",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
