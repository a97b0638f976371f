// The giflib layer behind CGIF.h. giflib reports errors by return codes; nothing here longjmps.

#include "CGIF.h"

#include <gif_lib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// MARK: - Scanning

/// Skips a chain of data sub-blocks starting at `*at`; returns 0 when the chain ends inside the data.
static int skip_sub_blocks(const uint8_t *data, size_t size, size_t *at) {
    while (*at < size) {
        uint8_t length = data[*at];
        *at += 1;
        if (length == 0) return 1;
        *at += length;
    }
    return 0;
}

CGIFScanStatus cgif_scan(const uint8_t *data, size_t size, CGIFInfo *info) {
    memset(info, 0, sizeof *info);
    info->loop_count = -1;
    if (size < 6 || memcmp(data, "GIF", 3) != 0 || (memcmp(data + 3, "87a", 3) != 0 && memcmp(data + 3, "89a", 3) != 0)) {
        return CGIFScanNotGIF;
    }
    if (size < 13) return CGIFScanTruncated;
    info->canvas_width = (uint32_t)data[6] | (uint32_t)data[7] << 8;
    info->canvas_height = (uint32_t)data[8] | (uint32_t)data[9] << 8;
    size_t at = 13;
    if (data[10] & 0x80) at += 3u * (2u << (data[10] & 7));
    if (at > size) return CGIFScanTruncated;
    while (at < size) {
        uint8_t introducer = data[at++];
        if (introducer == 0x3B) break;                       // trailer
        if (introducer == 0x21) {                            // extension: label, then sub-blocks
            if (at >= size) break;
            uint8_t label = data[at++];
            if (label == 0xFF && at + 12 <= size && data[at] == 11 && memcmp(data + at + 1, "NETSCAPE2.0", 11) == 0) {
                size_t sub = at + 12;
                if (info->loop_count < 0 && info->frame_count == 0 && sub + 4 <= size && data[sub] >= 3 && data[sub + 1] == 1) {
                    info->loop_count = (int32_t)((uint32_t)data[sub + 2] | (uint32_t)data[sub + 3] << 8);
                }
            }
            if (!skip_sub_blocks(data, size, &at)) break;
        } else if (introducer == 0x2C) {                     // image: descriptor, palette, LZW size, sub-blocks
            if (at + 9 > size) break;
            uint8_t packed = data[at + 8];
            at += 9;
            if (packed & 0x80) at += 3u * (2u << (packed & 7));
            at += 1;                                         // LZW minimum code size
            info->frame_count += 1;
            if (at > size || !skip_sub_blocks(data, size, &at)) break;
            info->complete_frame_count += 1;
        } else {
            break;                                           // not a block: the decoder will say so
        }
    }
    return CGIFScanOK;
}

