// The colour quantizer behind gif_encoder.c, internal to CGIF: this header sits beside the .c files, outside
// include/ (the module's public umbrella directory), so Swift never sees it, and its functions are hidden.
//
// A frame with more than 256 colours gets a palette from a variance-based median cut over a histogram of
// 6 bits per channel (with exact centroids), refined by two k-means passes; its pixels are then mapped to
// the palette colour nearest the centre of their histogram cell (remembered per cell), either directly or
// through Floyd–Steinberg error diffusion (serpentine). Everything is deterministic.

#ifndef CGIF_GIF_QUANTIZE_H
#define CGIF_GIF_QUANTIZE_H

#include "CGIFEncoder.h"

#include <gif_lib.h>
#include <stdint.h>

#pragma clang assume_nonnull begin

#define CGIF_Q_INTERNAL __attribute__((visibility("hidden")))

enum { CGIF_MAX_COLORS = 256 };

/// A frame's palette: opaque colours at 0 ..< opaque, then the transparent slot (0, 0, 0) if any, then black.
typedef struct CGIFPalette {
    GifColorType colors[CGIF_MAX_COLORS];
    int opaque;
    int transparent;   // == opaque when there is a transparent slot, else -1
} CGIFPalette;

struct cgif_q_bin;
struct cgif_q_entry;

/// The quantizer's work space, reused from frame to frame of one encode. Zero it before `cgif_q_start`.
typedef struct CGIFQuantizer {
    struct cgif_q_bin *_Nullable histogram;   // 2^18 cells, all zero between frames
    struct cgif_q_entry *_Nullable entries;   // the non-empty cells of one frame
    uint16_t *_Nullable cache;                // 2^18: 1 + the palette colour nearest a cell's centre, 0 = not yet
    uint8_t by_green[CGIF_MAX_COLORS];        // the opaque palette indices sorted by green, for the nearest search
    int32_t *_Nullable errors;                // Floyd–Steinberg: two rows of (width + 2) × 3 errors, in sixteenths
} CGIFQuantizer;

/// Allocates the error rows for frames `width` pixels wide (the tables come with the first quantized
/// frame). Returns 0 when that fails.
CGIF_Q_INTERNAL int cgif_q_start(CGIFQuantizer *q, uint32_t width);

/// Builds a quantized palette for the frame: 255 colours when it has transparent pixels or `reserve` asks
/// for a spare slot, else 256. Returns 0 when the work space cannot be allocated.
CGIF_Q_INTERNAL int cgif_q_quantize(CGIFQuantizer *q, const CGIFEncodeFrame *frame, uint32_t width, uint32_t height,
                                    int reserve, CGIFPalette *palette);

/// Writes the palette indices of row `y` of a frame quantized by `cgif_q_quantize` into `out`: the nearest
/// colours, or with `dither` Floyd–Steinberg (rows must then come in order from 0).
CGIF_Q_INTERNAL void cgif_q_map_row(CGIFQuantizer *q, const CGIFPalette *palette, int dither, const uint8_t *source,
                                    uint32_t width, uint32_t y, GifPixelType *out);

/// Frees the work space.
CGIF_Q_INTERNAL void cgif_q_free(CGIFQuantizer *q);

#pragma clang assume_nonnull end

#endif
