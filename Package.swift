// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "WebImage",
    products: [
        .library(name: "WebImage", targets: ["WebImage"]),
        .library(name: "WebImageWebP", targets: ["WebImageWebP"]),
        .library(name: "WebImageAVIF", targets: ["WebImageAVIF"]),
        .library(name: "WebImageHEIF", targets: ["WebImageHEIF"]),
        .library(name: "WebImageJXL", targets: ["WebImageJXL"]),
        .library(name: "WebImageTIFF", targets: ["WebImageTIFF"]),
        .library(name: "WebImageSVG", targets: ["WebImageSVG"]),
        .library(name: "WebImageServer", targets: ["WebImageServer"]),
        .library(name: "WebImageRedis", targets: ["WebImageRedis"]),
        .library(name: "WebImageS3", targets: ["WebImageS3"]),
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
        // giflib has no pkg-config file on Debian: linked by name.
        .systemLibrary(
            name: "CLibGIF",
            providers: [.apt(["libgif-dev"])]
        ),
        .systemLibrary(
            name: "CLibWebP",
            pkgConfig: "libwebpdemux",
            providers: [.apt(["libwebp-dev"])]
        ),
        // libavif's pkg-config file adds -DAVIF_DLL, a flag SwiftPM refuses: linked by name instead.
        .systemLibrary(
            name: "CLibAVIF",
            providers: [.apt(["libavif-dev"])]
        ),
        .systemLibrary(
            name: "CLibHEIF",
            pkgConfig: "libheif",
            providers: [.apt(["libheif-dev"])]
        ),
        // libjxl 0.7 (JPEG XL): linked by name (its pkg-config file adds -DHWY_SHARED_DEFINE, which SwiftPM refuses).
        .systemLibrary(
            name: "CLibJXL",
            providers: [.apt(["libjxl-dev"])]
        ),
        .systemLibrary(
            name: "CLibTIFF",
            pkgConfig: "libtiff-4",
            providers: [.apt(["libtiff-dev"])]
        ),
        // libxml2 and GLib: the SVG sanitiser's parser and tables (SVG is rendered by librsvg's rsvg-convert in a child process).
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CLibGLib", pkgConfig: "glib-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // Little CMS 2: embedded ICC profiles converted to sRGB (small; every Debian desktop has it).
        .systemLibrary(
            name: "CLibLCMS2",
            pkgConfig: "lcms2",
            providers: [.apt(["liblcms2-dev"])]
        ),
        // libcurl (with HTTP/2 and TLS through OpenSSL): the downloader's and the object store's HTTP client.
        .systemLibrary(
            name: "CLibCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // C shims: all setjmp/longjmp error handling lives here, never in Swift.
        .target(name: "CPNG", dependencies: ["CLibPNG", "CSystemTuning"], linkerSettings: [.linkedLibrary("deflate")]),
        .target(name: "CColor", dependencies: ["CLibLCMS2"], linkerSettings: [.linkedLibrary("z"), .linkedLibrary("deflate")]),
        .target(name: "CJPEG", dependencies: ["CLibJPEG", "CSystemTuning"]),
        .target(name: "CGIF", dependencies: ["CLibGIF"], linkerSettings: [.linkedLibrary("gif")]),
        .target(name: "CAVIF", dependencies: ["CLibAVIF"], linkerSettings: [.linkedLibrary("avif")]),
        .target(name: "CHEIF", dependencies: ["CLibHEIF"], linkerSettings: [.linkedLibrary("heif")]),
        .target(name: "CJXL", dependencies: ["CLibJXL"], linkerSettings: [.linkedLibrary("jxl")]),
        .target(name: "CTIFF", dependencies: ["CLibTIFF"], linkerSettings: [.linkedLibrary("tiff")]),
        .target(name: "CSVG", dependencies: ["CLibXML2", "CLibGLib"], linkerSettings: [.linkedLibrary("xml2"), .linkedLibrary("glib-2.0")]),
        .target(name: "CWebP", dependencies: ["CLibWebP", "CSystemTuning"], linkerSettings: [.linkedLibrary("webpdemux"), .linkedLibrary("webpmux"), .linkedLibrary("webp")]),
        // POSIX calls the Glibc module does not import cleanly (xattrs, UTIME_OMIT, readdir + fstatat).
        .target(name: "CFileSystem"),
        // libcurl's variadic setopt/getinfo behind plain functions Swift can call (CCurl.h says what libcurl does on bad input and on which thread).
        .target(name: "CCurl", dependencies: ["CLibCurl"]),
        // glibc's allocator settings (arenas, trimming) and per-thread nice values, real-time class and names, for the server (see MallocTuning.swift, ThreadPoolExecutor.swift, chttp.c).
        .target(name: "CSystemTuning"),
        .target(name: "CPixels", dependencies: ["CSystemTuning"]),
        .systemLibrary(name: "CLibMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .target(name: "CHTTPServer", dependencies: ["CLibMicroHTTPD", "CSystemTuning"]),
        // hiredis 0.14: its pkg-config file adds -D_FILE_OFFSET_BITS=64, a flag SwiftPM refuses: linked by name.
        .systemLibrary(name: "CLibHiredis", providers: [.apt(["libhiredis-dev"])]),
        .target(
            name: "WebImage",
            dependencies: ["CPNG", "CJPEG", "CGIF", "CColor", "CFileSystem", "CPixels", "CSystemTuning", "CCurl"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // WebP (libwebp, libwebpdemux, libwebpmux): a product of its own, so PNG/JPEG/GIF users install nothing more.
        .target(
            name: "WebImageWebP",
            dependencies: ["WebImage", "CWebP"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // AVIF (libavif 0.11): a product of its own.
        .target(
            name: "WebImageAVIF",
            dependencies: ["WebImage", "CAVIF"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // HEIF/HEIC (libheif 1.15 with libde265): a product of its own.
        .target(
            name: "WebImageHEIF",
            dependencies: ["WebImage", "CHEIF"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // JPEG XL (libjxl 0.7): a product of its own.
        .target(
            name: "WebImageJXL",
            dependencies: ["WebImage", "CJXL"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // TIFF (libtiff 4.5): a product of its own.
        .target(
            name: "WebImageTIFF",
            dependencies: ["WebImage", "CTIFF"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // SVG (sanitised with libxml2, rendered by rsvg-convert in a child process): a product of its own.
        .target(
            name: "WebImageSVG",
            dependencies: ["WebImage", "CSVG"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // `webimage serve`: an image server on GNU libmicrohttpd, a product of its own (the WebImage
        // library keeps its dependencies as they are).
        .target(
            name: "WebImageServer",
            dependencies: ["WebImage", "CHTTPServer", "CSystemTuning"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // A fleet's shared cache tier on Redis over hiredis, a product of its own.
        .target(
            name: "WebImageRedis",
            dependencies: ["WebImage", "CLibHiredis"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // Object storage (any S3-compatible store): s3:// sources and a durable shared tier, a product
        // of its own over Foundation's URLSession (AWS Signature Version 4 written here).
        .target(
            name: "WebImageS3",
            dependencies: ["WebImage"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(name: "webimage", dependencies: ["WebImage", "WebImageWebP", "WebImageAVIF", "WebImageHEIF", "WebImageJXL", "WebImageTIFF", "WebImageSVG", "WebImageServer",
                                                          "WebImageRedis", "WebImageS3", "CSystemTuning"]),
        .testTarget(name: "WebImageTests", dependencies: ["WebImage", "WebImageWebP", "WebImageAVIF", "WebImageHEIF", "WebImageJXL", "WebImageTIFF", "WebImageSVG", "WebImageServer",
                                                          "WebImageRedis", "WebImageS3", "webimage"],
                    exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