CGIFScanStatus cgif_scan_more(const uint8_t *data, size_t size, CGIFScanState *state) {
    CGIFInfo *info = &state->info;
    if (state->phase == 0) {
        if (size >= 6 && (memcmp(data, "GIF", 3) != 0 || (memcmp(data + 3, "87a", 3) != 0 && memcmp(data + 3, "89a", 3) != 0))) {
            return CGIFScanNotGIF;
        }
        if (size < 13) return CGIFScanTruncated;
        size_t header = 13;
        if (data[10] & 0x80) header += 3u * (2u << (data[10] & 7));
        if (header > size) return CGIFScanTruncated;
        memset(info, 0, sizeof *info);
        info->loop_count = -1;
        info->canvas_width = (uint32_t)data[6] | (uint32_t)data[7] << 8;
        info->canvas_height = (uint32_t)data[8] | (uint32_t)data[9] << 8;
        state->next = header;
        state->phase = 1;
    }
    while (state->phase != 4) {
        size_t at = state->next;
        if (state->phase == 1) {
            if (at >= size) break;
            uint8_t introducer = data[at];
            if (introducer == 0x3B) {
                state->phase = 4;
            } else if (introducer == 0x21) {
                if (at + 2 > size) break;
                if (data[at + 1] == 0xFF) {
                    // An application extension: wait until NETSCAPE2.0's loop count could be read.
                    if (at + 18 > size) break;
                    if (data[at + 2] == 11 && memcmp(data + at + 3, "NETSCAPE2.0", 11) == 0 && info->loop_count < 0
                        && info->frame_count == 0 && data[at + 14] >= 3 && data[at + 15] == 1) {
                        info->loop_count = (int32_t)((uint32_t)data[at + 16] | (uint32_t)data[at + 17] << 8);
                    }
                }
                state->next = at + 2;
                state->phase = 2;
            } else if (introducer == 0x2C) {
                if (at + 10 > size) break;
                size_t start = at + 10;
                if (data[at + 9] & 0x80) start += 3u * (2u << (data[at + 9] & 7));
                if (start + 1 > size) break;   // the LZW minimum code size
                state->next = start + 1;
                state->phase = 3;
            } else {
                state->phase = 4;              // not a block: the decoder will say so
            }
        } else {
            if (at >= size) break;
            uint8_t length = data[at];
            if (length == 0) {
                state->next = at + 1;
                if (state->phase == 3) {
                    info->complete_frame_count += 1;
                    info->frame_count = info->complete_frame_count;
                }
                state->phase = 1;
            } else {
                if (at + 1 + length > size) break;
                state->next = at + 1 + length;
            }
        }
    }
    return CGIFScanOK;
}

// MARK: - Decoding

struct CGIFDecoder {
    GifFileType *gif;
    const uint8_t *data;
    size_t size;
    size_t offset;
    // The graphic control extension that applies to the next frame.
    int pending_transparent;
    uint32_t pending_delay;
    uint32_t pending_disposal;
    // The previous frame, whose disposal is applied before the next one is drawn.
    int has_previous;
    CGIFFrame previous;
    uint8_t *_Nullable saved_canvas;   // the canvas before the previous frame (disposal 3)
    GifPixelType *_Nullable row;
    size_t row_capacity;
    int failed;
    char message[160];
};

static int read_from_memory(GifFileType *gif, GifByteType *buffer, int length) {
    CGIFDecoder *decoder = gif->UserData;
    size_t available = decoder->size - decoder->offset;
    size_t count = (size_t)length < available ? (size_t)length : available;
    memcpy(buffer, decoder->data + decoder->offset, count);
    decoder->offset += count;
    return (int)count;
}

CGIFDecoder *cgif_decoder_create(const uint8_t *data, size_t size, int *error) {
    CGIFDecoder *decoder = calloc(1, sizeof *decoder);
    if (!decoder) {
        *error = D_GIF_ERR_NOT_ENOUGH_MEM;
        return NULL;
    }
    decoder->data = data;
    decoder->size = size;
    decoder->pending_transparent = -1;
    decoder->gif = DGifOpen(decoder, read_from_memory, error);
    if (!decoder->gif) {
        free(decoder);
        return NULL;
    }
    return decoder;
}

void cgif_decoder_set_data(CGIFDecoder *decoder, const uint8_t *data, size_t size) {
    decoder->data = data;
    decoder->size = size;
}

static CGIFFrameStatus fail(CGIFDecoder *decoder, const char *what) {
    int code = decoder->gif->Error;
    const char *reason = GifErrorString(code);
    snprintf(decoder->message, sizeof decoder->message, "%s: %s", what, reason ? reason : "unknown giflib error");
    decoder->failed = 1;
    return CGIFFrameFailed;
}

static CGIFFrameStatus fail_with(CGIFDecoder *decoder, const char *message) {
    snprintf(decoder->message, sizeof decoder->message, "%s", message);
    decoder->failed = 1;
    return CGIFFrameFailed;
}

/// Clears `frame`'s part of the canvas to transparent (disposal 2, as browsers do).
static void clear_rect(uint8_t *canvas, uint32_t canvas_width, uint32_t canvas_height, const CGIFFrame *frame) {
    if (frame->left >= canvas_width || frame->top >= canvas_height) return;
    uint32_t right = frame->width > canvas_width - frame->left ? canvas_width : frame->left + frame->width;
    uint32_t bottom = frame->height > canvas_height - frame->top ? canvas_height : frame->top + frame->height;
    for (uint32_t y = frame->top; y < bottom; y++) {
        memset(canvas + ((size_t)y * canvas_width + frame->left) * 4, 0, (size_t)(right - frame->left) * 4);
    }
}

