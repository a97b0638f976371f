/*
 * CJPEG: a small C shim over libjpeg-turbo for WebImage.
 *
 * libjpeg reports fatal errors by calling error_exit(), whose default prints and calls exit().
 * Every libjpeg call in this shim runs under setjmp(); our error_exit() longjmps back, so each
 * failure comes back to Swift as a status code plus libjpeg's own message. Warnings are counted,
 * never printed. No libjpeg type appears in this header.
 *
 * Decoding is one resumable state machine (cjpeg_decoder) over a suspending source manager: it
 * decodes as far as the bytes given so far allow and returns CJPEG_NEED_MORE_DATA when they run
 * out. A full decode gives it all bytes at once; an incremental decode appends them as they come.
 * Running out of bytes after the input has ended is truncation: CJPEG_NEED_MORE_DATA with
 * cjpeg_decoder_input_ended() true, or CJPEG_ERROR with CJPEG_ERROR_TRUNCATED.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Decoding
 * ------------------------------------------------------------------------------------------- */

/** One decode in progress. Not thread-safe; use from one thread at a time. */
typedef struct cjpeg_decoder cjpeg_decoder;

/** What cjpeg_decoder_process() reached. */
typedef enum {
    /** The bytes so far are used up; append more (or, once the input has ended, it is truncated). */
    CJPEG_NEED_MORE_DATA = 0,
    /** The header is read: inspect it with cjpeg_decoder_get_header(), then call
     *  cjpeg_decoder_configure() and cjpeg_decoder_set_output() before processing again. */
    CJPEG_HEADER_READY = 1,
    /** The image is completely decoded into the output buffer. */
    CJPEG_DONE = 2,
    /** A fatal error: see cjpeg_decoder_error_kind() and cjpeg_decoder_error_message(). */
    CJPEG_ERROR = -1,
} cjpeg_status;

/** The class of a fatal error. */
typedef enum {
    CJPEG_ERROR_NONE = 0,
    /** The data breaks the JPEG rules (libjpeg's message says how). */
    CJPEG_ERROR_CORRUPT = 1,
    /** Valid JPEG that this libjpeg build cannot decode (12-bit precision, unknown colour space). */
    CJPEG_ERROR_UNSUPPORTED = 2,
    /** An allocation failed, or libjpeg's working memory would exceed max_memory. */
    CJPEG_ERROR_OUT_OF_MEMORY = 3,
    /** A call came in a state that does not allow it (a bug in the caller). */
    CJPEG_ERROR_MISUSE = 4,
    /** The input ended before the image did. */
    CJPEG_ERROR_TRUNCATED = 5,
} cjpeg_error_kind;

/** The colour model of the pixels cjpeg writes. */
typedef enum {
    CJPEG_PIXELS_GRAY = 1, /* 1 byte per pixel */
    CJPEG_PIXELS_RGB = 3,  /* 3 bytes per pixel (YCbCr/RGB decoded by libjpeg; CMYK/YCCK converted here) */
} cjpeg_pixels;

/** What the header declares. Valid after CJPEG_HEADER_READY. */
typedef struct {
    uint32_t width;
    uint32_t height;
    int components;       /* colour components in the file: 1, 3 or 4 */
    int data_precision;   /* bits per sample, 8 for everything this build decodes */
    int is_multiscan;     /* progressive or multi-scan: decoded in buffered-image mode */
    int is_progressive;
    int is_cmyk;          /* CMYK or YCCK (Adobe inverted) */
    int is_arithmetic;    /* arithmetic-coded: libjpeg cannot suspend inside it, so it is decoded
                             only once the input has ended (no partial images) */
} cjpeg_header;

/** The geometry of the pixels cjpeg will write, from cjpeg_decoder_configure(). */
typedef struct {
    uint32_t width;       /* after DCT scaling */
    uint32_t height;
    cjpeg_pixels pixels;  /* also the number of bytes per pixel */
} cjpeg_output;

/**
 * Creates a decoder. `max_memory` caps libjpeg's own working memory in bytes (0: no cap);
 * `max_scans` caps the number of scans of a multi-scan file (hostile progressive files).
 * Returns NULL if memory runs out.
 */
cjpeg_decoder *cjpeg_decoder_create(size_t max_memory, int max_scans);

/** Frees the decoder and everything it holds (never the output buffer, which the caller owns). */
void cjpeg_decoder_destroy(cjpeg_decoder *decoder);

/**
 * Appends a copy of `count` bytes to the input. Returns 0, or -1 if memory runs out (the decoder
 * is then in the error state). Bytes appended after the image is done are ignored.
 */
int cjpeg_decoder_append(cjpeg_decoder *decoder, const void *bytes, size_t count);

/**
 * Uses `count` bytes at `bytes` as the whole input, without copying, and ends the input. The bytes
 * must stay valid and unchanged for as long as the decoder is used. Only before any append.
 */
void cjpeg_decoder_use_complete_input(cjpeg_decoder *decoder, const void *bytes, size_t count);

/** Declares that no more bytes will come: from now on running out of data means truncation. */
void cjpeg_decoder_end_input(cjpeg_decoder *decoder);

/** Whether the input has ended (cjpeg_decoder_end_input or cjpeg_decoder_use_complete_input). */
int cjpeg_decoder_input_ended(const cjpeg_decoder *decoder);

