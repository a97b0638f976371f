// The libwebp layer behind CWebP.h. libwebp reports errors by return values; nothing here longjmps.

#include "CWebP.h"
#include "CSystemTuning.h"

#include <stdlib.h>
#include <string.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>
#include <webp/mux.h>
#include <stdio.h>

int cwebp_info(const uint8_t *data, size_t size, CWebPInfo *info) {
    int status = cwebp_features(data, size, info);
    if (status != 0) return status;
    if (info->frame_count == 0) {   // an animation: the demuxer counts its frames
        WebPData webp = {data, size};
        WebPDemuxer *demux = WebPDemux(&webp);
        if (!demux) return VP8_STATUS_BITSTREAM_ERROR;
        info->width = (int)WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH);
        info->height = (int)WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT);
        info->frame_count = (int)WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT);
        info->loop_count = (int)WebPDemuxGetI(demux, WEBP_FF_LOOP_COUNT);
        WebPDemuxDelete(demux);
        if (info->frame_count < 1) return VP8_STATUS_NOT_ENOUGH_DATA;
    }
    return 0;
}

int cwebp_exif(const uint8_t *data, size_t size, size_t *offset, size_t *length) {
    WebPData webp = {data, size};
    WebPDemuxer *demux = WebPDemux(&webp);
    if (!demux) return 0;
    WebPChunkIterator chunk;
    int found = WebPDemuxGetChunk(demux, "EXIF", 1, &chunk);
    if (found) {
        // The demuxer reads `data` in place: the payload points into it.
        *offset = (size_t)(chunk.chunk.bytes - data);
        *length = chunk.chunk.size;
        WebPDemuxReleaseChunkIterator(&chunk);
    }
    WebPDemuxDelete(demux);
    return found;
}

/* libwebp calls a picture's progress hook as the encode goes (a row of macroblocks at a time in
 * lossy, at each stage of lossless) on the encoding thread; returning 1 lets it go on. A cold server
 * thread lets a waiting thread run there (CSystemTuning.h). */
static int yield_while_encoding(int percent, const WebPPicture *picture) {
    (void)percent;
    (void)picture;
    wi_yield_point();
    return 1;
}

/* A lossy image of more than this many bytes is decoded in steps of this many (below). */
#define CWEBP_INCREMENTAL_STEP ((size_t)16 * 1024)

/* Decodes a lossy image through libwebp's incremental decoder, a step of its bytes at a time, with a
 * yield point between steps: the same pixels as WebPDecode (the same decoder, suspended at a
 * macroblock row when a step ends; WebPIUpdate reads the bytes in place, it copies nothing), and a
 * cold server thread lets a waiting thread run between steps (CSystemTuning.h). Lossless images
 * keep WebPDecode: VP8L resumes a suspended decode from the start of its row, which would repeat
 * work. VP8_STATUS_NOT_ENOUGH_DATA when the bytes end before the image, as WebPDecode says. */
static VP8StatusCode decode_in_steps(const uint8_t *data, size_t size, WebPDecoderConfig *config) {
    WebPIDecoder *decoder = WebPIDecode(NULL, 0, config);
    if (decoder == NULL) return VP8_STATUS_OUT_OF_MEMORY;
    VP8StatusCode status = VP8_STATUS_SUSPENDED;
    size_t fed = 0;
    while (status == VP8_STATUS_SUSPENDED && fed < size) {
        fed = size - fed > CWEBP_INCREMENTAL_STEP ? fed + CWEBP_INCREMENTAL_STEP : size;
        status = WebPIUpdate(decoder, data, fed);
        wi_yield_point();
    }
    WebPIDelete(decoder);
    return status == VP8_STATUS_SUSPENDED ? VP8_STATUS_NOT_ENOUGH_DATA : status;
}

int cwebp_decode(const uint8_t *data, size_t size, int channels, int out_width, int out_height,
                 uint8_t *output, size_t stride) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) return VP8_STATUS_INVALID_PARAM;
    VP8StatusCode status = WebPGetFeatures(data, size, &config.input);
    if (status != VP8_STATUS_OK) return (int)status;
    if (out_width != config.input.width || out_height != config.input.height) {
        config.options.use_scaling = 1;
        config.options.scaled_width = out_width;
        config.options.scaled_height = out_height;
    }
    // A large lossy image filters its rows on a second thread (libwebp's own, joined before
    // WebPDecode returns): the same pixels, about a third less latency on two cores. Not on a
    // thread with yield points (a server's cold thread): libwebp's thread would have none.
    config.options.use_threads = (uint64_t)config.input.width * (uint64_t)config.input.height >= CWEBP_THREADED_PIXELS
                                 && !wi_thread_yields();
    config.output.colorspace = channels == 4 ? MODE_RGBA : MODE_RGB;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = output;
    config.output.u.RGBA.stride = (int)stride;
    config.output.u.RGBA.size = stride * (size_t)out_height;
    if (config.input.format == 1 && size > CWEBP_INCREMENTAL_STEP) {
        status = decode_in_steps(data, size, &config);
    } else {
        status = WebPDecode(data, size, &config);
    }
    WebPFreeDecBuffer(&config.output);
    return (int)status;
}

