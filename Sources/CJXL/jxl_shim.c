// The libjxl layer behind cjxl.h. libjxl reports errors by status codes only; nothing here longjmps,
// and no parallel runner is set: everything runs on the calling thread.

#include <jxl/decode.h>
#include <jxl/encode.h>

#include "cjxl.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// MARK: - Helpers

static void fail(char *message, size_t capacity, const char *format, ...) __attribute__((format(printf, 3, 4)));

static void fail(char *message, size_t capacity, const char *format, ...) {
    if (capacity == 0) return;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(message, capacity, format, arguments);
    va_end(arguments);
}

static uint32_t read_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static uint64_t read_be64(const uint8_t *p) { return ((uint64_t)read_be32(p) << 32) | read_be32(p + 4); }

// libjxl 0.7 concatenates `jxlp` boxes in file order without looking at their index, so a file whose
// partial codestream boxes are out of order can decode to something (ISO/IEC 18181-2 numbers them
// 0, 1, 2, ... with the high bit on the last). Returns -1 with `message` when they are out of order;
// anything else about the container (truncated boxes, bad sizes) is left to libjxl.
static int check_jxlp_order(const uint8_t *data, size_t size, char *message, size_t capacity) {
    static const uint8_t signature[12] = {0, 0, 0, 0x0c, 'J', 'X', 'L', ' ', 0x0d, 0x0a, 0x87, 0x0a};
    if (size < sizeof signature || memcmp(data, signature, sizeof signature) != 0) return 0;
    size_t position = 0;
    uint32_t expected = 0;
    int ended = 0;
    while (size - position >= 8) {
        uint64_t box_size = read_be32(data + position);
        size_t header = 8;
        if (box_size == 1) {
            if (size - position < 16) break;
            box_size = read_be64(data + position + 8);
            header = 16;
        } else if (box_size == 0) {
            box_size = size - position;
        }
        if (box_size < header) break;
        if (memcmp(data + position + 4, "jxlp", 4) == 0) {
            if (size - position < header + 4) break;
            uint32_t index = read_be32(data + position + header);
            if (ended || (index & 0x7fffffffu) != expected) {
                fail(message, capacity, "jxlp box %u found where %s expected: partial codestream boxes out of order",
                     (unsigned)(index & 0x7fffffffu), ended ? "no more were" : "the next in order was");
                return -1;
            }
            expected++;
            if (index & 0x80000000u) ended = 1;
        }
        if (box_size > size - position) break;
        position += (size_t)box_size;
    }
    return 0;
}

// MARK: - Memory budget

// Every allocation libjxl routes through JxlMemoryManager (in 0.7: only the decoder object itself)
// is counted against `cap`. A size header in front of each block lets free() give it back.
typedef struct {
    size_t cap;   // 0 = unlimited
    size_t used;
} cjxl_budget;

typedef union {
    max_align_t alignment;
    size_t size;
} cjxl_block_header;

static void *budget_alloc(void *opaque, size_t size) {
    cjxl_budget *budget = opaque;
    if (size > SIZE_MAX - sizeof(cjxl_block_header)) return NULL;
    if (budget->cap != 0 && size > budget->cap - budget->used) return NULL;
    cjxl_block_header *block = malloc(sizeof(cjxl_block_header) + size);
    if (!block) return NULL;
    block->size = size;
    budget->used += size;
    return block + 1;
}

static void budget_free(void *opaque, void *address) {
    if (!address) return;
    cjxl_budget *budget = opaque;
    cjxl_block_header *block = (cjxl_block_header *)address - 1;
    budget->used -= block->size;
    free(block);
}

// MARK: - Decoder

struct CJXLDecoder {
    JxlDecoder *decoder;
    const uint8_t *data;
    size_t size;
    cjxl_budget budget;
    JxlBasicInfo basic;          // as read with keep_orientation (stored size, real orientation)
    int want_srgb;               // XYB image whose original profile is ICC: ask libjxl for sRGB
    int headers_read;            // the first start() read the colour encoding
    int mode;                    // keep_orientation the libjxl decoder was started with
    int failed, finished;
    size_t frames_returned;
    uint8_t *icc;                // TARGET_DATA
    size_t icc_size;
    int data_is_srgb;            // TARGET_DATA is an enumerated sRGB (or sRGB-grey) encoding
    uint8_t *original_icc;       // TARGET_ORIGINAL
    size_t original_icc_size;
};

