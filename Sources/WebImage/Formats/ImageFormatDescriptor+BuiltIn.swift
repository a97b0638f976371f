extension ImageFormatDescriptor {
    /// Every format WebImage recognises, in the order their detectors are asked: the binary formats by
    /// their magic numbers, SVG (a text test) last. Qualities, efforts and the `Accept` order are
    /// imgproxy 4's (`processing/config.go`, `vips/config.go`, `determineOutputFormat`).
    public static let builtIn: [ImageFormatDescriptor] = [
        ImageFormatDescriptor(
            // APNG is read, and written when PNG is named, but PNG is not picked to hold an animation (imgproxy's rule).
            format: .png, mimeType: "image/png", traits: [.alpha, .animationLoad, .colorProfile, .highBitDepth],
            savedBitDepths: [8, 16], metadataContainer: .pngChunks
        ) { ImageFormat.bytes($0, start: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) },
        ImageFormatDescriptor(
            format: .jpeg, names: ["jpeg", "jpg"], fileExtension: "jpg", mimeType: "image/jpeg",
            traits: [.colorProfile, .quality], defaultQuality: 80, metadataContainer: .jpegSegments
        ) { ImageFormat.bytes($0, start: [0xFF, 0xD8, 0xFF]) },
        ImageFormatDescriptor(format: .gif, mimeType: "image/gif", traits: [.alpha, .animationLoad, .animationSave]) {
            ImageFormat.bytes($0, holdASCII: "GIF87a") || ImageFormat.bytes($0, holdASCII: "GIF89a")
        },
        ImageFormatDescriptor(
            format: .webp, mimeType: "image/webp", traits: [.alpha, .animationLoad, .animationSave, .colorProfile, .quality],
            defaultQuality: 79, defaultEffort: 4, negotiationRank: 2, metadataContainer: .riffChunks
        ) { ImageFormat.bytes($0, holdASCII: "RIFF") && ImageFormat.bytes($0, holdASCII: "WEBP", at: 8) },
        ImageFormatDescriptor(
            format: .tiff, names: ["tiff", "tif"], mimeType: "image/tiff",
            traits: [.alpha, .colorProfile, .highBitDepth, .pages], savedBitDepths: [8, 16], metadataContainer: .tiffTags
        ) { head in
            // Classic TIFF (42) and BigTIFF (43), either byte order.
            ImageFormat.bytes(head, start: [0x49, 0x49, 0x2A, 0x00]) || ImageFormat.bytes(head, start: [0x4D, 0x4D, 0x00, 0x2A])
                || ImageFormat.bytes(head, start: [0x49, 0x49, 0x2B, 0x00]) || ImageFormat.bytes(head, start: [0x4D, 0x4D, 0x00, 0x2B])
        },
        ImageFormatDescriptor(format: .pdf, mimeType: "application/pdf") { ImageFormat.bytes($0, holdASCII: "%PDF-") },
        ImageFormatDescriptor(
            format: .avif, mimeType: "image/avif", traits: [.alpha, .animationLoad, .animationSave, .colorProfile, .quality, .highBitDepth],
            savedBitDepths: [8, 10, 12], defaultQuality: 63, defaultEffort: 9, negotiationRank: 1, metadataContainer: .isoBoxes
        ) { ImageFormat.isoBrandFormat(of: $0) == .avif },
        ImageFormatDescriptor(
            format: .heic, mimeType: "image/heic", traits: [.alpha, .colorProfile, .quality], defaultQuality: 80,
            metadataContainer: .isoBoxes
        ) { ImageFormat.isoBrandFormat(of: $0) == .heic },
        ImageFormatDescriptor(format: .heif, mimeType: "image/heif", traits: [.alpha, .colorProfile], metadataContainer: .isoBoxes) {
            ImageFormat.isoBrandFormat(of: $0) == .heif
        },
        ImageFormatDescriptor(
            format: .jxl, mimeType: "image/jxl",
            traits: [.alpha, .animationLoad, .animationSave, .colorProfile, .quality, .highBitDepth],
            savedBitDepths: [8, 16], defaultQuality: 77, defaultEffort: 4, negotiationRank: 0, metadataContainer: .jxlBoxes
        ) { head in
            // A bare codestream (FF 0A) or the ISO-BMFF-style container's signature box.
            ImageFormat.bytes(head, start: [0xFF, 0x0A])
                || ImageFormat.bytes(head, start: [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A])
        },
        ImageFormatDescriptor(format: .bmp, mimeType: "image/bmp", traits: [.alpha]) { head in
            ImageFormat.bytes(head, holdASCII: "BM") && head.count >= 14
        },
        ImageFormatDescriptor(format: .ico, names: ["ico", "cur"], mimeType: "image/x-icon", traits: [.alpha]) { b in
            // ICO and CUR: reserved 0, type 1 or 2, then a non-zero image count.
            b.count >= 6 && b[0] == 0 && b[1] == 0 && (b[2] == 1 || b[2] == 2) && b[3] == 0 && (b[4] != 0 || b[5] != 0)
        },
        ImageFormatDescriptor(format: .svg, mimeType: "image/svg+xml", traits: [.alpha, .vector]) { ImageFormat.looksLikeSVG($0) },
    ]
}
