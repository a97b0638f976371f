// Bare C loops over libwebp, giflib and libavif: the references for WebImage's WebP, GIF and AVIF coders.
#include "CBaseline.h"
#include <avif/avif.h>
#include <gif_lib.h>
#include <stdlib.h>
#include <string.h>
#include <webp/decode.h>
#include <webp/encode.h>

int baseline_decode_webp(const unsigned char *data, size_t size, unsigned char *out, size_t out_capacity,
                         int *width, int *height) {
    WebPBitstreamFeatures features;
    if (WebPGetFeatures(data, size, &features) != VP8_STATUS_OK) return -1;
    *width = features.width;
    *height = features.height;
    int channels = features.has_alpha ? 4 : 3;
    int stride = features.width * channels;
    uint8_t *result = features.has_alpha ? WebPDecodeRGBAInto(data, size, out, out_capacity, stride)
                                         : WebPDecodeRGBInto(data, size, out, out_capacity, stride);
    return result ? 0 : -1;
}

struct memory_source { const unsigned char *data; size_t size, offset; };

static int read_memory(GifFileType *gif, GifByteType *buffer, int length) {
    struct memory_source *source = gif->UserData;
    size_t count = (size_t)length < source->size - source->offset ? (size_t)length : source->size - source->offset;
    memcpy(buffer, source->data + source->offset, count);
    source->offset += count;
    return (int)count;
}

int baseline_decode_gif(const unsigned char *data, size_t size, unsigned char *frames, size_t frames_capacity) {
    struct memory_source source = {data, size, 0};
    int error = 0;
    GifFileType *gif = DGifOpen(&source, read_memory, &error);
    if (!gif) return -1;
    size_t canvas_bytes = (size_t)gif->SWidth * gif->SHeight * 4;
    unsigned char *canvas = calloc(canvas_bytes, 1);
    GifPixelType *row = malloc((size_t)gif->SWidth + 1);
    int count = 0, transparent = -1, disposal = 0, failed = 0;
    int previous_disposal = 0, px = 0, py = 0, pw = 0, ph = 0;
    GifRecordType type;
    while (!failed && DGifGetRecordType(gif, &type) == GIF_OK && type != TERMINATE_RECORD_TYPE) {
        if (type == EXTENSION_RECORD_TYPE) {
            int code;
            GifByteType *block;
            if (DGifGetExtension(gif, &code, &block) == GIF_ERROR) { failed = 1; break; }
            if (code == GRAPHICS_EXT_FUNC_CODE && block && block[0] >= 4) {
                disposal = (block[1] >> 2) & 7;
                transparent = (block[1] & 1) ? block[4] : -1;
            }
            while (block) if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) { failed = 1; break; }
        } else if (type == IMAGE_DESC_RECORD_TYPE) {
            if (DGifGetImageDesc(gif) == GIF_ERROR) { failed = 1; break; }
            if (previous_disposal == 2) {
                for (int y = py; y < py + ph && y < gif->SHeight; y++)
                    memset(canvas + ((size_t)y * gif->SWidth + px) * 4, 0, (size_t)(px + pw <= gif->SWidth ? pw : gif->SWidth - px) * 4);
            }
            GifImageDesc *d = &gif->Image;
            ColorMapObject *map = d->ColorMap ? d->ColorMap : gif->SColorMap;
            static const int start[4] = {0, 4, 2, 1}, step[4] = {8, 8, 4, 2};
            int passes = d->Interlace ? 4 : 1;
            for (int pass = 0; pass < passes && !failed; pass++) {
                for (int y = d->Interlace ? start[pass] : 0; y < d->Height; y += d->Interlace ? step[pass] : 1) {
                    if (DGifGetLine(gif, row, d->Width) == GIF_ERROR) { failed = 1; break; }
                    int cy = d->Top + y;
                    if (cy >= gif->SHeight) continue;
                    unsigned char *out = canvas + ((size_t)cy * gif->SWidth + d->Left) * 4;
                    for (int x = 0; x < d->Width && d->Left + x < gif->SWidth; x++, out += 4) {
                        int index = row[x];
                        if (index == transparent) continue;
                        if (map && index < map->ColorCount) {
                            out[0] = map->Colors[index].Red; out[1] = map->Colors[index].Green; out[2] = map->Colors[index].Blue;
                        } else {
                            out[0] = out[1] = out[2] = 0;
                        }
                        out[3] = 255;
                    }
                }
            }
            if (failed) break;
            if ((size_t)(count + 1) * sizeof(unsigned char *) > frames_capacity) { failed = 1; break; }
            unsigned char *copy = malloc(canvas_bytes);
            if (!copy) { failed = 1; break; }
            memcpy(copy, canvas, canvas_bytes);
            ((unsigned char **)frames)[count] = copy;
            count += 1;
            previous_disposal = disposal;
            px = d->Left; py = d->Top; pw = d->Width; ph = d->Height;
            transparent = -1;
            disposal = 0;
        }
    }
    free(row);
    free(canvas);
    DGifCloseFile(gif, &error);
    for (int i = 0; i < count; i++) free(((unsigned char **)frames)[i]);   // the caller is done with them
    return failed ? -1 : count;
}