static uint8_t *copy_icc(JxlDecoder *decoder, JxlColorProfileTarget target, size_t *out_size) {
    size_t size = 0;
    *out_size = 0;
    if (JxlDecoderGetICCProfileSize(decoder, NULL, target, &size) != JXL_DEC_SUCCESS || size == 0) return NULL;
    uint8_t *profile = malloc(size);
    if (!profile) return NULL;
    if (JxlDecoderGetColorAsICCProfile(decoder, NULL, target, profile, size) != JXL_DEC_SUCCESS) {
        free(profile);
        return NULL;
    }
    *out_size = size;
    return profile;
}

// (Re)starts libjxl on the whole input with the given orientation mode and reads up to the colour
// encoding; then skips the frames already returned. Returns 0, or -1 with `message`.
static int start(CJXLDecoder *d, int keep_orientation, char *message, size_t capacity) {
    JxlDecoder *decoder = d->decoder;
    JxlDecoderReset(decoder);
    if (JxlDecoderSubscribeEvents(decoder, JXL_DEC_BASIC_INFO | JXL_DEC_COLOR_ENCODING | JXL_DEC_FRAME |
                                               JXL_DEC_FULL_IMAGE) != JXL_DEC_SUCCESS ||
        JxlDecoderSetKeepOrientation(decoder, keep_orientation ? JXL_TRUE : JXL_FALSE) != JXL_DEC_SUCCESS ||
        JxlDecoderSetUnpremultiplyAlpha(decoder, JXL_TRUE) != JXL_DEC_SUCCESS ||
        JxlDecoderSetInput(decoder, d->data, d->size) != JXL_DEC_SUCCESS) {
        fail(message, capacity, "libjxl refused the decoder settings");
        return -1;
    }
    JxlDecoderCloseInput(decoder);
    int have_basic = 0;
    for (;;) {
        JxlDecoderStatus status = JxlDecoderProcessInput(decoder);
        if (status == JXL_DEC_ERROR) {
            fail(message, capacity, "corrupt or truncated JPEG XL headers (libjxl refused them)");
            return -1;
        }
        if (status == JXL_DEC_NEED_MORE_INPUT) {
            fail(message, capacity, "truncated JPEG XL file (the headers end early)");
            return -1;
        }
        if (status == JXL_DEC_BASIC_INFO) {
            if (!d->headers_read && JxlDecoderGetBasicInfo(decoder, &d->basic) != JXL_DEC_SUCCESS) {
                fail(message, capacity, "libjxl gave no basic info");
                return -1;
            }
            have_basic = 1;
            continue;
        }
        if (status == JXL_DEC_COLOR_ENCODING && have_basic) break;
        fail(message, capacity, "libjxl returned status %d before the colour encoding", (int)status);
        return -1;
    }
    if (!d->headers_read) {
        d->original_icc = copy_icc(decoder, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &d->original_icc_size);
        JxlColorEncoding encoding;
        d->want_srgb = !d->basic.uses_original_profile &&
                       JxlDecoderGetColorAsEncodedProfile(decoder, NULL, JXL_COLOR_PROFILE_TARGET_ORIGINAL,
                                                          &encoding) != JXL_DEC_SUCCESS;
    }
    if (d->want_srgb) {
        JxlColorEncoding srgb;
        memset(&srgb, 0, sizeof srgb);
        srgb.color_space = d->basic.num_color_channels == 1 ? JXL_COLOR_SPACE_GRAY : JXL_COLOR_SPACE_RGB;
        srgb.white_point = JXL_WHITE_POINT_D65;
        srgb.primaries = JXL_PRIMARIES_SRGB;
        srgb.transfer_function = JXL_TRANSFER_FUNCTION_SRGB;
        srgb.rendering_intent = JXL_RENDERING_INTENT_RELATIVE;
        // If libjxl refuses, it keeps its own choice; TARGET_DATA below still describes the pixels.
        (void)JxlDecoderSetPreferredColorProfile(decoder, &srgb);
    }
    if (!d->headers_read) {
        d->icc = copy_icc(decoder, JXL_COLOR_PROFILE_TARGET_DATA, &d->icc_size);
        JxlColorEncoding data;
        d->data_is_srgb = JxlDecoderGetColorAsEncodedProfile(decoder, NULL, JXL_COLOR_PROFILE_TARGET_DATA, &data) == JXL_DEC_SUCCESS &&
                          data.white_point == JXL_WHITE_POINT_D65 && data.transfer_function == JXL_TRANSFER_FUNCTION_SRGB &&
                          (data.color_space == JXL_COLOR_SPACE_GRAY ||
                           (data.color_space == JXL_COLOR_SPACE_RGB && data.primaries == JXL_PRIMARIES_SRGB));
        d->headers_read = 1;
    }
    d->mode = keep_orientation ? 1 : 0;
    if (d->frames_returned > 0) JxlDecoderSkipFrames(decoder, d->frames_returned);
    return 0;
}

