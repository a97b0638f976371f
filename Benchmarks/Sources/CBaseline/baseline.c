#include "CBaseline.h"
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <jpeglib.h>
#include <png.h>

struct baseline_jpeg_error {
    struct jpeg_error_mgr base;
    jmp_buf jump;
};

static void baseline_jpeg_exit(j_common_ptr info) {
    longjmp(((struct baseline_jpeg_error *)info->err)->jump, 1);
}

static void baseline_jpeg_silence(j_common_ptr info) { (void)info; }

int baseline_decode_jpeg(const unsigned char *data, size_t size, int scale_denom,
                         unsigned char *out, size_t out_capacity, int *width, int *height) {
    struct jpeg_decompress_struct info;
    struct baseline_jpeg_error error;
    info.err = jpeg_std_error(&error.base);
    error.base.error_exit = baseline_jpeg_exit;
    error.base.output_message = baseline_jpeg_silence;
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&info);
        return -1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    info.scale_num = 1;
    info.scale_denom = (unsigned int)scale_denom;
    if (info.jpeg_color_space != JCS_GRAYSCALE) info.out_color_space = JCS_RGB;
    jpeg_start_decompress(&info);
    size_t stride = (size_t)info.output_width * (size_t)info.output_components;
    if (stride * info.output_height > out_capacity) {
        jpeg_destroy_decompress(&info);
        return -1;
    }
    JSAMPROW rows[16];
    while (info.output_scanline < info.output_height) {
        int count = 0;
        for (; count < 16 && info.output_scanline + count < info.output_height; count++)
            rows[count] = out + (size_t)(info.output_scanline + count) * stride;
        jpeg_read_scanlines(&info, rows, (JDIMENSION)count);
    }
    *width = (int)info.output_width;
    *height = (int)info.output_height;
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    return 0;
}

struct baseline_png_reader {
    const unsigned char *data;
    size_t size;
    size_t offset;
};

static void baseline_png_read(png_structp png, png_bytep target, png_size_t length) {
    struct baseline_png_reader *reader = png_get_io_ptr(png);
    if (reader->size - reader->offset < length) png_error(png, "truncated");
    memcpy(target, reader->data + reader->offset, length);
    reader->offset += length;
}

static void baseline_png_warning(png_structp png, png_const_charp message) { (void)png; (void)message; }

int baseline_decode_png(const unsigned char *data, size_t size,
                        unsigned char *out, size_t out_capacity, int *width, int *height, int *channels) {
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, baseline_png_warning);
    if (!png) return -1;
    png_infop info = png_create_info_struct(png);
    png_bytep *rows = NULL;
    if (!info || setjmp(png_jmpbuf(png))) {
        png_free(png, rows);
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    struct baseline_png_reader reader = {data, size, 0};
    png_set_read_fn(png, &reader, baseline_png_read);
    png_read_info(png, info);
    png_set_expand(png);
    png_set_strip_16(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    size_t stride = png_get_rowbytes(png, info);
    if (stride * h > out_capacity) png_error(png, "buffer too small");
    rows = png_malloc(png, sizeof(png_bytep) * h);
    for (png_uint_32 y = 0; y < h; y++) rows[y] = out + y * stride;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    *width = (int)w;
    *height = (int)h;
    *channels = png_get_channels(png, info);
    png_free(png, rows);
    png_destroy_read_struct(&png, &info, NULL);
    return 0;
}
