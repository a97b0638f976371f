// CJXL: a small C layer over libjxl (0.7, Debian 12) for WebImage's JPEG XL coder.
//
// What libjxl 0.7 does, read from jxl/decode.h, jxl/encode.h and its 0.7.0 sources (lib/jxl/decode.cc):
// - Every call returns a status (JXL_DEC_* / JXL_ENC_*); nothing longjmps. On bad input the decoder
//   returns JXL_DEC_ERROR with no message (this layer writes its own); Debian's build also prints a
//   line to stderr for many failures ("./lib/jxl/decode.cc:NNN: ..."), which cannot be turned off.
// - Truncated input: all the bytes are given at once and JxlDecoderCloseInput is called, so libjxl
//   reports missing data as JXL_DEC_ERROR ("missing input") or, in places, JXL_DEC_NEED_MORE_INPUT;
//   both are errors here, never a frame (a frame is returned only at JXL_DEC_FULL_IMAGE).
// - libjxl has no size limit of its own outside fuzzing builds, and in 0.7 it does not return an
//   error when it runs out of memory: a failed allocation of an image plane hits JXL_CHECK and
//   traps (kills the process). JxlMemoryManager only sees the decoder object itself (a few
//   kilobytes); the planes, frame buffers and render pipeline use malloc directly. So the only real
//   protection is to look at the size in cjxl_info (and the frame count, cjxl_count_frames) before
//   decoding pixels, and `max_bytes` of cjxl_decoder_create refuses up front an image whose
//   estimated working memory exceeds it (see there).
// - JxlDecoderSetKeepOrientation, SetUnpremultiplyAlpha and SubscribeEvents only work before the
//   first JxlDecoderProcessInput; JxlDecoderRewind in 0.7.0 also forgets the subscribed events
//   (decode.cc clears events_wanted), so this layer restarts with JxlDecoderReset when the
//   orientation mode changes and skips the frames it has already returned (JxlDecoderSkipFrames).
// - Frames are coalesced (libjxl's default): every frame is the whole canvas after blending, and
//   only displayed frames are returned (zero-duration layers are merged into the next one).
// - Colour: pixels come out in the encoding libjxl picks for the data. For an image stored without
//   XYB (uses_original_profile) that is the original encoding; for an XYB image with an enumerated
//   encoding it is that encoding; for an XYB image whose original profile is an ICC profile libjxl
//   would give linear sRGB, so this layer asks for sRGB (JxlDecoderSetPreferredColorProfile), as the
//   corpus reference (tools/jxl2rgba.c ... srgb) does. Grey images come out as RGBA with R = G = B.
// - Threads: no parallel runner is set, so every call decodes or encodes on the calling thread and
//   blocks until done; no callback is made on any thread. A decoder is used by one thread at a time;
//   separate decoders and encoders may run on different threads at once.

#ifndef CJXL_H
#define CJXL_H

#include <stddef.h>
#include <stdint.h>

// Clang (and so Swift) reads the nullability annotations; other compilers (gcc, for tests) ignore them.
#if defined(__clang__)
#pragma clang assume_nonnull begin
#else
#ifndef _Nullable
#define _Nullable
#endif
#ifndef _Nonnull
#define _Nonnull
#endif
#endif

typedef struct CJXLDecoder CJXLDecoder;

typedef struct {
    int width, height;           // the stored size (before orientation)
    int has_alpha;               // alpha_bits > 0
    int is_grey;                 // num_color_channels == 1
    int bits;                    // bits_per_sample of the codestream (8, 10, 12, 16, 32 for float...)
    int orientation;             // JxlBasicInfo.orientation, 1..8 (EXIF numbering)
    int have_animation;
    int loop_count;              // num_loops (0 = forever)
    int tps_numerator, tps_denominator;  // ticks per second of frame durations (0/0 when not animated)
} cjxl_info;

/// Reads `data` (not copied: it must outlive the decoder) up to the basic info and colour encoding; no
/// pixels are decoded. Returns NULL with `message` (of `capacity` bytes) filled for data that is not
/// JPEG XL, is corrupt or truncated before the first frame, or has jxlp boxes out of order. When
/// `max_bytes` is not 0 it also refuses an image whose estimated decoding memory exceeds it: 4 MiB +
/// width × height × 24 × (colour + extra channels + 1), × 1.5 for animations (above libjxl 0.7's
/// measured peak on the corpus; the caller's output buffer not included), and it caps what libjxl
/// allocates through JxlMemoryManager (only the ~4 KB decoder object in 0.7). Check
/// `info->width × info->height` (and cjxl_count_frames) before allocating anything big.
CJXLDecoder *_Nullable cjxl_decoder_create(const uint8_t *data, size_t size, size_t max_bytes, cjxl_info *info,
                                           char *message, size_t capacity);

