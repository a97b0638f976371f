// CHEIF: a small C layer over libheif (1.15, Debian 12, with libde265) for WebImageHEIF.
//
// What libheif does, read from heif.h (1.15.1):
// - Every call returns a `struct heif_error` (code, subcode, message owned by libheif); nothing
//   longjmps, nothing prints. Truncated or corrupt containers fail in heif_context_read_*; corrupt HEVC
//   data fails in heif_decode_image (heif_error_Decoder_plugin_error).
// - heif_decode_image() applies the item's transformations (clap, irot, imir) unless
//   `ignore_transformations` is set, assembles grids and overlays, and converts to interleaved 8-bit
//   RGBA with nearest-neighbour chroma and truncating bit-depth reduction (the corpus reference).
// - libheif enforces its own limits (a maximum image size) and allocates the decoded image itself;
//   this layer copies it row by row into the caller's buffer.
// - Calls are synchronous on the calling thread (libde265 may use threads internally; libheif 1.15
//   decodes with its default of none). A decoder is used by one thread at a time.
// - Encoding (heif.h's encoder API) goes through the HEVC encoder plugin Debian's libheif is built with
//   (x265 3.5: heif_have_encoder_for_format(heif_compression_HEVC)); x265 runs a thread pool of its own
//   while heif_context_encode_image blocks the calling thread. Errors come back as heif_error; x265's
//   log is silenced with heif_encoder_set_logging_level(0). The file is written through a heif_writer
//   callback, on the calling thread, into a growing buffer.

#ifndef CHEIF_H
#define CHEIF_H

#include <stddef.h>
#include <stdint.h>

#pragma clang assume_nonnull begin

typedef struct CHEIFDecoder CHEIFDecoder;

/// Reads the container of `data` (not copied: it must outlive the decoder) and picks the primary
/// image. Returns NULL with `message` (of `capacity` bytes) filled when libheif refuses it.
CHEIFDecoder *_Nullable cheif_decoder_create(const uint8_t *data, size_t size, char *message, size_t capacity);

/// The primary image's size as the container declares it (before transformations), and whether it has alpha.
void cheif_decoder_info(const CHEIFDecoder *decoder, int *width, int *height, int *has_alpha);

/// Decodes the primary image to interleaved 8-bit RGBA, with or without its transformations. Returns
/// 0 and the size (valid until the next call or destroy), or -1 with `message` filled.
int cheif_decoder_decode(CHEIFDecoder *decoder, int ignore_transformations, int *width, int *height,
                         char *message, size_t capacity);

/// Copies the decoded RGBA rows into `output` (`row_bytes` apart, width × 4 bytes each).
void cheif_decoder_copy(const CHEIFDecoder *decoder, uint8_t *output, size_t row_bytes);

void cheif_decoder_destroy(CHEIFDecoder *_Nullable decoder);

/// Whether this libheif can write HEVC-coded HEIC (an encoder plugin is built in).
int cheif_have_hevc_encoder(void);

/// Encodes `width` × `height` interleaved 8-bit RGB or RGBA pixels (`channels` 3 or 4, rows `row_bytes`
/// apart) as a HEIC file: lossy at `quality` 0–100, or lossless; `icc` (may be NULL) as the `prof` colour
/// profile. Returns 0 with `*out` (free with cheif_free) and `*out_size`, or -1 with `message` filled.
int cheif_encode(const uint8_t *pixels, int width, int height, size_t row_bytes, int channels, int quality, int lossless,
                 const uint8_t *_Nullable icc, size_t icc_size, uint8_t *_Nullable *_Nonnull out, size_t *out_size,
                 char *message, size_t capacity);

void cheif_free(void *_Nullable pointer);

#pragma clang assume_nonnull end

#endif
