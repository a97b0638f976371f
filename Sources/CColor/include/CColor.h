#ifndef WEBIMAGE_CCOLOR_H
#define WEBIMAGE_CCOLOR_H

#include <stddef.h>
#include <stdint.h>

/* Colour management over Little CMS 2 (lcms2), for converting decoded pixels to sRGB.
 *
 * What lcms2 does, from its manual and headers (2.14 here):
 * - cmsOpenProfileFromMem parses the profile and returns NULL for bytes that are not a valid ICC
 *   profile; it reports through the context's log error handler (silenced here) and never aborts.
 * - cmsCreateTransform returns NULL when the profiles cannot be linked (a CMYK profile for RGB
 *   pixels, a broken tag); profiles can be closed once the transform exists.
 * - cmsDoTransform may be called from several threads on one transform at once when the transform
 *   was created with cmsFLAGS_NOCACHE (the one-pixel cache is otherwise shared state); it never
 *   blocks and allocates nothing; input and output may be the same buffer when the formats match.
 * - Nothing here calls back into Swift. */

typedef struct ccolor_transform ccolor_transform;

/* A transform from the RGB ICC profile `profile` (size bytes) to sRGB for 8-bit RGB (channels 3) or
 * RGBA (channels 4, alpha copied) pixels, perceptual intent. NULL when the profile is not a usable
 * RGB profile. */
ccolor_transform *ccolor_transform_create(const void *profile, size_t size, int channels);

/* A transform from the CMYK ICC profile `profile` to sRGB, for Adobe-inverted 8-bit CMYK (as
 * libjpeg returns a CMYK or YCCK JPEG's samples) to 8-bit RGB, perceptual intent. NULL when the
 * profile is not a usable CMYK profile. */
ccolor_transform *ccolor_cmyk_transform_create(const void *profile, size_t size);

/* Converts `pixels` inverted-CMYK pixels to RGB with a ccolor_cmyk_transform_create transform
 * (passed as `context`, the shape of cjpeg's CMYK converter). */
void ccolor_convert_cmyk(void *context, const uint8_t *cmyk, uint8_t *rgb, uint32_t pixels);

/* Fills `table` (256 entries) with the sRGB gray level of each gray level of the GRAY ICC profile
 * `profile`. Returns 0, or -1 when the profile is not a usable gray profile. */
int ccolor_gray_table(const void *profile, size_t size, uint8_t table[256]);

/* Converts `height` rows of `width` pixels in place, `stride` bytes apart. */
void ccolor_transform_apply(ccolor_transform *transform, void *pixels, int width, int height, size_t stride);

void ccolor_transform_destroy(ccolor_transform *transform);

/* Inflates the zlib stream `source` (a PNG iCCP profile) into a new malloc'd buffer of at most
 * `limit` bytes; returns it and its size in *size, or NULL for a broken stream or one longer than
 * the limit. The caller frees it. */
uint8_t *ccolor_inflate(const uint8_t *source, size_t length, size_t limit, size_t *size);

/* Compresses `source` into a new malloc'd zlib stream (default level); returns it and its size in
 * *size, or NULL when memory runs out. The caller frees it. */
uint8_t *ccolor_deflate(const uint8_t *source, size_t length, size_t *size);

/* The CRC-32 of `bytes` (zlib's and PNG's; computed by libdeflate), continuing from `crc` (0 to start). */
uint32_t ccolor_crc32(uint32_t crc, const uint8_t *bytes, size_t length);

#endif