/// The ICC profile of the pixels cjxl_decoder_next_frame writes (JXL_COLOR_PROFILE_TARGET_DATA, after
/// the sRGB choice above): the stored profile, or one libjxl generates from the enumerated encoding,
/// or sRGB for XYB images with an ICC profile. A grey image has a grey profile (while the output is
/// RGBA with equal channels). NULL (size 0) when libjxl gives none. Valid until destroy.
const uint8_t *_Nullable cjxl_decoder_icc(const CJXLDecoder *decoder, size_t *size);

/// Whether the pixels cjxl_decoder_next_frame writes are plain sRGB (an enumerated encoding: D65, sRGB
/// primaries and transfer, or grey with the sRGB transfer), so that no colour conversion is needed.
int cjxl_decoder_is_srgb(const CJXLDecoder *decoder);

/// The ICC profile of the original colour encoding (JXL_COLOR_PROFILE_TARGET_ORIGINAL); equals
/// cjxl_decoder_icc except for XYB images with an ICC profile, whose pixels this layer outputs as sRGB.
const uint8_t *_Nullable cjxl_decoder_original_icc(const CJXLDecoder *decoder, size_t *size);

/// Decodes the next displayed frame into `output` (`row_bytes` apart; the buffer must hold
/// row_bytes × height bytes) as interleaved RGBA with straight alpha, `depth` 8 (uint8) or 16
/// (native-endian uint16); opaque images get alpha 255 / 65535. With `keep_orientation` the pixels are
/// as stored (info width × height); without it libjxl applies the orientation and, for orientations
/// 5–8, the output is height × width. The size written is returned in *width / *height either way.
/// Returns 1 with the frame's duration in ticks (see tps_*), 0 when there are no more frames, -1 with
/// `message` on error (corrupt or truncated data, output row too short); after -1 `output` may hold a
/// partial frame, and every later call returns -1. Changing `keep_orientation` between calls works
/// but restarts the decoder (earlier frames are decoded again, not returned).
int cjxl_decoder_next_frame(CJXLDecoder *decoder, int depth, int keep_orientation, uint8_t *output, size_t row_bytes,
                            int *width, int *height, uint32_t *duration_ticks, char *message, size_t capacity);

void cjxl_decoder_destroy(CJXLDecoder *_Nullable decoder);

/// Counts the displayed frames of `data` from the frame headers only (no pixels are decoded), stopping
/// at `max_count` + 1. Returns the count (≥ 1), or -1 with `message` for data libjxl refuses before or
/// between frame headers. Corruption inside a frame's pixel data is only found by decoding it.
int cjxl_count_frames(const uint8_t *data, size_t size, int max_count, char *message, size_t capacity);

/// Encodes `frame_count` frames (1 = a still image) of interleaved RGB or RGBA (`channels` 3 or 4) at
/// `depth` 8 (uint8) or 16 (native-endian uint16), each `width` × `height` with rows `row_bytes` apart.
/// `lossless` (or `quality` ≥ 100, as cjxl) → lossless modular (JxlEncoderSetFrameLossless); else
/// distance from `quality` as cjxl 0.7: ≥ 30 → 0.1 + (100 − q) × 0.09, below → 6.4 + 2.5^((30 − q)/5)
/// / 6.25, capped at libjxl's maximum 25. `effort` 1..9 (JXL_ENC_FRAME_SETTING_EFFORT; 0 = libjxl's
/// default 7). With more than one frame: an animation at 1000 ticks per second, `durations_ms[i]` per
/// frame (NULL = 0 each), `loop_count` loops (0 = forever). `icc` NULL = sRGB. Returns 0 with `*out`
/// (free with cjxl_free) and `*out_size`, or -1 with `message`.
int cjxl_encode(const uint8_t *const _Nonnull *_Nonnull frames, int frame_count, const uint32_t *_Nullable durations_ms,
                int loop_count, int width, int height, size_t row_bytes, int channels, int depth, int lossless,
                float quality, int effort, const uint8_t *_Nullable icc, size_t icc_size,
                uint8_t *_Nullable *_Nonnull out, size_t *out_size, char *message, size_t capacity);

void cjxl_free(void *_Nullable pointer);

#if defined(__clang__)
#pragma clang assume_nonnull end
#endif

#endif
