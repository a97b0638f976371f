#pragma once
#include <stddef.h>

/// Decodes a JPEG into `out` (caller-owned, reused across calls) as RGB (or gray for gray files),
/// with libjpeg's defaults (ISLOW DCT, fancy upsampling), at 1/scale_denom size.
/// Returns 0 on success and writes the output size; -1 if the buffer is too small or on error.
int baseline_decode_jpeg(const unsigned char *data, size_t size, int scale_denom,
                         unsigned char *out, size_t out_capacity, int *width, int *height);

/// Decodes a PNG into `out` (caller-owned, reused) with the transforms WebImage uses: palette and
/// low-bit gray expanded, tRNS to alpha, 16-bit stripped to the high byte.
int baseline_decode_png(const unsigned char *data, size_t size,
                        unsigned char *out, size_t out_capacity, int *width, int *height, int *channels);

/// Decodes a still WebP into `out` (reused) as RGBA when it has alpha, else RGB (WebPDecode*Into).
int baseline_decode_webp(const unsigned char *data, size_t size, unsigned char *out, size_t out_capacity,
                         int *width, int *height);

/// Decodes every frame of a GIF with giflib row by row (DGifGetLine), compositing onto an RGBA canvas
/// (transparency, disposal 2 clears the frame's rectangle) and copying the canvas into a malloc'd buffer of
/// its own after each frame (its pointer kept in `frames`, `frames_capacity` bytes of pointers), as a
/// decoder that returns every frame must; they are freed before returning. Returns the frame count, or -1
/// on error or when `frames` is too small.
int baseline_decode_gif(const unsigned char *data, size_t size, unsigned char *frames, size_t frames_capacity);

/// Decodes the primary image of an AVIF with libavif (one thread, bilinear chroma) into `out` as RGBA.
int baseline_decode_avif(const unsigned char *data, size_t size, unsigned char *out, size_t out_capacity,
                         int *width, int *height);

/// Decodes every strip of a contiguous TIFF's first page with libtiff (TIFFReadEncodedStrip: the stored
/// samples, tiff2rgba's decode without its RGBA conversion) into `out`, back to back. Returns 0, or -1.
int baseline_decode_tiff(const unsigned char *data, size_t size, unsigned char *out, size_t out_capacity, int *width, int *height);

/// Decodes the first frame of a JPEG XL with libjxl (no parallel runner, as WebImage; djxl's decode) into
/// `out` as 8-bit RGBA. Returns 0, or -1.
int baseline_decode_jxl(const unsigned char *data, size_t size, unsigned char *out, size_t out_capacity, int *width, int *height);

/// Encodes RGB rows as lossy WebP at `quality` (0–100) with `method`, as cwebp does; returns the size or 0.
size_t baseline_encode_webp(const unsigned char *rgb, int width, int height, int stride, float quality, int method);

/// Encodes RGB rows as AVIF (4:2:0, full range, one thread) at `speed` and `quantizer`; returns the size or 0.
size_t baseline_encode_avif(const unsigned char *rgb, int width, int height, int stride, int speed, int quantizer);
