// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "WebImage",
    products: [
        .library(name: "WebImage", targets: ["WebImage"]),
        .executable(name: "webimage", targets: ["webimage"]),
    ],
    targets: [
        // The system libraries, found through pkg-config.
        .systemLibrary(
            name: "CLibPNG",
            pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"])]
        ),
        .systemLibrary(
            name: "CLibJPEG",
            pkgConfig: "libjpeg",
            providers: [.apt(["libjpeg-dev"])]
        ),
        // C shims: all setjmp/longjmp error handling lives here, never in Swift.
        .target(name: "CPNG", dependencies: ["CLibPNG"]),
        .target(name: "CJPEG", dependencies: ["CLibJPEG"]),
        // POSIX calls the Glibc module does not import cleanly (xattrs, UTIME_OMIT, readdir + fstatat).
        .target(name: "CFileSystem"),
        .target(
            name: "WebImage",
            dependencies: ["CPNG", "CJPEG", "CFileSystem"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(name: "webimage", dependencies: ["WebImage"]),
        .testTarget(name: "WebImageTests", dependencies: ["WebImage", "webimage"]),
    ],
    swiftLanguageModes: [.v6]
)
