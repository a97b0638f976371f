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
