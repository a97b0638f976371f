// The libavif layer behind CAVIF.h. libavif reports errors by avifResult; nothing here longjmps.

#include "CAVIF.h"

#include <avif/avif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct CAVIFDecoder {
    avifDecoder *decoder;
};

CAVIFDecoder *cavif_decoder_create(const uint8_t *data, size_t size, int *result) {
    avifDecoder *decoder = avifDecoderCreate();
    if (!decoder) {
        *result = AVIF_RESULT_OUT_OF_MEMORY;
        return NULL;
    }
    decoder->strictFlags = AVIF_STRICT_DISABLED;
    decoder->maxThreads = 1;
    decoder->ignoreExif = AVIF_TRUE;
    decoder->ignoreXMP = AVIF_TRUE;
    avifResult status = avifDecoderSetIOMemory(decoder, data, size);
    if (status == AVIF_RESULT_OK) status = avifDecoderParse(decoder);
    if (status != AVIF_RESULT_OK) {
        avifDecoderDestroy(decoder);
        *result = status;
        return NULL;
    }
    CAVIFDecoder *wrapper = calloc(1, sizeof *wrapper);
    if (!wrapper) {
        avifDecoderDestroy(decoder);
        *result = AVIF_RESULT_OUT_OF_MEMORY;
        return NULL;
    }
    wrapper->decoder = decoder;
    *result = AVIF_RESULT_OK;
    return wrapper;
}

/// irot (anticlockwise quarter turns) then imir (mode 0: top and bottom swap; 1: left and right), as
/// the EXIF orientation that turns the stored pixels the same way.
static int exif_orientation(const avifImage *image) {
    int angle = (image->transformFlags & AVIF_TRANSFORM_IROT) ? (image->irot.angle & 3) : 0;
    int mirror = (image->transformFlags & AVIF_TRANSFORM_IMIR) ? (int)image->imir.mode : -1;
    static const int rotations[4] = {1, 8, 3, 6};
    static const int rotated_then_swapped_vertically[4] = {4, 5, 2, 7};
    static const int rotated_then_swapped_horizontally[4] = {2, 7, 4, 5};
    if (mirror == 0) return rotated_then_swapped_vertically[angle];
    if (mirror == 1) return rotated_then_swapped_horizontally[angle];
    return rotations[angle];
}

void cavif_decoder_info(const CAVIFDecoder *wrapper, CAVIFInfo *info) {
    memset(info, 0, sizeof *info);
    const avifImage *image = wrapper->decoder->image;
    info->width = image->width;
    info->height = image->height;
    info->depth = image->depth;
    info->has_alpha = wrapper->decoder->alphaPresent;
    info->frame_count = wrapper->decoder->imageCount;
    info->exif_orientation = exif_orientation(image);
    if (image->transformFlags & AVIF_TRANSFORM_CLAP) {
        avifCropRect rect;
        avifDiagnostics diagnostics;
        // The crop applies to RGB pixels here, so chroma alignment does not matter: asking as for 4:4:4
        // skips the even-offset rule of subsampled images (strict mode's), keeping every other check.
        if (avifCropRectConvertCleanApertureBox(&rect, &image->clap, image->width, image->height, AVIF_PIXEL_FORMAT_YUV444,
                                                &diagnostics)) {
            info->has_crop = 1;
            info->crop_x = rect.x;
            info->crop_y = rect.y;
            info->crop_width = rect.width;
            info->crop_height = rect.height;
        }
    }
}

int cavif_decoder_next(CAVIFDecoder *wrapper, uint8_t *pixels, size_t row_bytes, int channels, double *duration) {
    return cavif_decoder_next_depth(wrapper, pixels, row_bytes, channels, 8, duration);
}

int cavif_decoder_next_depth(CAVIFDecoder *wrapper, uint8_t *pixels, size_t row_bytes, int channels, int depth,
                             double *duration) {
    avifDecoder *decoder = wrapper->decoder;
    avifResult status = avifDecoderNextImage(decoder);
    if (status != AVIF_RESULT_OK) return status;
    *duration = decoder->imageTiming.duration;
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, decoder->image);
    rgb.depth = depth == 16 ? 16 : 8;   /* libavif scales 10/12-bit samples onto 0...65535 (native-endian uint16) */
    rgb.format = channels == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    rgb.chromaUpsampling = AVIF_CHROMA_UPSAMPLING_BILINEAR;
    rgb.pixels = pixels;
    rgb.rowBytes = (uint32_t)row_bytes;
    return avifImageYUVToRGB(decoder->image, &rgb);
}

CAVIFResultKind cavif_result_kind(int result) {
    switch ((avifResult)result) {
    case AVIF_RESULT_OK: return CAVIFResultOK;
    case AVIF_RESULT_NO_IMAGES_REMAINING: return CAVIFResultEnd;
    case AVIF_RESULT_TRUNCATED_DATA: return CAVIFResultTruncated;
    case AVIF_RESULT_OUT_OF_MEMORY: return CAVIFResultNoMemory;
    case AVIF_RESULT_INVALID_FTYP: return CAVIFResultNotAVIF;
    default: return CAVIFResultFailed;
    }
}

const char *cavif_result_string(int result) {
    return avifResultToString((avifResult)result);
}

void cavif_decoder_destroy(CAVIFDecoder *wrapper) {
    if (!wrapper) return;
    avifDecoderDestroy(wrapper->decoder);
    free(wrapper);
}

// MARK: - Encoding