// libjxl 0.7's working memory for decoding, measured (peak RSS, this layer, all frames) on the corpus's 56
// valid JPEG XL files: about 1 MB fixed plus 16–30 bytes per pixel and channel (a grey image still gets
// three float planes; blending layers and animations keep reference frames: up to 88 bytes per pixel
// for RGBA). The estimate, 4 MiB + width × height × 24 × (channels + 1), × 1.5 for animations, is above
// every measurement. It does not include the caller's output buffer.
static double estimated_bytes(const JxlBasicInfo *basic) {
    double channels = (double)basic->num_color_channels + (double)basic->num_extra_channels;
    double estimate = 4.0 * 1024 * 1024 + (double)basic->xsize * (double)basic->ysize * 24.0 * (channels + 1.0);
    if (basic->have_animation) estimate *= 1.5;
    return estimate;
}

CJXLDecoder *cjxl_decoder_create(const uint8_t *data, size_t size, size_t max_bytes, cjxl_info *info, char *message,
                                 size_t capacity) {
    memset(info, 0, sizeof *info);
    if (size == 0) {
        fail(message, capacity, "empty input");
        return NULL;
    }
    JxlSignature signature = JxlSignatureCheck(data, size);
    if (signature != JXL_SIG_CODESTREAM && signature != JXL_SIG_CONTAINER) {
        fail(message, capacity, signature == JXL_SIG_NOT_ENOUGH_BYTES ? "truncated JPEG XL file (signature)"
                                                                      : "not a JPEG XL file");
        return NULL;
    }
    if (check_jxlp_order(data, size, message, capacity) != 0) return NULL;
    CJXLDecoder *d = calloc(1, sizeof *d);
    if (!d) {
        fail(message, capacity, "out of memory");
        return NULL;
    }
    d->data = data;
    d->size = size;
    d->budget.cap = max_bytes;
    JxlMemoryManager manager = {&d->budget, budget_alloc, budget_free};
    d->decoder = JxlDecoderCreate(&manager);
    if (!d->decoder) {
        fail(message, capacity, max_bytes ? "libjxl could not create a decoder within max_bytes" : "out of memory");
        free(d);
        return NULL;
    }
    if (start(d, 1, message, capacity) != 0) {
        cjxl_decoder_destroy(d);
        return NULL;
    }
    const JxlBasicInfo *basic = &d->basic;
    if (basic->xsize == 0 || basic->ysize == 0 || basic->xsize > INT_MAX || basic->ysize > INT_MAX ||
        basic->orientation < 1 || basic->orientation > 8) {
        fail(message, capacity, "JPEG XL header declares an invalid size %ux%u or orientation %d",
             (unsigned)basic->xsize, (unsigned)basic->ysize, (int)basic->orientation);
        cjxl_decoder_destroy(d);
        return NULL;
    }
    info->width = (int)basic->xsize;
    info->height = (int)basic->ysize;
    info->has_alpha = basic->alpha_bits > 0;
    info->is_grey = basic->num_color_channels == 1;
    info->bits = (int)basic->bits_per_sample;
    info->orientation = (int)basic->orientation;
    info->have_animation = basic->have_animation != 0;
    if (basic->have_animation) {
        info->loop_count = basic->animation.num_loops > INT_MAX ? INT_MAX : (int)basic->animation.num_loops;
        info->tps_numerator = basic->animation.tps_numerator > INT_MAX ? INT_MAX : (int)basic->animation.tps_numerator;
        info->tps_denominator =
            basic->animation.tps_denominator > INT_MAX ? INT_MAX : (int)basic->animation.tps_denominator;
    }
    if (max_bytes != 0 && estimated_bytes(basic) > (double)max_bytes) {
        fail(message, capacity, "JPEG XL image of %ux%u (%u channels) needs about %.0f MB to decode, over max_bytes (%zu)",
             (unsigned)basic->xsize, (unsigned)basic->ysize,
             (unsigned)(basic->num_color_channels + basic->num_extra_channels), estimated_bytes(basic) / 1e6, max_bytes);
        cjxl_decoder_destroy(d);
        return NULL;
    }
    return d;
}

