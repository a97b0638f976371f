// CPNG: a small C layer over libpng for WebImage.
//
// libpng reports errors by calling an error function that must not return; the classic way out is
// setjmp/longjmp. Every setjmp lives in png_shim.c: each function here returns a status instead, with
// libpng's own message, so Swift never sees setjmp and no libpng struct leaks into Swift.
//
// Decoding uses libpng's progressive ("push") reader, so one state machine serves both a full decode
// (all bytes fed at once) and an incremental one (bytes fed as they arrive). A whole file of the common
// kind (8-bit, not interlaced, no palette) may take the libdeflate fast path first (cpng_fast_*).
// Encoding uses libdeflate, not libpng.
//
// Thread-safety: a decoder is used by one thread at a time; distinct decoders and encodes are independent.

#ifndef CPNG_H
#define CPNG_H

#include <stddef.h>
#include <stdint.h>

/// The longest side a PNG may declare (libpng's own default limit).
#define CPNG_MAX_SIDE 1000000u

#pragma clang assume_nonnull begin

/// What `cpng_decoder_feed` reached.
typedef enum __attribute__((enum_extensibility(closed))) CPNGStatus {
    /// Every byte given was taken; the image is not complete yet.
    CPNGStatusNeedMore = 0,
    /// The header chunks are read (see `cpng_decoder_header`). Give the decoder its output buffer with
    /// `cpng_decoder_set_output`, then feed the bytes after the `consumed` count again.
    CPNGStatusHeaderReady = 1,
    /// IEND is read and every row was written to the output buffer. Later bytes are ignored.
    CPNGStatusComplete = 2,
    /// The header declares more pixels than the decoder's limit; nothing was allocated. Sticky.
    CPNGStatusTooLarge = 3,
    /// The data is corrupt; `cpng_decoder_message` says why. Sticky.
    CPNGStatusFailed = 4,
} CPNGStatus;

/// The decoded image's geometry, valid once `CPNGStatusHeaderReady` (width and height also with
/// `CPNGStatusTooLarge`).
typedef struct CPNGHeader {
    uint32_t width;
    uint32_t height;
    /// Output channels: 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA.
    uint32_t channels;
    /// Bits of each output sample: 8, or 16 (native-endian) for a 16-bit file after `cpng_decoder_keep_16`.
    uint32_t bitDepth;
    /// 1 for an Adam7-interlaced image, 0 otherwise.
    uint32_t interlaced;
    /// Bytes of one output row: width × channels × bitDepth / 8.
    size_t rowBytes;
} CPNGHeader;

/// An in-progress PNG decode (opaque).
typedef struct CPNGDecoder CPNGDecoder;

/// Creates a decoder that refuses images of more than `maxPixels` pixels (width × height).
/// Returns NULL when memory runs out. Output: 16-bit samples reduced to their high byte, gray below
/// 8 bits expanded, palettes expanded to RGB, tRNS turned into an alpha channel, no gamma correction.
CPNGDecoder *_Nullable cpng_decoder_create(uint64_t maxPixels);

/// Keeps a 16-bit file's samples at 16 bits (native-endian `uint16_t`) instead of their high byte.
/// Call it before the first `cpng_decoder_feed`. Files of 8 bits or fewer are unchanged.
void cpng_decoder_keep_16(CPNGDecoder *decoder);

/// Frees the decoder and everything libpng allocated for it. NULL is ignored.
void cpng_decoder_destroy(CPNGDecoder *_Nullable decoder);

/// Decodes `count` bytes, the next ones of the file, as far as they go.
/// `*consumed` receives how many bytes were taken: all of them, except with `CPNGStatusHeaderReady`
/// where the caller must feed the rest again after `cpng_decoder_set_output`.
CPNGStatus cpng_decoder_feed(CPNGDecoder *decoder, const uint8_t *_Nullable bytes, size_t count,
                             size_t *consumed);

/// The geometry read from the header (zeros before it is read).
CPNGHeader cpng_decoder_header(const CPNGDecoder *decoder);

