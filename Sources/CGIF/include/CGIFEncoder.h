// CGIFEncoder: the encoding half of CGIF, over giflib's EGif* API (giflib 5.2.1, Debian 12).
//
// What giflib's encoder does, read from gif_lib.h and egif_lib.c (and checked against the installed library):
// - Errors are return codes (GIF_ERROR) with the reason in GifFile->Error (E_GIF_ERR_*); nothing longjmps,
//   nothing prints. But most writes go unchecked: EGifPutExtension*, parts of the screen and image
//   descriptors, the LZW code size and the trailer ignore what the write function returns, so a failed write
//   there is never reported. This layer records a failed write (out of memory) itself and checks that record
//   after every call as well as giflib's return code.
// - giflib validates little: it writes whatever sizes, delays and indices it is given (16-bit fields are
//   silently truncated), and EGifPutLine() masks each index to the colour map's depth *in place* (its row is
//   not const). A colour map must hold a power of two 2–256 colours (GifMakeMapObject refuses other counts).
//   This layer checks its inputs first and hands giflib a scratch row.
// - The GIF89a signature is chosen automatically only by the high-level EGifSpew(); with the sequential calls
//   used here EGifSetGifVersion() must come before EGifPutScreenDesc(), which writes the signature.
// - Allocation: EGifOpen() allocates the GifFileType, its private state and a 32 KiB LZW hash table, and fails
//   only when those allocations do; EGifPutScreenDesc()/EGifPutImageDesc() keep copies of the colour maps given.
//   EGifPutImageDesc() with no local map after a frame that had one drops the old copy without freeing it (a
//   leak in 5.2.1): this layer frees it first. EGifCloseFile() writes the trailer, then frees everything,
//   the GifFileType included, whether it succeeds or fails: the handle (its Error field too) is gone after
//   it, and its error comes back through its int * argument.
// - Every call is synchronous and CPU-bound and calls the write function on the calling thread, from inside
//   the EGif* call (EGifCloseFile included). giflib keeps no global state: separate encodes are independent.
//
// This layer: straight-alpha RGBA8 frames in, a GIF file in one malloc'd buffer out. The pixels are mapped
// to palette indices one row at a time as giflib compresses them, so memory beyond the output is a few rows,
// plus up to about 19 MiB of quantizer tables when a frame has more than 256 colours.

#ifndef CGIF_ENCODER_H
#define CGIF_ENCODER_H

#include <stddef.h>
#include <stdint.h>

#pragma clang assume_nonnull begin

/// The longest side a GIF can hold (its size fields are 16 bits).
#define CGIF_ENCODE_MAX_SIDE 65535u

/// One frame to encode: the full canvas, in straight-alpha RGBA8.
typedef struct CGIFEncodeFrame {
    /// `height` rows of `width` RGBA pixels, `bytes_per_row` apart. Read only during `cgif_encode`.
    const uint8_t *rgba;
    /// The distance between rows in bytes, at least `width × 4`.
    size_t bytes_per_row;
    /// How long the frame shows, in hundredths of a second (0–65535, stored as is).
    uint32_t delay_centiseconds;
} CGIFEncodeFrame;

/// The outcome of `cgif_encode`.
typedef enum __attribute__((enum_extensibility(closed))) CGIFEncodeStatus {
    CGIFEncodeOK = 0,
    /// Memory for the work space or the output ran out.
    CGIFEncodeNoMemory = 1,
    /// An argument is out of range, or giflib refused a call; the message says which.
    CGIFEncodeFailed = 2,
} CGIFEncodeStatus;

/// Encodes `frame_count` frames of `width × height` pixels (each side 1–65535) as a GIF file.
///
/// - Transparency: a pixel with alpha < 128 is transparent and written as a palette slot of its own whose
///   colour is (0, 0, 0), so it decodes as (0, 0, 0, 0); any other pixel is opaque (its alpha is dropped).
/// - Colours: a frame with at most 256 colours, the transparent slot counted as one, gets exactly those
///   colours as its palette and decodes byte for byte as given (with alpha 0 or 255 and transparent pixels
///   (0, 0, 0, 0)). A richer frame is quantized to 256 colours (255 and the transparent slot when it has
///   transparent pixels or is part of an animation): a variance-based median cut over a histogram of 6 bits
///   per channel (with exact centroids), refined by two k-means passes. `dither` 0 maps each pixel to the
///   palette colour nearest the centre of its histogram cell (at most 1.5 levels per channel from the pixel),
///   any other value diffuses the error (Floyd–Steinberg, serpentine). The output is deterministic.
/// - The first frame's palette is the global colour map; a later frame whose palette differs gets a local one.
/// - Animation (`frame_count` > 1): every frame covers the canvas and has a graphic control extension with
///   its delay, its transparent index and disposal 2 (restore to background), so each one decodes as given.
///   A frame without transparent pixels still names a spare (0, 0, 0) slot that no pixel uses as its
///   transparent index when its palette has room (fewer than 256 colours), because decoders such as Pillow
///   dispose a frame without one to the opaque background colour instead of to transparent.
///   A still image has a graphic control extension only when it has transparency or a nonzero delay.
/// - `loop_count`: -1 writes no NETSCAPE2.0 extension (plays once), 0 loops forever, 1–65535 is stored as
///   the repeat count. The extension follows the screen descriptor and is written only for an animation.
/// - The file is GIF89a when it has a graphic control or loop extension, GIF87a otherwise. Not interlaced.
///
/// On success returns `CGIFEncodeOK` and sets `*output` to a malloc'd buffer of `*output_count` bytes, to be
/// released with `cgif_encode_free`. On failure sets `*output` to NULL and `*output_count` to 0 and writes
/// the reason into `message` (at most `message_capacity` bytes, NUL-terminated; nothing when it is 0).
CGIFEncodeStatus cgif_encode(const CGIFEncodeFrame *_Nullable frames, size_t frame_count, uint32_t width,
                             uint32_t height, int32_t loop_count, int dither, uint8_t *_Nullable *_Nonnull output,
                             size_t *output_count, char *message, size_t message_capacity);

/// Releases a buffer `cgif_encode` returned. NULL is ignored.
void cgif_encode_free(void *_Nullable pointer);

#pragma clang assume_nonnull end

#endif