/// Reads one graphic control extension's fields, then skips the rest of any extension.
static int read_extension(CGIFDecoder *decoder) {
    int code = 0;
    GifByteType *block = NULL;
    if (DGifGetExtension(decoder->gif, &code, &block) == GIF_ERROR) return 0;
    if (code == GRAPHICS_EXT_FUNC_CODE && block && block[0] >= 4) {
        decoder->pending_disposal = (block[1] >> 2) & 7;
        decoder->pending_delay = (uint32_t)block[2] | (uint32_t)block[3] << 8;
        decoder->pending_transparent = (block[1] & 1) ? block[4] : -1;
    }
    while (block) {
        if (DGifGetExtensionNext(decoder->gif, &block) == GIF_ERROR) return 0;
    }
    return 1;
}

/// Palette entry `index` of `map` as RGB: black outside the palette, gray when there is no palette.
static void palette_color(const ColorMapObject *_Nullable map, int index, uint8_t *out) {
    if (!map) {
        out[0] = out[1] = out[2] = (uint8_t)index;
    } else if (index >= 0 && index < map->ColorCount) {
        out[0] = map->Colors[index].Red;
        out[1] = map->Colors[index].Green;
        out[2] = map->Colors[index].Blue;
    } else {
        out[0] = out[1] = out[2] = 0;
    }
}

/// The canvas before the first frame, as the corpus reference (Pillow) paints it: the transparent
/// index's colour with alpha 0 when the first frame has transparency, else the opaque colour of
/// index 0 of the first frame's palette (Pillow's zero-filled index image; the logical screen's
/// background index is ignored, as browsers ignore it). Only what the first frame leaves uncovered,
/// or transparent, shows it: browsers show those parts transparent, which differs only in RGB values
/// under alpha 0, and in the uncovered border of a first frame smaller than the canvas.
static void fill_first_canvas(CGIFDecoder *decoder, uint8_t *canvas, const ColorMapObject *_Nullable frame_map) {
    GifFileType *gif = decoder->gif;
    uint8_t color[4];
    if (decoder->pending_transparent >= 0) {
        palette_color(frame_map, decoder->pending_transparent, color);
        color[3] = 0;
    } else {
        palette_color(frame_map, 0, color);
        color[3] = 255;
    }
    size_t count = (size_t)gif->SWidth * (size_t)gif->SHeight;
    for (size_t i = 0; i < count; i++) memcpy(canvas + i * 4, color, 4);
}

/// Decodes the frame whose descriptor was just read onto `canvas`, row by row.
static CGIFFrameStatus draw_frame(CGIFDecoder *decoder, uint8_t *canvas, const CGIFFrame *frame) {
    GifFileType *gif = decoder->gif;
    uint32_t canvas_width = (uint32_t)gif->SWidth, canvas_height = (uint32_t)gif->SHeight;
    const ColorMapObject *map = gif->Image.ColorMap ? gif->Image.ColorMap : gif->SColorMap;
    if (decoder->row_capacity < frame->width) {
        free(decoder->row);
        decoder->row = malloc(frame->width);
        if (!decoder->row) {
            decoder->row_capacity = 0;
            decoder->failed = 1;
            snprintf(decoder->message, sizeof decoder->message, "out of memory for a row of %u pixels", frame->width);
            return CGIFFrameNoMemory;
        }
        decoder->row_capacity = frame->width;
    }
    static const uint32_t pass_start[4] = {0, 4, 2, 1}, pass_step[4] = {8, 8, 4, 2};
    int passes = gif->Image.Interlace ? 4 : 1;
    for (int pass = 0; pass < passes; pass++) {
        uint32_t start = gif->Image.Interlace ? pass_start[pass] : 0, step = gif->Image.Interlace ? pass_step[pass] : 1;
        for (uint32_t y = start; y < frame->height; y += step) {
            if (DGifGetLine(gif, decoder->row, (int)frame->width) == GIF_ERROR) return fail(decoder, "pixel data");
            uint32_t canvas_y = frame->top + y;
            if (canvas_y >= canvas_height || frame->left >= canvas_width) continue;
            uint32_t visible = frame->width > canvas_width - frame->left ? canvas_width - frame->left : frame->width;
            uint8_t *out = canvas + ((size_t)canvas_y * canvas_width + frame->left) * 4;
            for (uint32_t x = 0; x < visible; x++, out += 4) {
                int index = decoder->row[x];
                if (index == decoder->pending_transparent) continue;
                palette_color(map, index, out);
                out[3] = 255;
            }
        }
    }
    return CGIFFrameDrawn;
}

