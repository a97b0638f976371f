// CTIFF: a small C layer over libtiff (4.5.0, Debian 12) for WebImage's TIFF coder.
//
// What libtiff does, read from tiffio.h, tiff.h and the 4.5.0 sources (tif_open.c, tif_error.c,
// tif_dir.c, tif_dirread.c, tif_read.c, tif_jpeg.c, tif_getimage.c):
// - Errors and warnings go through handlers. Since 4.5, TIFFOpenOptionsSetErrorHandlerExtR() and
//   TIFFOpenOptionsSetWarningHandlerExtR() install them per handle, with user data, for every message
//   about that handle (including those emitted while TIFFClientOpenExt() itself runs, before the handle
//   exists). A handler returning non-zero stops libtiff from also calling the process-wide handlers,
//   whose default prints to stderr. This layer installs both per handle, returns 1, keeps the first
//   error as the message it reports, and never touches the global handlers (TIFFSetErrorHandler*):
//   nothing here prints and no state is shared between decoders. (libtiff 4.5.0 still reports through
//   the global handlers only in TIFFRegisterCODEC and when writing RATIONAL tags; neither is used here.)
// - Nothing longjmps out of libtiff: libjpeg errors inside the JPEG/OJPEG codecs are caught by libtiff
//   and become error messages and failing return values.
// - TIFFOpenOptionsSetMaxSingleMemAlloc() caps every single allocation libtiff makes for the handle
//   (the handle itself, directory arrays, codec state, strip buffers); beyond it the call fails with
//   an error message. This layer passes `max_single_alloc` there and applies the same cap to its own
//   strip/tile buffers. 0 means no cap.
// - The input is handed to libtiff as a mapped file (the map procedure returns the caller's pointer):
//   strips are decoded straight from it, nothing is copied (libtiff copies a strip only to reverse its
//   bits when FillOrder is 2). libtiff never writes to it.
// - TIFFClientOpenExt() reads the header and the first IFD (a corrupt first IFD fails there).
//   TIFFNumberOfDirectories() walks the top-level IFD chain (SubIFDs are not in it, so they are not
//   pages); on an IFD loop libtiff 4.5 only warns ("... has IFD looping ...") and stops the chain: this
//   layer refuses such files.
// - TIFFReadEncodedStrip()/TIFFReadEncodedTile() return the decoded samples in native byte order with
//   FillOrder and the predictor undone, or -1 on most corrupt or truncated data (a strip past the end
//   of the data, LZW/Deflate/PackBits/uncompressed data running short, libjpeg errors). Not always:
//   Fax4Decode reports "Bad code word" and still returns success once one row was decoded ("don't
//   error on badly-terminated strips"), and the codecs only *warn* when data ends early and pad the
//   rest (libjpeg with grey: "Premature end of JPEG file", "premature end of data segment"; CCITT with
//   white: "Premature EOF/EOL at line"). So this layer fails a read on any error message and on those
//   warnings, whatever the call returned: never a partial image as success. Warnings about complete
//   data are accepted (CCITT "Line length mismatch" rows, old-style LZW strips without an EOI code,
//   unknown tags).
// - TIFFReadDirectory() drops a tag whose data lies outside the file with only a warning ("IO error
//   during reading of ..."): a cut-off palette image then loses its Colormap and libtiff calls it
//   greyscale. This layer refuses a page whose directory lost a tag that way.
// - TIFFReadRGBA* (tif_getimage.c) premultiplies unassociated alpha, scales 16-bit samples as
//   (v+128)/257, converts CMYK with truncation and flips by the Orientation tag. It is used only where
//   libtiff is the sole decoder: old-style JPEG (OJPEG) and YCbCr that is not new-style JPEG, with the
//   requested orientation set to the file's own (no flips) and without alpha. JPEG-compressed YCbCr is
//   read with TIFFTAG_JPEGCOLORMODE = JPEGCOLORMODE_RGB through TIFFReadEncodedStrip/Tile, as Pillow does.
//
// Pixels (the corpus definition, tools/tiffref.py): the stored pixels before the Orientation tag (it is
// only reported); 1/2/4-bit grey scaled by 255/(2^n-1) (65535/(2^n-1) at depth 16); MinIsWhite
// inverted; 16-bit samples as they are at depth 16 and their high byte at depth 8; 8-bit samples as
// they are at depth 8 and v*257 at depth 16; palette through the colormap (its high byte at depth 8, its
// 16-bit value at depth 16); CMYK (8-bit, InkSet 1) as Pillow converts it, nk = 255-K,
// R = nk - (C*nk rounded /255); the first extra sample is alpha when ExtraSamples says associated (1) or
// unassociated (2), and is ignored when unspecified (0). Associated alpha is un-premultiplied as Pillow
// does, c = min(max, max*c / a) for 0 < a < max, at 16 bits only for 16-bit pages read at depth 16
// (otherwise at 8 bits, widened after). Pages that are valid but outside this (signed or float
// samples, other bit depths, 16-bit CMYK, other inksets or photometrics, compressions libtiff was
// built without, 3-D images, more than 32 samples per pixel) fail with a message starting
// "unsupported:"; other failures carry libtiff's (or this layer's) description of the corrupt,
// truncated or over-limit data.
//
// Every call is synchronous and CPU-bound on the calling thread; libtiff starts no threads and calls
// back (I/O procedures over memory, the error and warning handlers) only on the calling thread, inside
// the call. A decoder is used by one thread at a time; different decoders and encodes are independent.

