// The references for TIFF and JPEG XL decoding: bare loops over libtiff and libjxl, as tiff2rgba's and djxl's
// decodes are without their file I/O and format conversions, into one reused buffer.
#include "CBaseline.h"
#include <jxl/decode.h>
#include <string.h>
#include <tiffio.h>

struct memory_file {
    const unsigned char *data;
    size_t size;
    toff_t offset;
};

static tmsize_t memory_read(thandle_t handle, void *buffer, tmsize_t size) {
    struct memory_file *file = handle;
    if (file->offset >= file->size) return 0;
    size_t count = (size_t)size < file->size - file->offset ? (size_t)size : file->size - file->offset;
    memcpy(buffer, file->data + file->offset, count);
    file->offset += count;
    return (tmsize_t)count;
}
static tmsize_t memory_write(thandle_t handle, void *buffer, tmsize_t size) { (void)handle; (void)buffer; (void)size; return -1; }
static toff_t memory_seek(thandle_t handle, toff_t offset, int whence) {
    struct memory_file *file = handle;
    toff_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? file->offset : file->size;
    file->offset = base + offset;
    return file->offset;
}
static int memory_close(thandle_t handle) { (void)handle; return 0; }
static toff_t memory_size(thandle_t handle) { return ((struct memory_file *)handle)->size; }
static int memory_map(thandle_t handle, void **base, toff_t *size) {
    struct memory_file *file = handle;
    *base = (void *)file->data;
    *size = file->size;
    return 1;
}
static void memory_unmap(thandle_t handle, void *base, toff_t size) { (void)handle; (void)base; (void)size; }

int baseline_decode_tiff(const unsigned char *data, size_t size, unsigned char *out, size_t out_capacity, int *width, int *height) {
    struct memory_file file = {data, size, 0};
    TIFF *tiff = TIFFClientOpen("memory", "rm", &file, memory_read, memory_write, memory_seek, memory_close, memory_size,
                                memory_map, memory_unmap);
    if (!tiff) return -1;
    uint32_t w = 0, h = 0;
    TIFFGetField(tiff, TIFFTAG_IMAGEWIDTH, &w);
    TIFFGetField(tiff, TIFFTAG_IMAGELENGTH, &h);
    tmsize_t strip_size = TIFFStripSize(tiff);
    uint32_t strips = TIFFNumberOfStrips(tiff);
    size_t offset = 0;
    int status = 0;
    for (uint32_t strip = 0; strip < strips; strip++) {
        if (offset + (size_t)strip_size > out_capacity) { status = -1; break; }
        tmsize_t read = TIFFReadEncodedStrip(tiff, strip, out + offset, strip_size);
        if (read < 0) { status = -1; break; }
        offset += (size_t)read;
    }
    TIFFClose(tiff);
    *width = (int)w;
    *height = (int)h;
    return status;
}

int baseline_decode_jxl(const unsigned char *data, size_t size, unsigned char *out, size_t out_capacity, int *width, int *height) {
    JxlDecoder *decoder = JxlDecoderCreate(NULL);
    if (!decoder) return -1;
    int status = -1;
    JxlBasicInfo info;
    JxlPixelFormat format = {4, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    if (JxlDecoderSubscribeEvents(decoder, JXL_DEC_BASIC_INFO | JXL_DEC_FULL_IMAGE) != JXL_DEC_SUCCESS ||
        JxlDecoderSetInput(decoder, data, size) != JXL_DEC_SUCCESS) goto done;
    JxlDecoderCloseInput(decoder);
    for (;;) {
        JxlDecoderStatus result = JxlDecoderProcessInput(decoder);
        if (result == JXL_DEC_BASIC_INFO) {
            if (JxlDecoderGetBasicInfo(decoder, &info) != JXL_DEC_SUCCESS) goto done;
            *width = (int)info.xsize;
            *height = (int)info.ysize;
        } else if (result == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            size_t needed = 0;
            if (JxlDecoderImageOutBufferSize(decoder, &format, &needed) != JXL_DEC_SUCCESS || needed > out_capacity) goto done;
            if (JxlDecoderSetImageOutBuffer(decoder, &format, out, needed) != JXL_DEC_SUCCESS) goto done;
        } else if (result == JXL_DEC_FULL_IMAGE) {
            status = 0;
            break;
        } else {
            goto done;
        }
    }
done:
    JxlDecoderDestroy(decoder);
    return status;
}