/**
 * The input bytes from the start of the file, for reading metadata (EXIF) once the header is read.
 * Valid until the next append. The start of the buffer is kept until cjpeg_decoder_configure();
 * after it, consumed bytes may be discarded and NULL is returned.
 */
const uint8_t *cjpeg_decoder_input(const cjpeg_decoder *decoder, size_t *count);

/** Decodes as far as the input allows. */
cjpeg_status cjpeg_decoder_process(cjpeg_decoder *decoder);

/** Copies the header out. Returns 0, or -1 before CJPEG_HEADER_READY. */
int cjpeg_decoder_get_header(const cjpeg_decoder *decoder, cjpeg_header *header);

/**
 * Chooses the output after CJPEG_HEADER_READY: DCT scaling by 1/`scale_denom` (1, 2, 4 or 8),
 * ISLOW DCT and fancy upsampling (djpeg's defaults), gray or RGB pixels. Fills `output`.
 * Returns 0, or -1 on error (then the decoder is in the error state).
 */
int cjpeg_decoder_configure(cjpeg_decoder *decoder, unsigned scale_denom, cjpeg_output *output);

/**
 * Gives the buffer the image is decoded into: output height rows of `bytes_per_row` bytes
 * (at least width × bytes per pixel). The caller owns it and keeps it alive until CJPEG_DONE or
 * the decoder is destroyed. Returns 0, or -1 if called in the wrong state.
 */
int cjpeg_decoder_set_output(cjpeg_decoder *decoder, uint8_t *pixels, size_t bytes_per_row);

/** Converts `pixels` pixels of stored (Adobe inverted) CMYK to 8-bit RGB; called on the decoding
 *  thread, inside cjpeg_decoder_process(), one batch of rows at a time. */
typedef void (*cjpeg_cmyk_converter)(void *context, const uint8_t *cmyk, uint8_t *rgb, uint32_t pixels);

/**
 * Replaces the built-in CMYK-to-RGB arithmetic (djpeg's, no colour management) with `convert`, for
 * an embedded CMYK ICC profile. NULL restores the built-in one. `context` must stay valid until the
 * decoder is destroyed. No effect on files that are not CMYK.
 */
void cjpeg_decoder_set_cmyk_converter(cjpeg_decoder *decoder, cjpeg_cmyk_converter convert, void *context);

/** How far a decode has come, for partial images. */
typedef struct {
    int header_ready;     /* configure() was called */
    int done;             /* the image is complete */
    int is_multiscan;     /* buffered-image mode: partials are rendered from a complete scan */
    uint32_t rows;        /* single-scan: rows of the output buffer decoded so far */
    int renderable_scan;  /* multi-scan: the latest completely received scan (0: none yet) */
} cjpeg_progress;

/** Reports the decoder's progress. */
void cjpeg_decoder_get_progress(const cjpeg_decoder *decoder, cjpeg_progress *progress);

/**
 * Multi-scan files only: renders the latest completely received scan, full output size, into
 * `pixels` (every row written). Never reads input and never suspends. Returns 0, 1 if no scan is
 * complete yet (nothing written), or -1 on error (then the decoder is in the error state).
 */
int cjpeg_decoder_render_scan(cjpeg_decoder *decoder, uint8_t *pixels, size_t bytes_per_row);

/** The class of the error after CJPEG_ERROR. */
cjpeg_error_kind cjpeg_decoder_error_kind(const cjpeg_decoder *decoder);

/** libjpeg's message for the error (empty when there is none). */
const char *cjpeg_decoder_error_message(const cjpeg_decoder *decoder);

/** The number of warnings libjpeg raised (corrupt data it recovered from, extraneous bytes, ...). */
long cjpeg_decoder_warning_count(const cjpeg_decoder *decoder);

/** Whether libjpeg warned that a data segment ended early (image data missing, JWRN_HIT_MARKER). */
int cjpeg_decoder_data_missing(const cjpeg_decoder *decoder);

/* ---------------------------------------------------------------------------------------------
 * Encoding
 * ------------------------------------------------------------------------------------------- */

/** Encoded bytes, allocated with malloc: the caller frees `bytes`. */
typedef struct {
    uint8_t *bytes;
    size_t count;
} cjpeg_encoded;

/**
 * Encodes `width` × `height` pixels of `channels` bytes each (1 gray, 2 gray + alpha, 3 RGB,
 * 4 RGBA, straight alpha) as a baseline JPEG of `out_components` (1 gray or 3 YCbCr) at libjpeg
 * `quality` 1–100. Alpha is composed over the background (`background_rgb`, 3 bytes); gray input
 * written as colour is replicated. `chroma_444` keeps full-resolution chroma (otherwise 4:2:0).
 * `progressive` writes a progressive JPEG (libjpeg's standard scan script, jpeg_simple_progression).
 * Returns 0 and fills `result`, or -1 and writes libjpeg's message into `message`.
 */
int cjpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t bytes_per_row, int channels,
                 int out_components, int quality, int chroma_444, int progressive, const uint8_t *background_rgb,
                 cjpeg_encoded *result, char *message, size_t message_size);

#ifdef __cplusplus
}
#endif