const uint8_t *cjxl_decoder_icc(const CJXLDecoder *decoder, size_t *size) {
    *size = decoder->icc_size;
    return decoder->icc;
}

int cjxl_decoder_is_srgb(const CJXLDecoder *decoder) {
    return decoder->data_is_srgb;
}

const uint8_t *cjxl_decoder_original_icc(const CJXLDecoder *decoder, size_t *size) {
    *size = decoder->original_icc_size;
    return decoder->original_icc;
}

int cjxl_decoder_next_frame(CJXLDecoder *d, int depth, int keep_orientation, uint8_t *output, size_t row_bytes,
                            int *width, int *height, uint32_t *duration_ticks, char *message, size_t capacity) {
    *width = 0;
    *height = 0;
    *duration_ticks = 0;
    if (d->failed) {
        fail(message, capacity, "the JPEG XL decoder already failed");
        return -1;
    }
    if (d->finished) return 0;
    if (depth != 8 && depth != 16) {
        fail(message, capacity, "unsupported output depth %d (8 or 16)", depth);
        return -1;
    }
    keep_orientation = keep_orientation ? 1 : 0;
    size_t out_width = d->basic.xsize, out_height = d->basic.ysize;
    if (!keep_orientation && d->basic.orientation >= JXL_ORIENT_TRANSPOSE) {
        out_width = d->basic.ysize;
        out_height = d->basic.xsize;
    }
    size_t sample_bytes = (size_t)depth / 8;
    size_t tight = out_width * 4 * sample_bytes;
    if (row_bytes < tight) {
        fail(message, capacity, "output rows of %zu bytes are shorter than %zu (%zu pixels of RGBA%d)", row_bytes, tight,
             out_width, depth);
        return -1;
    }
    if (row_bytes > SIZE_MAX / out_height) {
        fail(message, capacity, "output buffer size overflows");
        return -1;
    }
    if (keep_orientation != d->mode && start(d, keep_orientation, message, capacity) != 0) {
        d->failed = 1;
        return -1;
    }
    JxlPixelFormat format = {4, depth == 8 ? JXL_TYPE_UINT8 : JXL_TYPE_UINT16, JXL_NATIVE_ENDIAN,
                             row_bytes == tight ? 0 : row_bytes};
    int in_frame = 0;
    uint32_t duration = 0;
    for (;;) {
        JxlDecoderStatus status = JxlDecoderProcessInput(d->decoder);
        switch (status) {
        case JXL_DEC_FRAME: {
            JxlFrameHeader header;
            if (JxlDecoderGetFrameHeader(d->decoder, &header) != JXL_DEC_SUCCESS) {
                fail(message, capacity, "libjxl gave no frame header");
                d->failed = 1;
                return -1;
            }
            duration = header.duration;
            in_frame = 1;
            continue;
        }
        case JXL_DEC_NEED_IMAGE_OUT_BUFFER: {
            size_t needed = 0;
            if (JxlDecoderImageOutBufferSize(d->decoder, &format, &needed) != JXL_DEC_SUCCESS ||
                needed > row_bytes * out_height ||
                JxlDecoderSetImageOutBuffer(d->decoder, &format, output, row_bytes * out_height) != JXL_DEC_SUCCESS) {
                fail(message, capacity, "libjxl refused the output buffer (%zu bytes, needs %zu)", row_bytes * out_height,
                     needed);
                d->failed = 1;
                return -1;
            }
            continue;
        }
        case JXL_DEC_FULL_IMAGE:
            if (!in_frame) {
                fail(message, capacity, "libjxl returned an image without a frame header");
                d->failed = 1;
                return -1;
            }
            d->frames_returned++;
            *width = (int)out_width;
            *height = (int)out_height;
            *duration_ticks = duration;
            return 1;
        case JXL_DEC_SUCCESS:
            if (in_frame) {
                fail(message, capacity, "libjxl ended inside frame %zu", d->frames_returned);
                d->failed = 1;
                return -1;
            }
            if (d->frames_returned == 0) {
                fail(message, capacity, "JPEG XL file has no frames");
                d->failed = 1;
                return -1;
            }
            d->finished = 1;
            return 0;
        case JXL_DEC_NEED_MORE_INPUT:
            fail(message, capacity, "truncated JPEG XL file (after %zu frame(s))", d->frames_returned);
            d->failed = 1;
            return -1;
        case JXL_DEC_ERROR:
            fail(message, capacity, "corrupt or truncated JPEG XL data (libjxl failed in frame %zu)", d->frames_returned);
            d->failed = 1;
            return -1;
        default:
            fail(message, capacity, "libjxl returned unexpected status %d", (int)status);
            d->failed = 1;
            return -1;
        }
    }
}

