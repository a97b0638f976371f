// The libheif layer behind CHEIF.h. libheif reports errors by `struct heif_error`; nothing here longjmps.

#include "CHEIF.h"

#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct CHEIFDecoder {
    struct heif_context *context;
    struct heif_image_handle *handle;
    struct heif_image *image;
};

static void describe(struct heif_error error, char *message, size_t capacity) {
    snprintf(message, capacity, "%s", error.message ? error.message : "libheif error");
}

CHEIFDecoder *cheif_decoder_create(const uint8_t *data, size_t size, char *message, size_t capacity) {
    CHEIFDecoder *decoder = calloc(1, sizeof *decoder);
    if (!decoder || !(decoder->context = heif_context_alloc())) {
        snprintf(message, capacity, "out of memory");
        free(decoder);
        return NULL;
    }
    struct heif_error error = heif_context_read_from_memory_without_copy(decoder->context, data, size, NULL);
    if (error.code == heif_error_Ok) error = heif_context_get_primary_image_handle(decoder->context, &decoder->handle);
    if (error.code != heif_error_Ok) {
        describe(error, message, capacity);
        cheif_decoder_destroy(decoder);
        return NULL;
    }
    return decoder;
}

void cheif_decoder_info(const CHEIFDecoder *decoder, int *width, int *height, int *has_alpha) {
    *width = heif_image_handle_get_width(decoder->handle);
    *height = heif_image_handle_get_height(decoder->handle);
    *has_alpha = heif_image_handle_has_alpha_channel(decoder->handle);
}

int cheif_decoder_decode(CHEIFDecoder *decoder, int ignore_transformations, int *width, int *height,
                         char *message, size_t capacity) {
    if (decoder->image) {
        heif_image_release(decoder->image);
        decoder->image = NULL;
    }
    struct heif_decoding_options *options = heif_decoding_options_alloc();
    if (!options) {
        snprintf(message, capacity, "out of memory");
        return -1;
    }
    options->ignore_transformations = (uint8_t)(ignore_transformations != 0);
    struct heif_error error = heif_decode_image(decoder->handle, &decoder->image, heif_colorspace_RGB,
                                                heif_chroma_interleaved_RGBA, options);
    heif_decoding_options_free(options);
    if (error.code != heif_error_Ok) {
        describe(error, message, capacity);
        return -1;
    }
    *width = heif_image_get_width(decoder->image, heif_channel_interleaved);
    *height = heif_image_get_height(decoder->image, heif_channel_interleaved);
    if (*width <= 0 || *height <= 0) {
        snprintf(message, capacity, "libheif decoded an empty image");
        return -1;
    }
    return 0;
}

void cheif_decoder_copy(const CHEIFDecoder *decoder, uint8_t *output, size_t row_bytes) {
    int stride = 0;
    const uint8_t *plane = heif_image_get_plane_readonly(decoder->image, heif_channel_interleaved, &stride);
    int width = heif_image_get_width(decoder->image, heif_channel_interleaved);
    int height = heif_image_get_height(decoder->image, heif_channel_interleaved);
    for (int y = 0; y < height; y++) memcpy(output + (size_t)y * row_bytes, plane + (size_t)y * (size_t)stride, (size_t)width * 4);
}

void cheif_decoder_destroy(CHEIFDecoder *decoder) {
    if (!decoder) return;
    if (decoder->image) heif_image_release(decoder->image);
    if (decoder->handle) heif_image_handle_release(decoder->handle);
    if (decoder->context) heif_context_free(decoder->context);
    free(decoder);
}

// MARK: - Encoder

struct growing_buffer {
    uint8_t *bytes;
    size_t size, capacity;
    int failed;
};

static struct heif_error append_output(struct heif_context *context, const void *data, size_t size, void *userdata) {
    (void)context;
    struct growing_buffer *buffer = userdata;
    struct heif_error ok = {heif_error_Ok, heif_suberror_Unspecified, "ok"};
    if (buffer->size + size > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity : 65536;
        while (capacity < buffer->size + size) capacity *= 2;
        uint8_t *grown = realloc(buffer->bytes, capacity);
        if (!grown) {
            buffer->failed = 1;
            struct heif_error error = {heif_error_Encoding_error, heif_suberror_Unspecified, "out of memory"};
            return error;
        }
        buffer->bytes = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->bytes + buffer->size, data, size);
    buffer->size += size;
    return ok;
}

int cheif_have_hevc_encoder(void) {
    return heif_have_encoder_for_format(heif_compression_HEVC) ? 1 : 0;
}

int cheif_encode(const uint8_t *pixels, int width, int height, size_t row_bytes, int channels, int quality, int lossless,
                 const uint8_t *icc, size_t icc_size, uint8_t **out, size_t *out_size, char *message, size_t capacity) {
    *out = NULL;
    *out_size = 0;
    if ((channels != 3 && channels != 4) || width <= 0 || height <= 0) {
        snprintf(message, capacity, "HEIC is written from RGB or RGBA pixels");
        return -1;
    }
    struct heif_context *context = heif_context_alloc();
    struct heif_encoder *encoder = NULL;
    struct heif_image *image = NULL;
    struct heif_image_handle *handle = NULL;
    struct growing_buffer buffer = {0};
    int result = -1;
    struct heif_error error = heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder);
    if (error.code != heif_error_Ok) goto done;
    if (lossless) error = heif_encoder_set_lossless(encoder, 1);
    else error = heif_encoder_set_lossy_quality(encoder, quality < 0 ? 0 : quality > 100 ? 100 : quality);
    if (error.code != heif_error_Ok) goto done;
    heif_encoder_set_logging_level(encoder, 0);
    error = heif_image_create(width, height, heif_colorspace_RGB,
                              channels == 4 ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, &image);
    if (error.code != heif_error_Ok) goto done;
    error = heif_image_add_plane(image, heif_channel_interleaved, width, height, 8);
    if (error.code != heif_error_Ok) goto done;
    int stride = 0;
    uint8_t *plane = heif_image_get_plane(image, heif_channel_interleaved, &stride);
    for (int y = 0; y < height; y++) {
        memcpy(plane + (size_t)y * (size_t)stride, pixels + (size_t)y * row_bytes, (size_t)width * (size_t)channels);
    }
    if (icc && icc_size > 0) {
        error = heif_image_set_raw_color_profile(image, "prof", icc, icc_size);
        if (error.code != heif_error_Ok) goto done;
    }
    error = heif_context_encode_image(context, image, encoder, NULL, &handle);
    if (error.code != heif_error_Ok) goto done;
    struct heif_writer writer = {1, append_output};
    error = heif_context_write(context, &writer, &buffer);
    if (error.code != heif_error_Ok || buffer.failed) goto done;
    *out = buffer.bytes;
    *out_size = buffer.size;
    buffer.bytes = NULL;
    result = 0;
done:
    if (result != 0) describe(error, message, capacity);
    free(buffer.bytes);
    if (handle) heif_image_handle_release(handle);
    if (image) heif_image_release(image);
    if (encoder) heif_encoder_release(encoder);
    heif_context_free(context);
    return result;
}

void cheif_free(void *pointer) {
    free(pointer);
}
