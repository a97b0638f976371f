// swift-tools-version:6.0
// libFuzzer targets live in their own package so the library keeps zero dependencies.
// Run: Fuzz/run.sh TARGET SECONDS   (see Fuzz/README.md). The fuzzers only link with the sanitizer
// flags run.sh passes (-sanitize=fuzzer,address) and only in debug (for `@testable import WebImage`).
import PackageDescription

// Each fuzzer's main.swift defines `<Module>_main` itself (SwiftPM links the executable with
// `--defsym main=<Module>_main`) and hands control to libFuzzer's LLVMFuzzerRunDriver.
let fuzzerSettings: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

let package = Package(
    name: "WebImageFuzz",
    products: [
        .executable(name: "fuzz-sniff", targets: ["FuzzSniff"]),
        .executable(name: "fuzz-png", targets: ["FuzzPNG"]),
        .executable(name: "fuzz-jpeg", targets: ["FuzzJPEG"]),
        .executable(name: "fuzz-exif", targets: ["FuzzEXIF"]),
        .executable(name: "fuzz-filename", targets: ["FuzzFileName"]),
        .executable(name: "fuzz-gif", targets: ["FuzzGIF"]),
        .executable(name: "fuzz-webp", targets: ["FuzzWebP"]),
        .executable(name: "fuzz-avif", targets: ["FuzzAVIF"]),
        .executable(name: "fuzz-heif", targets: ["FuzzHEIF"]),
        .executable(name: "fuzz-request", targets: ["FuzzRequest"]),
        .executable(name: "fuzz-bmp", targets: ["FuzzBMP"]),
        .executable(name: "fuzz-tiff", targets: ["FuzzTIFF"]),
        .executable(name: "fuzz-jxl", targets: ["FuzzJXL"]),
        .executable(name: "fuzz-svg", targets: ["FuzzSVG"]),
    ],
    dependencies: [.package(name: "WebImage", path: "..")],
    targets: [
        // Declares LLVMFuzzerRunDriver (defined in libFuzzer's runtime, linked by -sanitize=fuzzer).
        .target(name: "CFuzzDriver"),
        .target(
            name: "FuzzSupport",
            dependencies: ["CFuzzDriver", .product(name: "WebImage", package: "WebImage")]
        ),
        .executableTarget(name: "FuzzSniff", dependencies: ["FuzzSupport"], swiftSettings: fuzzerSettings),
        .executableTarget(name: "FuzzPNG", dependencies: ["FuzzSupport"], swiftSettings: fuzzerSettings),
        .executableTarget(name: "FuzzJPEG", dependencies: ["FuzzSupport"], swiftSettings: fuzzerSettings),
        .executableTarget(name: "FuzzEXIF", dependencies: ["FuzzSupport"], swiftSettings: fuzzerSettings),
        .executableTarget(name: "FuzzFileName", dependencies: ["FuzzSupport"], swiftSettings: fuzzerSettings),
        .executableTarget(name: "FuzzGIF", dependencies: ["FuzzSupport"], swiftSettings: fuzzerSettings),
        .executableTarget(
            name: "FuzzWebP", dependencies: ["FuzzSupport", .product(name: "WebImageWebP", package: "WebImage")],
            swiftSettings: fuzzerSettings),
        .executableTarget(
            name: "FuzzAVIF", dependencies: ["FuzzSupport", .product(name: "WebImageAVIF", package: "WebImage")],
            swiftSettings: fuzzerSettings),
        .executableTarget(
            name: "FuzzHEIF", dependencies: ["FuzzSupport", .product(name: "WebImageHEIF", package: "WebImage")],
            swiftSettings: fuzzerSettings),
        .executableTarget(name: "FuzzBMP", dependencies: ["FuzzSupport"], swiftSettings: fuzzerSettings),
        .executableTarget(
            name: "FuzzTIFF", dependencies: ["FuzzSupport", .product(name: "WebImageTIFF", package: "WebImage")],
            swiftSettings: fuzzerSettings),
        .executableTarget(
            name: "FuzzJXL", dependencies: ["FuzzSupport", .product(name: "WebImageJXL", package: "WebImage")],
            swiftSettings: fuzzerSettings),
        .executableTarget(
            name: "FuzzSVG", dependencies: ["FuzzSupport", .product(name: "WebImageSVG", package: "WebImage")],
            swiftSettings: fuzzerSettings),
        .executableTarget(
            name: "FuzzRequest", dependencies: ["FuzzSupport", .product(name: "WebImageServer", package: "WebImage")],
            swiftSettings: fuzzerSettings),
    ],
    swiftLanguageModes: [.v6]
)