void cjxl_decoder_destroy(CJXLDecoder *d) {
    if (!d) return;
    // The memory manager's opaque (d->budget) must outlive the libjxl decoder.
    if (d->decoder) JxlDecoderDestroy(d->decoder);
    free(d->icc);
    free(d->original_icc);
    free(d);
}

int cjxl_count_frames(const uint8_t *data, size_t size, int max_count, char *message, size_t capacity) {
    if (size == 0) {
        fail(message, capacity, "empty input");
        return -1;
    }
    JxlSignature signature = JxlSignatureCheck(data, size);
    if (signature != JXL_SIG_CODESTREAM && signature != JXL_SIG_CONTAINER) {
        fail(message, capacity, signature == JXL_SIG_NOT_ENOUGH_BYTES ? "truncated JPEG XL file (signature)"
                                                                      : "not a JPEG XL file");
        return -1;
    }
    if (check_jxlp_order(data, size, message, capacity) != 0) return -1;
    if (max_count < 0) max_count = 0;
    JxlDecoder *decoder = JxlDecoderCreate(NULL);
    if (!decoder) {
        fail(message, capacity, "out of memory");
        return -1;
    }
    // Only frame headers are wanted: with JXL_DEC_FULL_IMAGE unsubscribed libjxl 0.7 skips each
    // frame's sections (decode.cc, FrameStage::kTOC) instead of decoding them.
    int count = -1;
    if (JxlDecoderSubscribeEvents(decoder, JXL_DEC_FRAME) != JXL_DEC_SUCCESS ||
        JxlDecoderSetInput(decoder, data, size) != JXL_DEC_SUCCESS) {
        fail(message, capacity, "libjxl refused the decoder settings");
    } else {
        JxlDecoderCloseInput(decoder);
        int frames = 0;
        for (;;) {
            JxlDecoderStatus status = JxlDecoderProcessInput(decoder);
            if (status == JXL_DEC_FRAME) {
                if (++frames > max_count) {
                    count = frames;
                    break;
                }
                continue;
            }
            if (status == JXL_DEC_SUCCESS) {
                if (frames == 0) fail(message, capacity, "JPEG XL file has no frames");
                else count = frames;
            } else if (status == JXL_DEC_NEED_MORE_INPUT) {
                fail(message, capacity, "truncated JPEG XL file (after %d frame header(s))", frames);
            } else if (status == JXL_DEC_ERROR) {
                fail(message, capacity, "corrupt or truncated JPEG XL data (after %d frame header(s))", frames);
            } else {
                fail(message, capacity, "libjxl returned unexpected status %d", (int)status);
            }
            break;
        }
    }
    JxlDecoderDestroy(decoder);
    return count;
}