/// Sets where rows go: row y is written at `pixels + y × bytesPerRow`, `header.rowBytes` bytes of it.
/// The buffer must hold `bytesPerRow × height` bytes and outlive the decoding. Call it once, after
/// `CPNGStatusHeaderReady`.
void cpng_decoder_set_output(CPNGDecoder *decoder, uint8_t *pixels, size_t bytesPerRow);

/// How many rows libpng has delivered so far. For a non-interlaced image these are the top rows, final.
/// For an interlaced one every row of the image is delivered once per pass that covers it: any non-zero
/// value means some pixels are in the buffer.
uint64_t cpng_decoder_rows_delivered(const CPNGDecoder *decoder);

/// libpng's message for `CPNGStatusFailed` (an empty string otherwise). Valid while the decoder lives.
const char *cpng_decoder_message(const CPNGDecoder *decoder);

/// Encodes 8-bit pixels as a PNG file in memory (png_encode.c: libpng's default filter choice, libdeflate's
/// compression; IHDR, IDAT chunks of at most 1 MiB, IEND).
///
/// `channels` is 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA); `compressionLevel` is 0–9 on zlib's
/// scale (0 stores the rows unfiltered and uncompressed). On success returns 1 and sets `*output` to a
/// malloc'd buffer of `*outputCount` bytes, to be released with `cpng_free`. On failure (bad geometry,
/// no memory) returns 0, sets `*output` to NULL and writes why into `message` (at most
/// `messageCapacity` bytes, NUL-terminated).
int cpng_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t bytesPerRow,
                uint32_t channels, int compressionLevel, uint8_t *_Nullable *_Nonnull output,
                size_t *outputCount, char *message, size_t messageCapacity);

/// `cpng_encode` for `bitDepth` 8 or 16: with 16, every sample is a native-endian `uint16_t` (rows of
/// width × channels × 2 bytes) and is written big-endian as PNG stores it, the filters working on
/// 2 × channels-byte pixels as libpng's do.
int cpng_encode_depth(const uint8_t *pixels, uint32_t width, uint32_t height, size_t bytesPerRow,
                      uint32_t channels, uint32_t bitDepth, int compressionLevel, uint8_t *_Nullable *_Nonnull output,
                      size_t *outputCount, char *message, size_t messageCapacity);

/// Releases a buffer `cpng_encode` returned. NULL is ignored.
void cpng_free(void *_Nullable pointer);

/// What `cpng_fast_layout` found: the geometry of a PNG the fast path decodes (png_fast.c).
typedef struct CPNGFastLayout {
    uint32_t width;
    uint32_t height;
    /// 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA; 8 bits each.
    uint32_t channels;
    /// Bytes of one output row: width × channels × bitDepth / 8.
    size_t rowBytes;
    /// Bytes the IDAT stream inflates to, (rowBytes + 1) × height: the output buffer's least capacity.
    size_t filteredBytes;
    /// Bytes of IDAT data, and in how many chunks.
    size_t compressedBytes;
    size_t idatChunks;
    /// Where the first IDAT chunk's data starts in the file.
    size_t firstIDATOffset;
} CPNGFastLayout;

/// Returns 1 and fills `layout` when the whole file `bytes` is a PNG the fast path may decode:
/// 8-bit gray, gray + alpha, RGB or RGBA, not interlaced, no palette, `tRNS` or `acTL`, well-formed
/// chunks up to `IEND`. Returns 0 otherwise: decode with libpng (`cpng_decoder_*`). Reads only.
int cpng_fast_layout(const uint8_t *bytes, size_t count, CPNGFastLayout *layout);

/// Decodes the file `cpng_fast_layout` accepted into `output`, which must hold `layout->filteredBytes`
/// (`capacity`): rows of `layout->rowBytes` bytes, packed from the start, exactly as libpng writes
/// them through `cpng_decoder_*`. Returns 1 on success. Returns 0, with `output` undefined, for
/// anything libpng would report or warn about (a CRC error, a damaged or misplaced zlib stream, a bad
/// filter type): decode with libpng then, which reports it. Never blocks; allocates only a copy of
/// the IDAT data when it spans several chunks.
int cpng_fast_decode(const uint8_t *bytes, size_t count, const CPNGFastLayout *layout, uint8_t *output,
                     size_t capacity);

#pragma clang assume_nonnull end

#endif
