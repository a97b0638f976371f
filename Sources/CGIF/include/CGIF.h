// CGIF: a small C layer over giflib (5.2) for WebImage's GIF coder.
//
// What giflib does, read from gif_lib.h, dgif_lib.c and its NEWS (giflib 5.2.1, Debian 12):
// - Errors are return codes (GIF_ERROR) with the reason in GifFile->Error (D_GIF_ERR_*); nothing longjmps,
//   nothing prints. A read past the end of the input is D_GIF_ERR_READ_FAILED; bad LZW codes are
//   D_GIF_ERR_IMAGE_DEFECT; a code table overflow D_GIF_ERR_EOF_TOO_SOON.
// - DGifSlurp() allocates a raster of Width × Height bytes for every frame before decoding it, whatever
//   the canvas size: a frame descriptor of 65535 × 65535 costs 4 GiB. This layer never calls it: frames are
//   decoded one row at a time (DGifGetLine) into one row buffer and composited onto the caller's canvas,
//   clipped to it, so memory is the canvas plus one row whatever the file declares.
// - DGifGetLine() does not de-interlace: rows come in the four passes' order; this layer places them.
// - After the last pixel of a frame giflib skips any further LZW data silently (too much pixel data is
//   not an error, as in Pillow).
// - Every call is synchronous and CPU-bound, reads only from the memory handed in, and calls back (the
//   read function) on the calling thread. A decoder is used by one thread at a time.

#ifndef CGIF_H
#define CGIF_H

#include <stddef.h>
#include <stdint.h>

#pragma clang assume_nonnull begin

/// What a walk over a GIF's blocks (no LZW decoding) found.
typedef struct CGIFInfo {
    /// The logical screen (canvas) size.
    uint32_t canvas_width;
    uint32_t canvas_height;
    /// The number of image descriptors (frames).
    uint32_t frame_count;
    /// The number of frames whose data (and the extensions before them) lie wholly inside the data:
    /// what an incremental decode can composite so far.
    uint32_t complete_frame_count;
    /// The NETSCAPE2.0 loop count of the first such extension before the first frame (0 = forever), or
    /// -1 when there is none there (one after a frame is ignored, as Pillow, the corpus reference, does).
    int32_t loop_count;
} CGIFInfo;

/// The outcome of `cgif_scan`.
typedef enum __attribute__((enum_extensibility(closed))) CGIFScanStatus {
    CGIFScanOK = 0,
    /// The data does not start with a GIF87a/GIF89a signature.
    CGIFScanNotGIF = 1,
    /// The data ends before the logical screen descriptor (and its palette) is complete.
    CGIFScanTruncated = 2,
} CGIFScanStatus;

/// Walks `data`'s blocks without decoding pixels: canvas size, frame count and loop count, in time
/// linear in the number of blocks and without allocating. Stops quietly at the trailer, at the end
/// of the data or at a byte that starts no block (the decoder reports those).
CGIFScanStatus cgif_scan(const uint8_t *data, size_t size, CGIFInfo *info);

/// A block walk that goes on as bytes arrive (for incremental decoding): `cgif_scan_more` walks only
/// the bytes it has not walked yet, so feeding a file byte by byte costs time linear in its size.
/// Zero it to start.
typedef struct CGIFScanState {
    /// Canvas size and loop count (once the header is in); `complete_frame_count` counts frames whose
    /// data and terminator have arrived. `frame_count` equals it.
    CGIFInfo info;
    /// The offset of the next byte to walk, always at a point where the walk can resume.
    size_t next;
    /// 0 header, 1 between blocks, 2 inside an extension's sub-blocks, 3 inside an image's sub-blocks,
    /// 4 done (the trailer, or a byte that starts no block).
    int phase;
} CGIFScanState;

/// Walks the bytes of `data` (the file so far, a longer copy of what earlier calls saw) that `state`
/// has not walked. Returns `CGIFScanNotGIF` for a wrong signature, `CGIFScanTruncated` until the
/// header is complete, else `CGIFScanOK`.
CGIFScanStatus cgif_scan_more(const uint8_t *data, size_t size, CGIFScanState *state);

/// One frame as the file describes it.
typedef struct CGIFFrame {
    /// The frame's rectangle (may extend past the canvas; only the part inside is drawn).
    uint32_t left, top, width, height;
    /// The stored delay, in hundredths of a second (0 when there is no graphic control extension).
    uint32_t delay_centiseconds;
    /// The disposal method (0–7; 2 = restore to transparent, 3 = restore the previous canvas).
    uint32_t disposal;
} CGIFFrame;

typedef struct CGIFDecoder CGIFDecoder;

/// Opens a decoder over `data` (not copied: it must outlive the decoder). Returns NULL when giflib
/// refuses the header or memory runs out; `error` then holds giflib's D_GIF_ERR_* code.
CGIFDecoder *_Nullable cgif_decoder_create(const uint8_t *data, size_t size, int *error);

/// The status of `cgif_decoder_next_frame`.
typedef enum __attribute__((enum_extensibility(closed))) CGIFFrameStatus {
    /// A frame was composited onto the canvas.
    CGIFFrameDrawn = 0,
    /// The trailer (or the end of the data after a complete frame) was reached: no more frames.
    CGIFFrameEnd = 1,
    /// The data is corrupt or truncated; `cgif_decoder_message` says why. Sticky.
    CGIFFrameFailed = 2,
    /// Memory for the saved canvas (disposal 3) or a row could not be allocated. Sticky.
    CGIFFrameNoMemory = 3,
} CGIFFrameStatus;

/// Applies the previous frame's disposal to `canvas`, then decodes the next frame onto it (RGBA,
/// straight alpha, `canvas_width × canvas_height × 4` bytes, kept by the caller between calls; the first
/// call paints it first, see gif_shim.c), as browsers composite: transparent pixels leave the canvas as
/// it is, indices outside the palette are opaque black, a file without any palette reads indices as gray.
CGIFFrameStatus cgif_decoder_next_frame(CGIFDecoder *decoder, uint8_t *canvas, CGIFFrame *frame);

/// Points the decoder at `data`, a longer copy of the bytes it was reading (an incremental decode's
/// buffer after more bytes arrived): the bytes it has read must be unchanged. Call
/// `cgif_decoder_next_frame` only for frames `cgif_scan` counts as complete, or once all bytes are in.
void cgif_decoder_set_data(CGIFDecoder *decoder, const uint8_t *data, size_t size);

/// Why the last call failed, for people.
const char *cgif_decoder_message(const CGIFDecoder *decoder);

/// Frees the decoder (not the data or the canvas).
void cgif_decoder_destroy(CGIFDecoder *_Nullable decoder);

#pragma clang assume_nonnull end

// The encoder (gif_encoder.c, gif_quantize.c) has a header of its own.
#include "CGIFEncoder.h"

#endif