// MARK: - Encoder

// cjxl 0.7 (tools/cjxl_main.cc): quality → butteraugli distance.
static float distance_from_quality(float quality) {
    double q = quality;
    double distance = q >= 100 ? 0.0 : q >= 30 ? 0.1 + (100 - q) * 0.09 : 6.4 + pow(2.5, (30 - q) / 5.0) / 6.25;
    if (distance > 25.0) distance = 25.0;  // JxlEncoderSetFrameDistance accepts 0..25
    return (float)distance;
}

typedef struct {
    uint8_t *bytes;
    size_t size, capacity;
} cjxl_output;

static int encoder_output(JxlEncoder *encoder, cjxl_output *output, char *message, size_t capacity) {
    output->capacity = 64 * 1024;
    output->bytes = malloc(output->capacity);
    if (!output->bytes) {
        fail(message, capacity, "out of memory");
        return -1;
    }
    for (;;) {
        uint8_t *next = output->bytes + output->size;
        size_t available = output->capacity - output->size;
        JxlEncoderStatus status = JxlEncoderProcessOutput(encoder, &next, &available);
        output->size = (size_t)(next - output->bytes);
        if (status == JXL_ENC_SUCCESS) return 0;
        if (status != JXL_ENC_NEED_MORE_OUTPUT) {
            fail(message, capacity, "libjxl failed to encode (error %d)", (int)JxlEncoderGetError(encoder));
            return -1;
        }
        if (output->capacity > SIZE_MAX / 2) {
            fail(message, capacity, "encoded JPEG XL too large");
            return -1;
        }
        uint8_t *grown = realloc(output->bytes, output->capacity * 2);
        if (!grown) {
            fail(message, capacity, "out of memory");
            return -1;
        }
        output->bytes = grown;
        output->capacity *= 2;
    }
}