#ifndef CTIFF_H
#define CTIFF_H

#include <stddef.h>
#include <stdint.h>

#if !defined(__clang__)
#define _Nullable
#define _Nonnull
#endif

#if defined(__clang__)
#pragma clang assume_nonnull begin
#endif

typedef struct CTIFFDecoder CTIFFDecoder;

/// A page as `ctiff_decoder_select_page` found it.
typedef struct ctiff_page_info {
    int width, height;
    /// Output channels: 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA (straight alpha). Palette and CMYK pages
    /// are RGB(A).
    int channels;
    /// The precision the page holds: 16 for 16-bit grey/RGB samples, 8 for everything else (1/2/4-bit,
    /// palette, CMYK, JPEG, OJPEG, YCbCr).
    int bits;
    /// The TIFF Orientation tag, 1...8 (1 when absent or out of range). Not applied to the pixels.
    int orientation;
    /// The number of top-level IFDs (SubIFDs are not pages).
    int page_count;
} ctiff_page_info;

/// Opens `data` (not copied: it must outlive the decoder) and counts its pages. `max_single_alloc`
/// caps every single allocation of libtiff and of this layer for this decoder (0: no cap). Returns NULL
/// with `message` (of `capacity` bytes) filled when libtiff refuses the header or the first IFD, or
/// when the IFD chain loops. No page is selected yet.
CTIFFDecoder *_Nullable ctiff_decoder_create(const uint8_t *data, size_t size, size_t max_single_alloc,
                                             char *message, size_t capacity);

/// Reads page `page` (0-based) and describes it in `info` without allocating for its pixels (a page
/// declaring 100000 × 100000 is described; refusing it is the caller's business). Returns 0, or -1
/// with `message` filled (`info` then holds whatever was read, and no page is selected). A message
/// starting "unsupported:" means a well-formed page this layer cannot convert.
int ctiff_decoder_select_page(CTIFFDecoder *decoder, int page, ctiff_page_info *info, char *message,
                              size_t capacity);

/// Decodes the selected page into `output`: `info.height` rows `row_bytes` apart, each `info.width`
/// pixels of `info.channels` interleaved samples, 1 byte each at `depth` 8 or a native-endian uint16
/// at `depth` 16. Returns 0, or -1 with `message` filled: corrupt or truncated strip or tile data is
/// an error, never a partial image. `row_bytes` must be at least width × channels × depth/8.
int ctiff_decoder_read(CTIFFDecoder *decoder, int depth, uint8_t *output, size_t row_bytes, char *message,
                       size_t capacity);

/// The selected page's ICC profile (TIFFTAG_ICCPROFILE) and its size, or NULL; owned by libtiff and
/// valid until the next select or destroy.
const uint8_t *_Nullable ctiff_decoder_icc(const CTIFFDecoder *decoder, size_t *size);

void ctiff_decoder_destroy(CTIFFDecoder *_Nullable decoder);

/// Encodes one page of `width` × `height` pixels (`height` rows `row_bytes` apart) of `channels`
/// 1...4 interleaved samples (1 grey, 2 grey+alpha, 3 RGB, 4 RGBA; alpha is written as unassociated,
/// ExtraSamples = 2), each a byte at `depth` 8 or a native-endian uint16 at `depth` 16, into a
/// malloc'd TIFF (little-endian on little-endian machines; BigTIFF only when the pixels alone come
/// within 64 MiB of 4 GiB). `compression`: 0 none, 1 Deflate with the horizontal predictor, 2 LZW
/// with the horizontal predictor, 3 JPEG (depth 8 and 1 or 3 channels only; `quality` 1...100; RGB
/// is stored as YCbCr 2×2 subsampled, converted by libjpeg). `icc` (may be NULL) is embedded as
/// TIFFTAG_ICCPROFILE. Returns 0 with `*out` (free it with ctiff_free) and `*out_size`, or -1 with
/// `message` filled.
int ctiff_encode(const uint8_t *pixels, int width, int height, size_t row_bytes, int channels, int depth,
                 int compression, int quality, const uint8_t *_Nullable icc, size_t icc_size,
                 uint8_t *_Nullable *_Nonnull out, size_t *out_size, char *message, size_t capacity);

void ctiff_free(void *_Nullable p);

#if defined(__clang__)
#pragma clang assume_nonnull end
#endif

#endif