int baseline_decode_avif(const unsigned char *data, size_t size, unsigned char *out, size_t out_capacity,
                         int *width, int *height) {
    avifDecoder *decoder = avifDecoderCreate();
    if (!decoder) return -1;
    decoder->maxThreads = 1;
    decoder->strictFlags = AVIF_STRICT_DISABLED;
    int status = -1;
    if (avifDecoderSetIOMemory(decoder, data, size) == AVIF_RESULT_OK && avifDecoderParse(decoder) == AVIF_RESULT_OK
        && avifDecoderNextImage(decoder) == AVIF_RESULT_OK) {
        avifRGBImage rgb;
        avifRGBImageSetDefaults(&rgb, decoder->image);
        int channels = decoder->alphaPresent ? 4 : 3;   // as WebImage: RGB without alpha
        rgb.format = channels == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
        rgb.depth = 8;
        rgb.chromaUpsampling = AVIF_CHROMA_UPSAMPLING_BILINEAR;
        rgb.rowBytes = rgb.width * (uint32_t)channels;
        rgb.pixels = out;
        if ((size_t)rgb.rowBytes * rgb.height <= out_capacity && avifImageYUVToRGB(decoder->image, &rgb) == AVIF_RESULT_OK) {
            *width = (int)rgb.width;
            *height = (int)rgb.height;
            status = 0;
        }
    }
    avifDecoderDestroy(decoder);
    return status;
}

size_t baseline_encode_webp(const unsigned char *rgb, int width, int height, int stride, float quality, int method) {
    WebPConfig config;
    WebPPicture picture;
    if (!WebPConfigInit(&config) || !WebPPictureInit(&picture)) return 0;
    config.quality = quality;
    config.method = method;
    picture.width = width;
    picture.height = height;
    if (!WebPPictureImportRGB(&picture, rgb, stride)) return 0;
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    int ok = WebPEncode(&config, &picture);
    WebPPictureFree(&picture);
    size_t result = ok ? writer.size : 0;
    WebPMemoryWriterClear(&writer);
    return result;
}

size_t baseline_encode_avif(const unsigned char *rgb, int width, int height, int stride, int speed, int quantizer) {
    avifImage *image = avifImageCreate(width, height, 8, AVIF_PIXEL_FORMAT_YUV420);
    avifEncoder *encoder = avifEncoderCreate();
    size_t result = 0;
    if (image && encoder) {
        image->yuvRange = AVIF_RANGE_FULL;
        avifRGBImage pixels;
        avifRGBImageSetDefaults(&pixels, image);
        pixels.format = AVIF_RGB_FORMAT_RGB;
        pixels.pixels = (uint8_t *)rgb;
        pixels.rowBytes = (uint32_t)stride;
        encoder->speed = speed;
        encoder->maxThreads = 1;
        encoder->minQuantizer = encoder->maxQuantizer = quantizer;
        encoder->minQuantizerAlpha = encoder->maxQuantizerAlpha = quantizer;
        avifRWData output = AVIF_DATA_EMPTY;
        if (avifImageRGBToYUV(image, &pixels) == AVIF_RESULT_OK && avifEncoderWrite(encoder, image, &output) == AVIF_RESULT_OK) {
            result = output.size;
        }
        avifRWDataFree(&output);
    }
    if (encoder) avifEncoderDestroy(encoder);
    if (image) avifImageDestroy(image);
    return result;
}