int cjxl_encode(const uint8_t *const *frames, int frame_count, const uint32_t *durations_ms, int loop_count, int width,
                int height, size_t row_bytes, int channels, int depth, int lossless, float quality, int effort,
                const uint8_t *icc, size_t icc_size, uint8_t **out, size_t *out_size, char *message, size_t capacity) {
    *out = NULL;
    *out_size = 0;
    if (frame_count < 1 || width < 1 || height < 1 || (channels != 3 && channels != 4) || (depth != 8 && depth != 16) ||
        effort < 0 || effort > 9 || loop_count < 0 || !(quality == quality)) {
        fail(message, capacity,
             "invalid JPEG XL encode parameters (frames %d, %dx%d, channels %d, depth %d, effort %d, loops %d)",
             frame_count, width, height, channels, depth, effort, loop_count);
        return -1;
    }
    size_t tight = (size_t)width * (size_t)channels * ((size_t)depth / 8);
    if (row_bytes < tight || row_bytes > SIZE_MAX / (size_t)height) {
        fail(message, capacity, "input rows of %zu bytes do not hold %d pixels", row_bytes, width);
        return -1;
    }
    if (!lossless && quality >= 100) lossless = 1;
    JxlEncoder *encoder = JxlEncoderCreate(NULL);
    if (!encoder) {
        fail(message, capacity, "out of memory");
        return -1;
    }
    int result = -1;
    cjxl_output output = {NULL, 0, 0};
    JxlBasicInfo basic;
    JxlEncoderInitBasicInfo(&basic);
    basic.xsize = (uint32_t)width;
    basic.ysize = (uint32_t)height;
    basic.bits_per_sample = (uint32_t)depth;
    basic.exponent_bits_per_sample = 0;
    basic.num_color_channels = 3;
    basic.num_extra_channels = channels == 4 ? 1 : 0;
    basic.alpha_bits = channels == 4 ? (uint32_t)depth : 0;
    basic.alpha_exponent_bits = 0;
    basic.alpha_premultiplied = JXL_FALSE;
    basic.uses_original_profile = lossless ? JXL_TRUE : JXL_FALSE;
    basic.orientation = JXL_ORIENT_IDENTITY;
    if (frame_count > 1) {
        basic.have_animation = JXL_TRUE;
        basic.animation.tps_numerator = 1000;
        basic.animation.tps_denominator = 1;
        basic.animation.num_loops = (uint32_t)loop_count;
        basic.animation.have_timecodes = JXL_FALSE;
    }
    JxlEncoderFrameSettings *settings = NULL;
    if (JxlEncoderSetBasicInfo(encoder, &basic) != JXL_ENC_SUCCESS) {
        fail(message, capacity, "libjxl refused the image header (%dx%d, %d-bit, %d channels)", width, height, depth,
             channels);
        goto done;
    }
    if (icc && icc_size > 0) {
        if (JxlEncoderSetICCProfile(encoder, icc, icc_size) != JXL_ENC_SUCCESS) {
            fail(message, capacity, "libjxl refused the ICC profile (%zu bytes)", icc_size);
            goto done;
        }
    } else {
        JxlColorEncoding srgb;
        JxlColorEncodingSetToSRGB(&srgb, JXL_FALSE);
        if (JxlEncoderSetColorEncoding(encoder, &srgb) != JXL_ENC_SUCCESS) {
            fail(message, capacity, "libjxl refused the sRGB colour encoding");
            goto done;
        }
    }
    settings = JxlEncoderFrameSettingsCreate(encoder, NULL);
    if (!settings || (effort > 0 && JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, effort) !=
                                        JXL_ENC_SUCCESS)) {
        fail(message, capacity, "libjxl refused effort %d", effort);
        goto done;
    }
    if (lossless) {
        if (JxlEncoderSetFrameDistance(settings, 0) != JXL_ENC_SUCCESS ||
            JxlEncoderSetFrameLossless(settings, JXL_TRUE) != JXL_ENC_SUCCESS) {
            fail(message, capacity, "libjxl refused lossless mode");
            goto done;
        }
    } else if (JxlEncoderSetFrameDistance(settings, distance_from_quality(quality)) != JXL_ENC_SUCCESS) {
        fail(message, capacity, "libjxl refused quality %g (distance %g)", (double)quality,
             (double)distance_from_quality(quality));
        goto done;
    }
    JxlPixelFormat format = {(uint32_t)channels, depth == 8 ? JXL_TYPE_UINT8 : JXL_TYPE_UINT16, JXL_NATIVE_ENDIAN,
                             row_bytes == tight ? 0 : row_bytes};
    // libjxl reads row_bytes × (height − 1) + the last row's pixels, and refuses more than row_bytes × height.
    size_t frame_bytes = row_bytes * (size_t)(height - 1) + tight;
    for (int i = 0; i < frame_count; i++) {
        if (frame_count > 1) {
            JxlFrameHeader header;
            JxlEncoderInitFrameHeader(&header);
            header.duration = durations_ms ? durations_ms[i] : 0;
            if (JxlEncoderSetFrameHeader(settings, &header) != JXL_ENC_SUCCESS) {
                fail(message, capacity, "libjxl refused the header of frame %d", i);
                goto done;
            }
        }
        if (JxlEncoderAddImageFrame(settings, &format, frames[i], frame_bytes) != JXL_ENC_SUCCESS) {
            fail(message, capacity, "libjxl refused frame %d (error %d)", i, (int)JxlEncoderGetError(encoder));
            goto done;
        }
    }
    JxlEncoderCloseInput(encoder);
    if (encoder_output(encoder, &output, message, capacity) != 0) goto done;
    *out = output.bytes;
    *out_size = output.size;
    output.bytes = NULL;
    result = 0;
done:
    free(output.bytes);
    JxlEncoderDestroy(encoder);
    return result;
}

void cjxl_free(void *pointer) { free(pointer); }
