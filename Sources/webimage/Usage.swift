/// The help text of the `webimage` tool.
enum Usage {
    static let text = """
    usage: webimage                     decode the sample images shipped with the package, print a table
                                        and write a PNG thumbnail of each into ./webimage-samples/
           webimage decode [--checksum] [--orient] [--thumbnail N] [--out DIR] [--format png|jpeg] FILE...
                                        one tab-separated line per file:
                                        path, format, width, height, pixel format[, sha256 of RGBA pixels]
                                        a file that fails prints: path, error, message (exit code 1)
      --checksum      add the sha256 of the pixels as 8-bit straight-alpha RGBA (the corpus manifest's definition)
      --orient        apply the EXIF orientation before reporting and hashing (default: stored pixels)
      --thumbnail N   decode to fit inside N x N pixels (aspect ratio kept, never enlarged)
      --out DIR       write each decoded image into DIR as <name>.png (or .jpg with --format jpeg)
      --format F      the format --out writes: png (default) or jpeg

           webimage cache stats DIR              entries and bytes of a disk cache directory
           webimage cache sweep DIR [--max-age SECONDS] [--max-size BYTES]
                                                 remove expired entries, then least recently used ones
                                                 down to half of --max-size; print the report
           webimage cache fill DIR [--count N] [--size PIXELS]
                                                 store N generated PNG images (keys fill-0.png ...)

    """
}