struct CWebPAnimation {
    WebPAnimDecoder *decoder;
};

CWebPAnimation *cwebp_animation_create(const uint8_t *data, size_t size) {
    WebPAnimDecoderOptions options;
    if (!WebPAnimDecoderOptionsInit(&options)) return NULL;
    options.color_mode = MODE_RGBA;
    options.use_threads = 0;
    WebPData webp = {data, size};
    WebPAnimDecoder *decoder = WebPAnimDecoderNew(&webp, &options);
    if (!decoder) return NULL;
    CWebPAnimation *animation = calloc(1, sizeof *animation);
    if (!animation) {
        WebPAnimDecoderDelete(decoder);
        return NULL;
    }
    animation->decoder = decoder;
    return animation;
}

int cwebp_animation_next(CWebPAnimation *animation, const uint8_t **canvas, int *timestamp_ms) {
    if (!WebPAnimDecoderHasMoreFrames(animation->decoder)) return 0;
    uint8_t *buffer = NULL;
    if (!WebPAnimDecoderGetNext(animation->decoder, &buffer, timestamp_ms)) return -1;
    *canvas = buffer;
    return 1;
}

void cwebp_animation_destroy(CWebPAnimation *animation) {
    if (!animation) return;
    WebPAnimDecoderDelete(animation->decoder);
    free(animation);
}

static int write_to_memory(const uint8_t *data, size_t size, const WebPPicture *picture) {
    return WebPMemoryWrite(data, size, picture);
}

size_t cwebp_encode(const uint8_t *pixels, int width, int height, size_t stride, int channels, float quality,
                    int lossless, int method, uint8_t **output, int *error) {
    *output = NULL;
    *error = 0;
    WebPConfig config;
    WebPPicture picture;
    if (!WebPConfigInit(&config) || !WebPPictureInit(&picture)) {
        *error = VP8_ENC_ERROR_OUT_OF_MEMORY;
        return 0;
    }
    config.lossless = lossless;
    config.exact = lossless;   // lossless keeps the RGB under alpha 0 too, so a round trip is exact
    config.quality = quality;
    config.method = method;
    if (!WebPValidateConfig(&config)) {
        *error = VP8_ENC_ERROR_INVALID_CONFIGURATION;
        return 0;
    }
    picture.use_argb = lossless;
    picture.width = width;
    picture.height = height;
    int imported = channels == 4 ? WebPPictureImportRGBA(&picture, pixels, (int)stride)
                                 : WebPPictureImportRGB(&picture, pixels, (int)stride);
    if (!imported) {
        *error = picture.error_code ? picture.error_code : VP8_ENC_ERROR_OUT_OF_MEMORY;
        WebPPictureFree(&picture);
        return 0;
    }
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    picture.writer = write_to_memory;
    picture.custom_ptr = &writer;
    picture.progress_hook = yield_while_encoding;
    int ok = WebPEncode(&config, &picture);
    if (!ok) *error = picture.error_code;
    WebPPictureFree(&picture);
    if (!ok) {
        WebPMemoryWriterClear(&writer);
        return 0;
    }
    *output = writer.mem;
    return writer.size;
}

void cwebp_free(void *pointer) {
    WebPFree(pointer);
}

// MARK: - Animation encoding (libwebpmux)

struct CWebPAnimationEncoder {
    WebPAnimEncoder *encoder;
    WebPConfig config;
    int width, height;
    char message[128];
};

CWebPAnimationEncoder *cwebp_animation_encoder_create(int width, int height, int loop_count, float quality,
                                                      int lossless, int method) {
    CWebPAnimationEncoder *result = calloc(1, sizeof *result);
    if (!result) return NULL;
    WebPAnimEncoderOptions options;
    if (!WebPAnimEncoderOptionsInit(&options) || !WebPConfigInit(&result->config)) {
        free(result);
        return NULL;
    }
    options.anim_params.loop_count = loop_count;
    result->config.lossless = lossless;
    result->config.exact = lossless;
    result->config.quality = quality;
    result->config.method = method;
    result->width = width;
    result->height = height;
    if (!WebPValidateConfig(&result->config)) {
        free(result);
        return NULL;
    }
    result->encoder = WebPAnimEncoderNew(width, height, &options);
    if (!result->encoder) {
        free(result);
        return NULL;
    }
    return result;
}

