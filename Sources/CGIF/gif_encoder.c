// The giflib encoder behind CGIFEncoder.h: a palette per frame (exact, or quantized by a variance-based
// median cut refined by k-means, in gif_quantize.c), pixels mapped row by row, and giflib's EGif* calls
// doing the LZW.

#include "CGIFEncoder.h"
#include "gif_quantize.h"

#include <gif_lib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Encoder {
    GifFileType *_Nullable gif;
    uint8_t *_Nullable bytes;      // the output, grown by `write_output`
    size_t count, capacity;
    int write_failed;              // a write could not be stored: giflib does not report most of these
    char *_Nullable message;
    size_t message_capacity;
    uint32_t keys[1024];           // exact palettes: open addressing on 0x1000000 | RGB, 0 = empty slot
    uint8_t slots[1024];           // the palette index of each key
    CGIFQuantizer quantizer;       // the tables and error rows for frames of more than 256 colours
    GifPixelType *_Nullable row;   // one row of indices (EGifPutLine masks it in place)
} Encoder;

static CGIFEncodeStatus fail(Encoder *e, CGIFEncodeStatus status, const char *format, ...) {
    if (e->message && e->message_capacity > 0) {
        va_list arguments;
        va_start(arguments, format);
        vsnprintf(e->message, e->message_capacity, format, arguments);
        va_end(arguments);
    }
    return status;
}

/// giflib's write function: appends to the output, growing it geometrically.
static int write_output(GifFileType *gif, const GifByteType *bytes, int length) {
    Encoder *e = gif->UserData;
    if (length == 0) return 0;
    if (e->write_failed || length < 0 || (size_t)length > SIZE_MAX - e->count) {
        e->write_failed = 1;
        return 0;
    }
    size_t needed = e->count + (size_t)length;
    if (needed > e->capacity) {
        size_t capacity = e->capacity ? e->capacity : 65536;
        while (capacity < needed) capacity = capacity > SIZE_MAX / 2 ? needed : capacity * 2;
        uint8_t *grown = realloc(e->bytes, capacity);
        if (!grown) {
            e->write_failed = 1;
            return 0;
        }
        e->bytes = grown;
        e->capacity = capacity;
    }
    memcpy(e->bytes + e->count, bytes, (size_t)length);
    e->count = needed;
    return length;
}

// MARK: - Exact palettes

static inline uint32_t key_of(const uint8_t *pixel) {
    return 0x1000000u | (uint32_t)pixel[0] << 16 | (uint32_t)pixel[1] << 8 | pixel[2];
}

static uint32_t slot_of(const Encoder *e, uint32_t key) {
    uint32_t slot = (key * 2654435761u) >> 22;   // 10 bits; at most 256 of the 1024 slots are ever used
    while (e->keys[slot] != 0 && e->keys[slot] != key) slot = (slot + 1) & 1023;
    return slot;
}

/// Collects the frame's opaque colours in the order they first appear, when they and the transparent slot
/// number at most 256; returns 0 as soon as there are more.
static int collect_exact(Encoder *e, const CGIFEncodeFrame *frame, uint32_t width, uint32_t height, CGIFPalette *palette) {
    memset(e->keys, 0, sizeof e->keys);
    int opaque = 0, transparent = 0;
    uint32_t last = 0;
    for (uint32_t y = 0; y < height; y++) {
        const uint8_t *pixel = frame->rgba + (size_t)y * frame->bytes_per_row;
        for (uint32_t x = 0; x < width; x++, pixel += 4) {
            if (pixel[3] < 128) {
                if (!transparent && opaque == CGIF_MAX_COLORS) return 0;
                transparent = 1;
                continue;
            }
            uint32_t key = key_of(pixel);
            if (key == last) continue;
            last = key;
            uint32_t slot = slot_of(e, key);
            if (e->keys[slot] == key) continue;
            if (opaque + transparent == CGIF_MAX_COLORS) return 0;
            e->keys[slot] = key;
            e->slots[slot] = (uint8_t)opaque;
            palette->colors[opaque++] = (GifColorType){pixel[0], pixel[1], pixel[2]};
        }
    }
    palette->opaque = opaque;
    palette->transparent = transparent ? opaque : -1;
    return 1;
}

// MARK: - Mapping

typedef enum Mapping { MAP_EXACT, MAP_NEAREST, MAP_DITHER } Mapping;

/// Writes the palette indices of row `y` of the frame into `e->row`.
static void map_row(Encoder *e, const CGIFPalette *palette, Mapping mapping, const uint8_t *source, uint32_t width, uint32_t y) {
    GifPixelType *out = e->row;
    if (mapping == MAP_EXACT) {
        uint32_t last = 0, slot = 0;
        for (uint32_t x = 0; x < width; x++, source += 4) {
            if (source[3] < 128) {
                out[x] = (GifPixelType)palette->transparent;
                continue;
            }
            uint32_t key = key_of(source);
            if (key != last) {
                last = key;
                slot = slot_of(e, key);
            }
            out[x] = e->slots[slot];
        }
        return;
    }
    cgif_q_map_row(&e->quantizer, palette, mapping == MAP_DITHER, source, width, y, out);
}

