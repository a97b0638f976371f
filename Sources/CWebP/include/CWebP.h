// CWebP: a small C layer over libwebp (1.2, with libwebpdemux) for WebImageWebP.
//
// What libwebp does, read from decode.h, demux.h and encode.h (libwebp 1.2.4, Debian 12):
// - Every call reports failure by return value (VP8StatusCode, NULL, or 0); nothing longjmps, nothing
//   prints. Corrupt or truncated VP8/VP8L data is VP8_STATUS_BITSTREAM_ERROR / NOT_ENOUGH_DATA.
// - WebPDecode() with `options.use_scaling` decodes straight to a smaller size (the scaling happens
//   on each decoded row, so a thumbnail never holds the full-size image); the output can be a
//   caller-owned buffer (`is_external_memory`), so pixels land in their final memory.
// - WebPIDecoder (WebPIDecode with a config) decodes a still image as its bytes arrive, rows final as
//   they come (WebPIDecGetRGB's last_y); it keeps a pointer to the config's options, so the config must
//   outlive it. WebPIAppend copies the bytes it is given.
// - WebPAnimDecoder composites animation frames (blending and disposal) onto a canvas it owns, and
//   hands out a pointer to it that stays valid until the next call; it needs the whole file.
// - WebPAnimEncoder (libwebpmux) takes whole frames with their start times and finds the smallest
//   sub-rectangles and blend modes itself; a frame identical to the one before is merged into it (its
//   duration added), so the frame count can drop. Failures are return values with a message from
//   WebPAnimEncoderGetError(). Its output comes from WebPMalloc (freed with WebPFree).
// - Every call is synchronous and CPU-bound on the calling thread; the encoders call their writer back
//   on that same thread. There are no other callbacks. With `options.use_threads` (set here for large
//   stills) WebPDecode filters rows on a worker thread it starts and joins within the call.
//   Distinct decoders are independent.

#ifndef CWEBP_H
#define CWEBP_H

#include <stddef.h>
#include <stdint.h>

#pragma clang assume_nonnull begin

/// What the file's headers say.
typedef struct CWebPInfo {
    int width, height;          // the canvas for an animation
    int has_alpha;              // the header's alpha flag
    int is_lossless;            // VP8L: its pixels carry alpha even when the header's hint says none
    int frame_count;            // 1 for a still image
    int loop_count;             // 0 = forever (animations only)
} CWebPInfo;

/// Reads the headers. Returns 0 and fills `info`, or libwebp's VP8StatusCode (non-zero) on failure.
int cwebp_info(const uint8_t *data, size_t size, CWebPInfo *info);

/// Reads the first headers only (works on the start of a file): as `cwebp_info`, except that an
/// animation reports `frame_count` 0 (not yet known). Returns 0, 7 (VP8_STATUS_NOT_ENOUGH_DATA) while
/// the headers are incomplete, or another VP8StatusCode.
int cwebp_features(const uint8_t *data, size_t size, CWebPInfo *info);

typedef struct CWebPIncremental CWebPIncremental;

/// Starts an incremental decode of a still image (WebPIDecoder) into the caller's `output`
/// (`out_width × out_height`, RGB or RGBA by `channels`, `stride` bytes apart; it must outlive the
/// decoder), scaling on load when that is smaller than `width × height`. NULL when memory runs out.
CWebPIncremental *_Nullable cwebp_incremental_create(int width, int height, int channels, int out_width,
                                                     int out_height, uint8_t *output, size_t stride);

/// Feeds the next bytes (copied). Returns 0 when the image is complete, 5 (VP8_STATUS_SUSPENDED) when
/// more bytes are needed, or another VP8StatusCode on corrupt data.
int cwebp_incremental_append(CWebPIncremental *decoder, const uint8_t *data, size_t size);

/// How many rows of the output are final so far.
int cwebp_incremental_rows(const CWebPIncremental *decoder);

void cwebp_incremental_destroy(CWebPIncremental *_Nullable decoder);

/// Finds the file's `EXIF` chunk: returns 1 with its payload's offset and length within `data`, or 0.
int cwebp_exif(const uint8_t *data, size_t size, size_t *offset, size_t *length);

/// Images of at least this many pixels decode with `use_threads` (a filtering thread of libwebp's own).
#define CWEBP_THREADED_PIXELS (4u * 1024u * 1024u)

/// Decodes a still image (or an animation's first frame, without compositing) to `out_width ×
/// out_height` RGBA (`channels` 4) or RGB (3) rows in `output` (`stride` bytes apart), scaling on
/// load when that is smaller than the image. Returns 0, or libwebp's VP8StatusCode.
int cwebp_decode(const uint8_t *data, size_t size, int channels, int out_width, int out_height,
                 uint8_t *output, size_t stride);

typedef struct CWebPAnimation CWebPAnimation;

/// Opens an animation decoder (RGBA, straight alpha). NULL when the data is not a valid animation.
CWebPAnimation *_Nullable cwebp_animation_create(const uint8_t *data, size_t size);

/// Composites the next frame: `canvas` points to width × height × 4 bytes valid until the next call,
/// `timestamp_ms` is the frame's end time. Returns 1 for a frame, 0 at the end, -1 on corrupt data.
int cwebp_animation_next(CWebPAnimation *animation, const uint8_t *_Nullable *_Nonnull canvas, int *timestamp_ms);

void cwebp_animation_destroy(CWebPAnimation *_Nullable animation);

/// Encodes `width × height` RGB (`channels` 3) or RGBA (4) rows, `stride` bytes apart: lossy at
/// `quality` (0–100) or lossless, with `method` (0 fast – 6 small). Returns the file's size and sets
/// `*output` (free it with `cwebp_free`), or 0 on failure with `*error` set to libwebp's
/// WebPEncodingError.
size_t cwebp_encode(const uint8_t *pixels, int width, int height, size_t stride, int channels, float quality,
                    int lossless, int method, uint8_t *_Nullable *_Nonnull output, int *error);

void cwebp_free(void *_Nullable pointer);

typedef struct CWebPAnimationEncoder CWebPAnimationEncoder;

/// Starts an animation of `width × height` frames that plays `loop_count` times (0 forever), each
/// frame lossy at `quality` (0–100) or lossless (exact RGB under alpha 0 too), with `method` (0–6).
/// NULL when memory runs out or the parameters are invalid.
CWebPAnimationEncoder *_Nullable cwebp_animation_encoder_create(int width, int height, int loop_count,
                                                               float quality, int lossless, int method);

/// Adds a frame of RGB (`channels` 3) or RGBA (4) rows, `stride` bytes apart, shown from
/// `timestamp_ms` on. Returns 1, or 0 with `cwebp_animation_encoder_message` set.
int cwebp_animation_encoder_add(CWebPAnimationEncoder *encoder, const uint8_t *pixels, size_t stride,
                                int channels, int timestamp_ms);

/// Ends the animation at `end_timestamp_ms` and writes the file: returns its size and sets `*output`
/// (free it with `cwebp_free`), or 0 with the message set.
size_t cwebp_animation_encoder_finish(CWebPAnimationEncoder *encoder, int end_timestamp_ms,
                                      uint8_t *_Nullable *_Nonnull output);

/// Why the last call failed (libwebpmux's message), valid while the encoder lives.
const char *cwebp_animation_encoder_message(const CWebPAnimationEncoder *encoder);

void cwebp_animation_encoder_destroy(CWebPAnimationEncoder *_Nullable encoder);

#pragma clang assume_nonnull end

#endif