static void copy_message(CWebPAnimationEncoder *encoder, const char *fallback) {
    const char *message = WebPAnimEncoderGetError(encoder->encoder);
    snprintf(encoder->message, sizeof encoder->message, "%s", message && *message ? message : fallback);
}

int cwebp_animation_encoder_add(CWebPAnimationEncoder *encoder, const uint8_t *pixels, size_t stride, int channels,
                                int timestamp_ms) {
    WebPPicture picture;
    if (!WebPPictureInit(&picture)) {
        snprintf(encoder->message, sizeof encoder->message, "libwebp version mismatch");
        return 0;
    }
    picture.use_argb = 1;   // the animation encoder works in ARGB
    picture.width = encoder->width;
    picture.height = encoder->height;
    int imported = channels == 4 ? WebPPictureImportRGBA(&picture, pixels, (int)stride)
                                 : WebPPictureImportRGB(&picture, pixels, (int)stride);
    if (!imported) {
        snprintf(encoder->message, sizeof encoder->message, "out of memory importing a frame");
        WebPPictureFree(&picture);
        return 0;
    }
    int ok = WebPAnimEncoderAdd(encoder->encoder, &picture, timestamp_ms, &encoder->config);
    if (!ok) copy_message(encoder, "adding a frame failed");
    WebPPictureFree(&picture);
    return ok;
}

size_t cwebp_animation_encoder_finish(CWebPAnimationEncoder *encoder, int end_timestamp_ms, uint8_t **output) {
    *output = NULL;
    if (!WebPAnimEncoderAdd(encoder->encoder, NULL, end_timestamp_ms, NULL)) {
        copy_message(encoder, "ending the animation failed");
        return 0;
    }
    WebPData data;
    WebPDataInit(&data);
    if (!WebPAnimEncoderAssemble(encoder->encoder, &data)) {
        copy_message(encoder, "assembling the animation failed");
        WebPDataClear(&data);
        return 0;
    }
    *output = (uint8_t *)data.bytes;
    return data.size;
}

const char *cwebp_animation_encoder_message(const CWebPAnimationEncoder *encoder) {
    return encoder->message;
}

void cwebp_animation_encoder_destroy(CWebPAnimationEncoder *encoder) {
    if (!encoder) return;
    WebPAnimEncoderDelete(encoder->encoder);
    free(encoder);
}

// MARK: - Incremental still decoding (WebPIDecoder)

int cwebp_features(const uint8_t *data, size_t size, CWebPInfo *info) {
    memset(info, 0, sizeof *info);
    WebPBitstreamFeatures features;
    VP8StatusCode status = WebPGetFeatures(data, size, &features);
    if (status != VP8_STATUS_OK) return (int)status;
    info->width = features.width;
    info->height = features.height;
    info->has_alpha = features.has_alpha;
    info->is_lossless = features.format == 2;
    info->frame_count = features.has_animation ? 0 : 1;
    return 0;
}

struct CWebPIncremental {
    WebPDecoderConfig config;   // WebPIDecoder points into config.options: it lives as long as the decoder
    WebPIDecoder *decoder;
};

CWebPIncremental *cwebp_incremental_create(int width, int height, int channels, int out_width, int out_height,
                                           uint8_t *output, size_t stride) {
    CWebPIncremental *result = calloc(1, sizeof *result);
    if (!result) return NULL;
    if (!WebPInitDecoderConfig(&result->config)) {
        free(result);
        return NULL;
    }
    if (out_width != width || out_height != height) {
        result->config.options.use_scaling = 1;
        result->config.options.scaled_width = out_width;
        result->config.options.scaled_height = out_height;
    }
    result->config.output.colorspace = channels == 4 ? MODE_RGBA : MODE_RGB;
    result->config.output.is_external_memory = 1;
    result->config.output.u.RGBA.rgba = output;
    result->config.output.u.RGBA.stride = (int)stride;
    result->config.output.u.RGBA.size = stride * (size_t)out_height;
    result->decoder = WebPIDecode(NULL, 0, &result->config);
    if (!result->decoder) {
        free(result);
        return NULL;
    }
    return result;
}

int cwebp_incremental_append(CWebPIncremental *decoder, const uint8_t *data, size_t size) {
    return (int)WebPIAppend(decoder->decoder, data, size);
}

int cwebp_incremental_rows(const CWebPIncremental *decoder) {
    int last_y = 0;
    if (!WebPIDecGetRGB(decoder->decoder, &last_y, NULL, NULL, NULL)) return 0;
    return last_y;
}

void cwebp_incremental_destroy(CWebPIncremental *decoder) {
    if (!decoder) return;
    WebPIDelete(decoder->decoder);
    WebPFreeDecBuffer(&decoder->config.output);
    free(decoder);
}
