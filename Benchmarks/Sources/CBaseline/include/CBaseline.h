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