// MARK: - Writing

/// After an EGif* call: the output's own failure first (giflib ignores most failed writes), then giflib's.
static CGIFEncodeStatus checked(Encoder *e, int result, const char *what) {
    if (e->write_failed) return fail(e, CGIFEncodeNoMemory, "%s: out of memory for the output (%zu bytes written)", what, e->count);
    if (result != GIF_ERROR) return CGIFEncodeOK;
    const char *reason = GifErrorString(e->gif->Error);
    return fail(e, e->gif->Error == E_GIF_ERR_NOT_ENOUGH_MEM ? CGIFEncodeNoMemory : CGIFEncodeFailed, "%s: %s", what,
                reason ? reason : "unknown giflib error");
}

/// The palette as a giflib colour map (giflib copies it), padded to a power of two of at least 2.
static ColorMapObject color_map(CGIFPalette *palette) {
    int used = palette->opaque + (palette->transparent >= 0), bits = 1;
    while ((1 << bits) < used) bits++;
    return (ColorMapObject){.ColorCount = 1 << bits, .BitsPerPixel = bits, .SortFlag = false, .Colors = palette->colors};
}

/// Opens giflib's encoder and writes the header, the screen descriptor with the global colour map, and
/// the NETSCAPE2.0 extension when `loop_count` >= 0.
static CGIFEncodeStatus write_header(Encoder *e, const ColorMapObject *global, int gif89, int32_t loop_count, uint32_t width, uint32_t height) {
    int error = 0;
    e->gif = EGifOpen(e, write_output, &error);   // fails only when its allocations do
    if (!e->gif) return fail(e, CGIFEncodeNoMemory, "out of memory for giflib's encoder");
    EGifSetGifVersion(e->gif, gif89);   // giflib picks GIF89a by itself only in EGifSpew
    CGIFEncodeStatus status = checked(e, EGifPutScreenDesc(e->gif, (int)width, (int)height, 8, 0, global), "screen descriptor");
    if (status != CGIFEncodeOK || loop_count < 0) return status;
    // NETSCAPE2.0: sub-block 1 holds the repeat count (0 = forever), little-endian.
    static const GifByteType application[11] = {'N', 'E', 'T', 'S', 'C', 'A', 'P', 'E', '2', '.', '0'};
    GifByteType loop[3] = {1, (GifByteType)(loop_count & 0xFF), (GifByteType)(loop_count >> 8)};
    int ok = EGifPutExtensionLeader(e->gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK &&
             EGifPutExtensionBlock(e->gif, sizeof application, application) == GIF_OK &&
             EGifPutExtensionBlock(e->gif, sizeof loop, loop) == GIF_OK && EGifPutExtensionTrailer(e->gif) == GIF_OK;
    return checked(e, ok ? GIF_OK : GIF_ERROR, "loop extension");
}

/// Writes one frame: its graphic control extension, its descriptor (with a local colour map unless its
/// palette is the global one) and its rows.
static CGIFEncodeStatus write_frame(Encoder *e, const CGIFEncodeFrame *frame, CGIFPalette *palette, const ColorMapObject *global,
                                    Mapping mapping, int animated, uint32_t width, uint32_t height) {
    GifFileType *gif = e->gif;
    if (animated || palette->transparent >= 0 || frame->delay_centiseconds > 0) {
        GraphicsControlBlock control = {
            .DisposalMode = animated ? DISPOSE_BACKGROUND : DISPOSAL_UNSPECIFIED,
            .UserInputFlag = false,
            .DelayTime = (int)frame->delay_centiseconds,
            .TransparentColor = palette->transparent >= 0 ? palette->transparent : NO_TRANSPARENT_COLOR,
        };
        GifByteType extension[4];
        int length = (int)EGifGCBToExtension(&control, extension);
        CGIFEncodeStatus status = checked(e, EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, length, extension), "graphic control extension");
        if (status != CGIFEncodeOK) return status;
    }
    ColorMapObject local = color_map(palette);
    int same = local.ColorCount == global->ColorCount &&
               memcmp(local.Colors, global->Colors, (size_t)local.ColorCount * sizeof(GifColorType)) == 0;
    if (same && gif->Image.ColorMap) {   // giflib 5.2.1 would leak the previous frame's local map
        GifFreeMapObject(gif->Image.ColorMap);
        gif->Image.ColorMap = NULL;
    }
    CGIFEncodeStatus status = checked(e, EGifPutImageDesc(gif, 0, 0, (int)width, (int)height, false, same ? NULL : &local), "image descriptor");
    for (uint32_t y = 0; y < height && status == CGIFEncodeOK; y++) {
        map_row(e, palette, mapping, frame->rgba + (size_t)y * frame->bytes_per_row, width, y);
        status = checked(e, EGifPutLine(gif, e->row, (int)width), "pixel data");
    }
    return status;
}

