#include "CColor.h"
#include <lcms2.h>
#include <stdlib.h>
#include <libdeflate.h>
#include <zlib.h>

struct ccolor_transform {
    cmsHTRANSFORM transform;
};

static void ccolor_silent(cmsContext context, cmsUInt32Number code, const char *text) {
    (void)context; (void)code; (void)text;
}

/* Opens `profile` when it is of colour space `space`; NULL otherwise. */
static cmsHPROFILE ccolor_open(const void *profile, size_t size, cmsColorSpaceSignature space) {
    if (profile == NULL || size < 132 || size > (size_t)UINT32_MAX) return NULL;
    cmsSetLogErrorHandler(ccolor_silent);
    cmsHPROFILE opened = cmsOpenProfileFromMem(profile, (cmsUInt32Number)size);
    if (opened != NULL && cmsGetColorSpace(opened) != space) {
        cmsCloseProfile(opened);
        return NULL;
    }
    return opened;
}

/* An lcms2 transform from `profile` (of colour space `space`) to sRGB, perceptual intent, never
 * caching (so several threads may use it at once); NULL when lcms2 cannot make one. */
static cmsHTRANSFORM ccolor_to_srgb(const void *profile, size_t size, cmsColorSpaceSignature space,
                                    cmsUInt32Number input, cmsUInt32Number output, cmsUInt32Number flags) {
    cmsHPROFILE source = ccolor_open(profile, size, space);
    if (source == NULL) return NULL;
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    cmsHTRANSFORM transform = srgb ? cmsCreateTransform(source, input, srgb, output, INTENT_PERCEPTUAL, cmsFLAGS_NOCACHE | flags) : NULL;
    cmsCloseProfile(source);
    if (srgb) cmsCloseProfile(srgb);
    return transform;
}

/* `transform` in the handle Swift holds; NULL (and the transform deleted) when memory runs out. */
static ccolor_transform *ccolor_wrap(cmsHTRANSFORM transform) {
    if (transform == NULL) return NULL;
    ccolor_transform *result = malloc(sizeof *result);
    if (result == NULL) {
        cmsDeleteTransform(transform);
        return NULL;
    }
    result->transform = transform;
    return result;
}

ccolor_transform *ccolor_transform_create(const void *profile, size_t size, int channels) {
    if (channels != 3 && channels != 4) return NULL;
    cmsUInt32Number format = channels == 4 ? TYPE_RGBA_8 : TYPE_RGB_8;
    return ccolor_wrap(ccolor_to_srgb(profile, size, cmsSigRgbData, format, format, channels == 4 ? cmsFLAGS_COPY_ALPHA : 0));
}

ccolor_transform *ccolor_cmyk_transform_create(const void *profile, size_t size) {
    return ccolor_wrap(ccolor_to_srgb(profile, size, cmsSigCmykData, TYPE_CMYK_8_REV, TYPE_RGB_8, 0));
}

void ccolor_convert_cmyk(void *context, const uint8_t *cmyk, uint8_t *rgb, uint32_t pixels) {
    ccolor_transform *transform = context;
    if (transform == NULL || pixels == 0) return;
    cmsDoTransform(transform->transform, cmyk, rgb, pixels);
}

int ccolor_gray_table(const void *profile, size_t size, uint8_t table[256]) {
    cmsHTRANSFORM transform = ccolor_to_srgb(profile, size, cmsSigGrayData, TYPE_GRAY_8, TYPE_RGB_8, 0);
    if (transform == NULL) return -1;
    uint8_t levels[256], rgb[256 * 3];
    for (int i = 0; i < 256; i++) levels[i] = (uint8_t)i;
    cmsDoTransform(transform, levels, rgb, 256);
    cmsDeleteTransform(transform);
    /* A gray profile's white maps to neutral sRGB; take the green channel, the luminance-heavy one. */
    for (int i = 0; i < 256; i++) table[i] = rgb[3 * i + 1];
    return 0;
}

void ccolor_transform_apply(ccolor_transform *transform, void *pixels, int width, int height, size_t stride) {
    if (transform == NULL || pixels == NULL || width <= 0 || height <= 0) return;
    cmsDoTransformLineStride(transform->transform, pixels, pixels, (cmsUInt32Number)width, (cmsUInt32Number)height,
                             (cmsUInt32Number)stride, (cmsUInt32Number)stride, 0, 0);
}

void ccolor_transform_destroy(ccolor_transform *transform) {
    if (transform == NULL) return;
    cmsDeleteTransform(transform->transform);
    free(transform);
}

uint8_t *ccolor_inflate(const uint8_t *source, size_t length, size_t limit, size_t *size) {
    if (source == NULL || size == NULL || length == 0 || length > UINT32_MAX) return NULL;
    z_stream stream = {0};
    if (inflateInit(&stream) != Z_OK) return NULL;
    size_t capacity = length * 4 < limit ? (length * 4 > 4096 ? length * 4 : 4096) : limit;
    uint8_t *buffer = malloc(capacity);
    if (buffer == NULL) {
        inflateEnd(&stream);
        return NULL;
    }
    stream.next_in = (Bytef *)source;
    stream.avail_in = (uInt)length;
    int status = Z_OK;
    while (status == Z_OK) {
        if (stream.total_out == capacity) {
            if (capacity >= limit) break;
            size_t grown = capacity * 2 < limit ? capacity * 2 : limit;
            uint8_t *larger = realloc(buffer, grown);
            if (larger == NULL) break;
            buffer = larger;
            capacity = grown;
        }
        stream.next_out = buffer + stream.total_out;
        stream.avail_out = (uInt)(capacity - stream.total_out);
        status = inflate(&stream, Z_NO_FLUSH);
    }
    *size = stream.total_out;
    inflateEnd(&stream);
    if (status != Z_STREAM_END) {
        free(buffer);
        return NULL;
    }
    return buffer;
}

uint8_t *ccolor_deflate(const uint8_t *source, size_t length, size_t *size) {
    if (source == NULL || size == NULL || length > UINT32_MAX) return NULL;
    uLongf capacity = compressBound((uLong)length);
    uint8_t *buffer = malloc(capacity);
    if (buffer == NULL) return NULL;
    if (compress(buffer, &capacity, source, (uLong)length) != Z_OK) {
        free(buffer);
        return NULL;
    }
    *size = capacity;
    return buffer;
}

uint32_t ccolor_crc32(uint32_t crc, const uint8_t *bytes, size_t length) {
    // libdeflate's CRC-32 (carry-less multiplication where the CPU has it) is about four times zlib
    // 1.2.13's on this machine; same polynomial, same running value (0 to start).
    return libdeflate_crc32(crc, bytes, length);
}
