// CAVIF: a small C layer over libavif (0.11, Debian 12; it predates libavif 1.0's API) for WebImageAVIF.
//
// What libavif does, read from avif.h (0.11.1):
// - Every call returns an avifResult (AVIF_RESULT_OK or a reason; avifResultToString names it);
//   nothing longjmps, nothing prints. Truncated data is AVIF_RESULT_TRUNCATED_DATA (or a BMFF parse
//   failure); corrupt AV1 data is AVIF_RESULT_DECODE_COLOR_FAILED / DECODE_ALPHA_FAILED.
// - avifDecoderParse() reads the container only; avifDecoderNextImage() decodes one image (a sequence
//   frame, or the primary item with its grid) into YUV planes owned by the decoder; avifImageYUVToRGB()
//   converts into a caller-owned buffer (here always 8-bit RGBA, bilinear chroma upsampling: the
//   corpus reference's conversion). clap/irot/imir are reported, never applied.
// - Strict mode (the default) refuses files other decoders read (clap on odd chroma positions, a
//   missing pixi); it is turned off here, as Pillow does.
// - Encoding: avifEncoder (with Debian's aom as its AV1 encoder, as avifenc picks it) takes YUV
//   images; avifImageRGBToYUV() allocates the planes (alpha too, for an RGBA source) and converts with
//   the image's matrix (identity keeps 8-bit RGB exact, for lossless). 0.11 has no `quality` field:
//   quality maps to a quantizer (0 best, 63 worst) as libavif 1.0 maps it; an image sequence has no
//   repetition count before 1.0 (players loop it). The output is avifAlloc'd (freed by avifFree).
// - The AV1 decoder (dav1d) may run threads of its own inside a call; here it is asked for one.
//   Calls are synchronous on the calling thread; a decoder is used by one thread at a time.

#ifndef CAVIF_H
#define CAVIF_H

#include <stddef.h>
#include <stdint.h>

#pragma clang assume_nonnull begin

typedef struct CAVIFInfo {
    uint32_t width, height;     // the decoded image, before clap/irot/imir
    uint32_t depth;             // 8, 10 or 12
    int has_alpha;
    int frame_count;            // 1 for a still image
    int exif_orientation;       // irot/imir as the equivalent EXIF code (1 when neither is present)
    int has_crop;               // a clap box that gives a valid crop rectangle
    uint32_t crop_x, crop_y, crop_width, crop_height;
} CAVIFInfo;

typedef struct CAVIFDecoder CAVIFDecoder;

/// Parses the container of `data` (not copied: it must outlive the decoder). Returns NULL with
/// `*result` set to libavif's avifResult when the data is not a readable AVIF.
CAVIFDecoder *_Nullable cavif_decoder_create(const uint8_t *data, size_t size, int *result);

void cavif_decoder_info(const CAVIFDecoder *decoder, CAVIFInfo *info);

/// Decodes the next image into `pixels` (height rows of width × `channels` bytes, `row_bytes` apart)
/// as 8-bit straight RGBA (`channels` 4) or RGB (3), and gives its duration in seconds. Returns 0 (AVIF_RESULT_OK), AVIF_RESULT_NO_IMAGES_REMAINING at
/// the end, or another avifResult.
int cavif_decoder_next(CAVIFDecoder *decoder, uint8_t *pixels, size_t row_bytes, int channels, double *duration);

/// `cavif_decoder_next` at `depth` 8 or 16: with 16, samples are native-endian uint16 (rows of width ×
/// `channels` × 2 bytes), 10- and 12-bit images scaled onto 0...65535 by libavif.
int cavif_decoder_next_depth(CAVIFDecoder *decoder, uint8_t *pixels, size_t row_bytes, int channels, int depth,
                             double *duration);

/// What an avifResult means to a caller.
typedef enum __attribute__((enum_extensibility(closed))) CAVIFResultKind {
    CAVIFResultOK = 0,
    /// AVIF_RESULT_NO_IMAGES_REMAINING: every frame was decoded.
    CAVIFResultEnd = 1,
    /// AVIF_RESULT_TRUNCATED_DATA: the data ends early.
    CAVIFResultTruncated = 2,
    /// AVIF_RESULT_OUT_OF_MEMORY.
    CAVIFResultNoMemory = 3,
    /// AVIF_RESULT_INVALID_FTYP: not an AVIF file.
    CAVIFResultNotAVIF = 4,
    /// Anything else: corrupt or unsupported data (see `cavif_result_string`).
    CAVIFResultFailed = 5,
} CAVIFResultKind;

CAVIFResultKind cavif_result_kind(int result);

/// libavif's name for `result`.
const char *cavif_result_string(int result);

void cavif_decoder_destroy(CAVIFDecoder *_Nullable decoder);

typedef struct CAVIFEncoder CAVIFEncoder;

/// Starts an encode at `speed` (0 slowest – 10 fastest), `quantizer` (0 best – 63) for colour and
/// alpha, 4:2:0 lossy or, with `lossless`, 4:4:4 identity-matrix quantizer 0, on `threads` threads.
/// NULL when memory runs out.
CAVIFEncoder *_Nullable cavif_encoder_create(int speed, int quantizer, int lossless, int threads);

/// Adds an image of RGB (`channels` 3) or RGBA (4) rows, `stride` bytes apart: the only one with
/// `single` (a still image), else the next frame of a sequence lasting `duration_ms`. Returns 1, or
/// 0 with `cavif_encoder_message` set.
int cavif_encoder_add(CAVIFEncoder *encoder, const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                      int channels, uint64_t duration_ms, int single);

/// `cavif_encoder_add` for `depth` 8 or 16 samples (native-endian uint16); 16-bit samples make a 12-bit AV1 image.
int cavif_encoder_add_depth(CAVIFEncoder *encoder, const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                            int channels, int depth, uint64_t duration_ms, int single);

/// Writes the file: returns its size and sets `*output` (free it with `cavif_encoded_free`), or 0
/// with the message set.
size_t cavif_encoder_finish(CAVIFEncoder *encoder, uint8_t *_Nullable *_Nonnull output);

/// Why the last call failed (libavif's result and diagnostics), valid while the encoder lives.
const char *cavif_encoder_message(const CAVIFEncoder *encoder);

/* An ICC profile and an EXIF block (TIFF structure) for the file, copied now; either may be NULL.
 * Returns 1, or 0 with a message when memory runs out. Call before cavif_encoder_add. */
int cavif_encoder_set_metadata(CAVIFEncoder *encoder, const uint8_t *icc, size_t icc_size, const uint8_t *exif, size_t exif_size);

void cavif_encoder_destroy(CAVIFEncoder *_Nullable encoder);

void cavif_encoded_free(void *_Nullable pointer);

#pragma clang assume_nonnull end

#endif