CGIFFrameStatus cgif_decoder_next_frame(CGIFDecoder *decoder, uint8_t *canvas, CGIFFrame *frame) {
    if (decoder->failed) return CGIFFrameFailed;
    GifFileType *gif = decoder->gif;
    uint32_t canvas_width = (uint32_t)gif->SWidth, canvas_height = (uint32_t)gif->SHeight;
    for (;;) {
        GifRecordType type;
        if (decoder->offset >= decoder->size && decoder->has_previous) return CGIFFrameEnd;   // no trailer
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) return fail(decoder, "block");
        if (type == TERMINATE_RECORD_TYPE) return CGIFFrameEnd;
        if (type == EXTENSION_RECORD_TYPE) {
            if (!read_extension(decoder)) return fail(decoder, "extension");
            continue;
        }
        if (type != IMAGE_DESC_RECORD_TYPE) return fail_with(decoder, "block: not an image, extension or trailer");
        if (DGifGetImageDesc(gif) == GIF_ERROR) return fail(decoder, "image descriptor");
        if (gif->Image.Width <= 0 || gif->Image.Height <= 0) return fail_with(decoder, "a frame has a zero width or height");
        frame->left = (uint32_t)gif->Image.Left;
        frame->top = (uint32_t)gif->Image.Top;
        frame->width = (uint32_t)gif->Image.Width;
        frame->height = (uint32_t)gif->Image.Height;
        frame->delay_centiseconds = decoder->pending_delay;
        frame->disposal = decoder->pending_disposal;
        if (!decoder->has_previous) {
            fill_first_canvas(decoder, canvas, gif->Image.ColorMap ? gif->Image.ColorMap : gif->SColorMap);
        } else {
            if (decoder->previous.disposal == 2) {
                clear_rect(canvas, canvas_width, canvas_height, &decoder->previous);
            } else if (decoder->previous.disposal == 3 && decoder->saved_canvas) {
                memcpy(canvas, decoder->saved_canvas, (size_t)canvas_width * canvas_height * 4);
            }
        }
        if (frame->disposal == 3) {
            if (!decoder->saved_canvas) decoder->saved_canvas = malloc((size_t)canvas_width * canvas_height * 4);
            if (!decoder->saved_canvas) {
                decoder->failed = 1;
                snprintf(decoder->message, sizeof decoder->message, "out of memory for the saved canvas");
                return CGIFFrameNoMemory;
            }
            memcpy(decoder->saved_canvas, canvas, (size_t)canvas_width * canvas_height * 4);
        }
        CGIFFrameStatus status = draw_frame(decoder, canvas, frame);
        if (status != CGIFFrameDrawn) return status;
        decoder->previous = *frame;
        decoder->has_previous = 1;
        decoder->pending_transparent = -1;
        decoder->pending_delay = 0;
        decoder->pending_disposal = 0;
        return CGIFFrameDrawn;
    }
}

const char *cgif_decoder_message(const CGIFDecoder *decoder) {
    return decoder->message;
}

void cgif_decoder_destroy(CGIFDecoder *decoder) {
    if (!decoder) return;
    int error = 0;
    DGifCloseFile(decoder->gif, &error);
    free(decoder->saved_canvas);
    free(decoder->row);
    free(decoder);
}
