/*
 * JPEG encoding for WebImage's JPEGCoder: libjpeg compression into a growing malloc'd buffer,
 * with alpha composed over a background colour row by row. Errors longjmp back here and come out
 * as -1 plus libjpeg's message. See include/CJPEG.h.
 */
#include "CJPEG.h"
#include "CSystemTuning.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

struct encoder {
    struct jpeg_compress_struct cinfo;
    struct jpeg_error_mgr jerr;
    struct jpeg_destination_mgr dest;
    jmp_buf jump;
    uint8_t *buffer;
    size_t capacity;
    char message[JMSG_LENGTH_MAX];
};

static void encoder_error_exit(j_common_ptr cinfo) {
    struct encoder *e = (struct encoder *)cinfo->client_data;
    (*cinfo->err->format_message)(cinfo, e->message);
    longjmp(e->jump, 1);
}

static void encoder_output_message(j_common_ptr cinfo) {
    (void)cinfo;
}

static void init_destination(j_compress_ptr cinfo) {
    struct encoder *e = (struct encoder *)cinfo->client_data;
    e->dest.next_output_byte = e->buffer;
    e->dest.free_in_buffer = e->capacity;
}

static boolean empty_output_buffer(j_compress_ptr cinfo) {
    /* libjpeg calls this only when the buffer is full (free_in_buffer == 0). */
    struct encoder *e = (struct encoder *)cinfo->client_data;
    size_t used = e->capacity;
    size_t capacity = e->capacity * 2;
    uint8_t *grown = capacity > e->capacity ? realloc(e->buffer, capacity) : NULL;
    if (!grown) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 10);
    e->buffer = grown;
    e->capacity = capacity;
    e->dest.next_output_byte = e->buffer + used;
    e->dest.free_in_buffer = capacity - used;
    return TRUE;
}

static void term_destination(j_compress_ptr cinfo) {
    (void)cinfo; /* the length is capacity - free_in_buffer, read by cjpeg_encode */
}

/* Composes one row of `channels`-byte pixels into `out_components`-byte pixels (see CJPEG.h). */
static void compose_row(const uint8_t *s, uint8_t *t, uint32_t width, int channels, int out_components,
                        const uint8_t *bg) {
    for (uint32_t x = 0; x < width; x++) {
        unsigned c[3], a = 255;
        switch (channels) {
        case 1: c[0] = c[1] = c[2] = s[x]; break;
        case 2: c[0] = c[1] = c[2] = s[2 * x]; a = s[2 * x + 1]; break;
        case 3: c[0] = s[3 * x]; c[1] = s[3 * x + 1]; c[2] = s[3 * x + 2]; break;
        default: c[0] = s[4 * x]; c[1] = s[4 * x + 1]; c[2] = s[4 * x + 2]; a = s[4 * x + 3]; break;
        }
        for (int i = 0; i < out_components; i++) {
            t[(uint32_t)out_components * x + (uint32_t)i] = (uint8_t)((c[i] * a + bg[i] * (255 - a) + 127) / 255);
        }
    }
}

int cjpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t bytes_per_row, int channels,
                 int out_components, int quality, int chroma_444, int progressive, const uint8_t *background_rgb,
                 cjpeg_encoded *result, char *message, size_t message_size) {
    result->bytes = NULL;
    result->count = 0;
    if (width == 0 || height == 0 || channels < 1 || channels > 4 || (out_components != 1 && out_components != 3)) {
        snprintf(message, message_size, "invalid encoder arguments");
        return -1;
    }
    /* Pixels libjpeg can read as they are; everything else goes through a composed row. */
    int direct = (channels == 1 && out_components == 1) || (channels == 3 && out_components == 3);
    struct encoder *e = calloc(1, sizeof *e);
    uint8_t *row = direct ? NULL : malloc((size_t)width * (size_t)out_components);
    size_t initial = (size_t)width * height * (size_t)out_components / 8 + 4096;
    if (initial > (64u << 20)) initial = 64u << 20;
    uint8_t *buffer = malloc(initial);
    if (!e || (!direct && !row) || !buffer) {
        free(e);
        free(row);
        free(buffer);
        snprintf(message, message_size, "out of memory");
        return -1;
    }
    e->buffer = buffer;
    e->capacity = initial;
    e->cinfo.err = jpeg_std_error(&e->jerr);
    e->jerr.error_exit = encoder_error_exit;
    e->jerr.output_message = encoder_output_message;
    e->cinfo.client_data = e;
    if (setjmp(e->jump)) {
        snprintf(message, message_size, "%s", e->message);
        jpeg_destroy_compress(&e->cinfo);
        free(e->buffer);
        free(row);
        free(e);
        return -1;
    }
    jpeg_create_compress(&e->cinfo);
    e->dest.init_destination = init_destination;
    e->dest.empty_output_buffer = empty_output_buffer;
    e->dest.term_destination = term_destination;
    e->cinfo.dest = &e->dest;
    e->cinfo.image_width = width;
    e->cinfo.image_height = height;
    e->cinfo.input_components = out_components;
    e->cinfo.in_color_space = out_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&e->cinfo);
    jpeg_set_quality(&e->cinfo, quality < 1 ? 1 : quality > 100 ? 100 : quality, TRUE);
    if (out_components == 3 && chroma_444) {
        e->cinfo.comp_info[0].h_samp_factor = 1;
        e->cinfo.comp_info[0].v_samp_factor = 1;
    }
    e->cinfo.dct_method = JDCT_ISLOW;
    if (progressive) jpeg_simple_progression(&e->cinfo);
    jpeg_start_compress(&e->cinfo, TRUE);
    while (e->cinfo.next_scanline < height) {
        const uint8_t *source = pixels + (size_t)e->cinfo.next_scanline * bytes_per_row;
        JSAMPROW line;
        if (direct) {
            line = (JSAMPROW)(uintptr_t)source; /* libjpeg only reads input rows */
        } else {
            compose_row(source, row, width, channels, out_components, background_rgb);
            line = row;
        }
        jpeg_write_scanlines(&e->cinfo, &line, 1);
        wi_yield_point();   /* a cold server thread lets a waiting thread run (CSystemTuning.h) */
    }
    jpeg_finish_compress(&e->cinfo);
    result->bytes = e->buffer;
    result->count = e->capacity - e->dest.free_in_buffer;
    jpeg_destroy_compress(&e->cinfo);
    free(row);
    free(e);
    return 0;
}