struct CAVIFEncoder {
    avifEncoder *encoder;
    int lossless;
    uint8_t *icc;       /* copies, written into every image added (libavif takes the first's) */
    size_t icc_size;
    uint8_t *exif;
    size_t exif_size;
    char message[256];
};

CAVIFEncoder *cavif_encoder_create(int speed, int quantizer, int lossless, int threads) {
    CAVIFEncoder *wrapper = calloc(1, sizeof *wrapper);
    if (!wrapper) return NULL;
    wrapper->encoder = avifEncoderCreate();
    if (!wrapper->encoder) {
        free(wrapper);
        return NULL;
    }
    avifEncoder *encoder = wrapper->encoder;
    encoder->speed = speed;
    encoder->maxThreads = threads;
    encoder->timescale = 1000;
    int q = lossless ? AVIF_QUANTIZER_LOSSLESS : quantizer;
    encoder->minQuantizer = encoder->maxQuantizer = q;
    encoder->minQuantizerAlpha = encoder->maxQuantizerAlpha = q;
    wrapper->lossless = lossless;
    return wrapper;
}

static int fail_with(CAVIFEncoder *wrapper, const char *step, avifResult result) {
    const char *detail = wrapper->encoder->diag.error;
    snprintf(wrapper->message, sizeof wrapper->message, "%s: %s%s%s", step, avifResultToString(result),
             detail[0] ? ": " : "", detail);
    return 0;
}

int cavif_encoder_add(CAVIFEncoder *wrapper, const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                      int channels, uint64_t duration_ms, int single) {
    return cavif_encoder_add_depth(wrapper, pixels, width, height, stride, channels, 8, duration_ms, single);
}

int cavif_encoder_add_depth(CAVIFEncoder *wrapper, const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                            int channels, int depth, uint64_t duration_ms, int single) {
    /* 16-bit samples are written as AV1's deepest profile-0 depth, 12 bits (libavif scales them). */
    avifImage *image = avifImageCreate((int)width, (int)height, depth == 16 ? 12 : 8,
                                       wrapper->lossless ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420);
    if (!image) {
        snprintf(wrapper->message, sizeof wrapper->message, "out of memory for a %ux%u image", width, height);
        return 0;
    }
    image->yuvRange = AVIF_RANGE_FULL;
    if (wrapper->icc) avifImageSetProfileICC(image, wrapper->icc, wrapper->icc_size);
    if (wrapper->exif) avifImageSetMetadataExif(image, wrapper->exif, wrapper->exif_size);
    if (wrapper->lossless) image->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_IDENTITY;
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, image);
    rgb.format = channels == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    rgb.depth = depth == 16 ? 16 : 8;
    rgb.pixels = (uint8_t *)pixels;
    rgb.rowBytes = (uint32_t)stride;
    avifResult result = avifImageRGBToYUV(image, &rgb);
    if (result != AVIF_RESULT_OK) {
        avifImageDestroy(image);
        return fail_with(wrapper, "converting to YUV", result);
    }
    // aom's inter frames are not lossless even at quantizer 0: a lossless sequence is all keyframes.
    avifAddImageFlags flags = single ? AVIF_ADD_IMAGE_FLAG_SINGLE
                                     : (wrapper->lossless ? AVIF_ADD_IMAGE_FLAG_FORCE_KEYFRAME : AVIF_ADD_IMAGE_FLAG_NONE);
    result = avifEncoderAddImage(wrapper->encoder, image, duration_ms, flags);
    avifImageDestroy(image);
    return result == AVIF_RESULT_OK ? 1 : fail_with(wrapper, "encoding", result);
}

size_t cavif_encoder_finish(CAVIFEncoder *wrapper, uint8_t **output) {
    *output = NULL;
    avifRWData data = AVIF_DATA_EMPTY;
    avifResult result = avifEncoderFinish(wrapper->encoder, &data);
    if (result != AVIF_RESULT_OK) {
        avifRWDataFree(&data);
        fail_with(wrapper, "finishing", result);
        return 0;
    }
    *output = data.data;
    return data.size;
}

const char *cavif_encoder_message(const CAVIFEncoder *wrapper) {
    return wrapper->message;
}

static uint8_t *cavif_copy(const uint8_t *bytes, size_t size) {
    if (!bytes || size == 0) return NULL;
    uint8_t *copy = malloc(size);
    if (copy) memcpy(copy, bytes, size);
    return copy;
}

int cavif_encoder_set_metadata(CAVIFEncoder *wrapper, const uint8_t *icc, size_t icc_size, const uint8_t *exif, size_t exif_size) {
    free(wrapper->icc);
    free(wrapper->exif);
    wrapper->icc = cavif_copy(icc, icc_size);
    wrapper->icc_size = wrapper->icc ? icc_size : 0;
    wrapper->exif = cavif_copy(exif, exif_size);
    wrapper->exif_size = wrapper->exif ? exif_size : 0;
    if ((icc && icc_size && !wrapper->icc) || (exif && exif_size && !wrapper->exif)) {
        snprintf(wrapper->message, sizeof wrapper->message, "out of memory for the metadata");
        return 0;
    }
    return 1;
}

void cavif_encoder_destroy(CAVIFEncoder *wrapper) {
    if (!wrapper) return;
    free(wrapper->icc);
    free(wrapper->exif);
    avifEncoderDestroy(wrapper->encoder);
    free(wrapper);
}

void cavif_encoded_free(void *pointer) {
    avifFree(pointer);
}
