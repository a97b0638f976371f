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

/* Converts `height` rows of `width` pixels in place, `stride` bytes apart. */
void ccolor_transform_apply(ccolor_transform *transform, void *pixels, int width, int height, size_t stride);

void ccolor_transform_destroy(ccolor_transform *transform);

/* Inflates the zlib stream `source` (a PNG iCCP profile) into a new malloc'd buffer of at most
 * `limit` bytes; returns it and its size in *size, or NULL for a broken stream or one longer than
 * the limit. The caller frees it. */
uint8_t *ccolor_inflate(const uint8_t *source, size_t length, size_t limit, size_t *size);

#endif