static CGIFEncodeStatus validate(Encoder *e, const CGIFEncodeFrame *_Nullable frames, size_t frame_count, uint32_t width,
                                 uint32_t height, int32_t loop_count) {
    if (width < 1 || height < 1 || width > CGIF_ENCODE_MAX_SIDE || height > CGIF_ENCODE_MAX_SIDE) {
        return fail(e, CGIFEncodeFailed, "a GIF's sides are 1 to 65535 pixels, not %u × %u", width, height);
    }
    if (!frames || frame_count == 0) return fail(e, CGIFEncodeFailed, "no frames to encode");
    if (loop_count < -1 || loop_count > 65535) return fail(e, CGIFEncodeFailed, "loop count %d is outside -1 to 65535", (int)loop_count);
    size_t row_bytes = (size_t)width * 4;
    for (size_t i = 0; i < frame_count; i++) {
        const CGIFEncodeFrame *frame = &frames[i];
        if (!frame->rgba) return fail(e, CGIFEncodeFailed, "frame %zu has no pixels", i);
        if (frame->bytes_per_row < row_bytes || frame->bytes_per_row > (SIZE_MAX - row_bytes) / height) {
            return fail(e, CGIFEncodeFailed, "frame %zu has %zu bytes per row for %u pixels", i, frame->bytes_per_row, width);
        }
        if (frame->delay_centiseconds > 65535) {
            return fail(e, CGIFEncodeFailed, "frame %zu's delay of %u centiseconds is over 65535", i, frame->delay_centiseconds);
        }
    }
    return CGIFEncodeOK;
}

CGIFEncodeStatus cgif_encode(const CGIFEncodeFrame *frames, size_t frame_count, uint32_t width, uint32_t height,
                             int32_t loop_count, int dither, uint8_t **output, size_t *output_count, char *message,
                             size_t message_capacity) {
    *output = NULL;
    *output_count = 0;
    if (message && message_capacity > 0) message[0] = '\0';
    Encoder *e = calloc(1, sizeof *e);
    if (!e) {
        if (message && message_capacity > 0) snprintf(message, message_capacity, "out of memory");
        return CGIFEncodeNoMemory;
    }
    e->message = message;
    e->message_capacity = message_capacity;
    CGIFEncodeStatus status = validate(e, frames, frame_count, width, height, loop_count);
    if (status == CGIFEncodeOK) {
        e->row = malloc(width);
        int errors = cgif_q_start(&e->quantizer, width);   // the dither's error rows
        if (!e->row || !errors) status = fail(e, CGIFEncodeNoMemory, "out of memory for a row of %u pixels", width);
    }
    int animated = frame_count > 1;
    CGIFPalette global_palette;
    ColorMapObject global = {0};
    for (size_t i = 0; i < frame_count && status == CGIFEncodeOK; i++) {
        CGIFPalette palette;
        memset(&palette, 0, sizeof palette);   // black padding, and (0, 0, 0) for the transparent slot
        Mapping mapping = MAP_EXACT;
        if (!collect_exact(e, &frames[i], width, height, &palette)) {
            memset(&palette, 0, sizeof palette);
            mapping = dither ? MAP_DITHER : MAP_NEAREST;
            if (!cgif_q_quantize(&e->quantizer, &frames[i], width, height, animated, &palette)) {
                status = fail(e, CGIFEncodeNoMemory, "out of memory for the quantizer (frame %zu)", i);
                break;
            }
        }
        // In an animation a frame without transparent pixels still names an unused (0, 0, 0) slot as
        // transparent when there is room: decoders that dispose to the background colour unless the frame
        // has a transparent index (Pillow) then clear to transparent, as browsers and gif_shim.c do.
        if (animated && palette.transparent < 0 && palette.opaque < CGIF_MAX_COLORS) palette.transparent = palette.opaque;
        if (i == 0) {   // the first frame's palette is the global colour map
            global_palette = palette;
            global = color_map(&global_palette);
            int gif89 = animated || palette.transparent >= 0 || frames[0].delay_centiseconds > 0;
            status = write_header(e, &global, gif89, animated ? loop_count : -1, width, height);
        }
        if (status == CGIFEncodeOK) status = write_frame(e, &frames[i], &palette, &global, mapping, animated, width, height);
    }
    if (e->gif) {
        // Writes the trailer and frees the handle even when it fails (its Error field with it).
        int error = 0;
        int closed = EGifCloseFile(e->gif, &error);
        e->gif = NULL;
        if (status == CGIFEncodeOK && e->write_failed) {
            status = fail(e, CGIFEncodeNoMemory, "trailer: out of memory for the output (%zu bytes written)", e->count);
        } else if (status == CGIFEncodeOK && closed == GIF_ERROR) {
            const char *reason = GifErrorString(error);
            status = fail(e, CGIFEncodeFailed, "closing the encoder: %s", reason ? reason : "unknown giflib error");
        }
    }
    if (status == CGIFEncodeOK) {
        uint8_t *fitted = realloc(e->bytes, e->count);   // give back the slack; keep the buffer if that fails
        *output = fitted ? fitted : e->bytes;
        *output_count = e->count;
    } else {
        free(e->bytes);
    }
    cgif_q_free(&e->quantizer);
    free(e->row);
    free(e);
    return status;
}

void cgif_encode_free(void *pointer) {
    free(pointer);
}
