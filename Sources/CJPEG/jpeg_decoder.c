/*
 * The JPEG decoding state machine behind WebImage's JPEGCoder. See include/CJPEG.h for the API.
 *
 * Design:
 *  - Error manager: error_exit() formats libjpeg's message, classifies it and longjmps back to the
 *    setjmp() at the top of whichever shim entry point called libjpeg. output_message() is silent;
 *    emit_message() only counts warnings.
 *  - Source manager: a suspending one over a growing buffer that holds every byte received so far.
 *    fill_input_buffer() never has new data to give (all of it is always exposed), so it returns
 *    FALSE and libjpeg backtracks to its last restart point; when the input has ended, that
 *    suspension means the file is truncated. skip_input_data() past the end records the rest of
 *    the skip and drops that many of the next appended bytes.
 *  - States: HEADER → CONFIGURE (the caller inspects the header, picks a scale, provides the
 *    output buffer) → START → SCANLINES (single scan: rows straight into the caller's buffer) or
 *    CONSUME (multi-scan: buffered-image mode, coefficients only) → FINAL_OUTPUT (one output pass
 *    after EOI) → FINISH (read to EOI) → DONE. A full decode runs the same machine with all bytes.
 */
#include "CJPEG.h"
#include "CSystemTuning.h"

#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

/* Rows handed to one jpeg_read_scanlines() call (libjpeg returns at most one row group per call). */
#define ROW_BATCH 64
/* Rows of CMYK decoded into the scratch buffer at a time before conversion to RGB. */
#define CMYK_BATCH 16
/* Consumed input kept before compaction is considered. */
#define COMPACT_THRESHOLD (256 * 1024)

enum state {
    ST_HEADER,
    ST_CONFIGURE,
    ST_START,
    ST_SCANLINES,
    ST_CONSUME,
    ST_FINAL_OUTPUT,
    ST_FINISH,
    ST_DONE,
    ST_ERROR,
};

struct cjpeg_decoder {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr jerr;
    struct jpeg_source_mgr src;
    jmp_buf jump;

    /* Input: buffer[0..<length] holds the bytes not yet discarded; src.next_input_byte points into it. */
    uint8_t *buffer;
    size_t length;
    size_t capacity;
    int borrowed;          /* buffer is the caller's (complete input), never freed or grown */
    int input_ended;
    int compaction_allowed; /* the header (and its metadata) has been read by the caller */
    size_t skip_pending;    /* bytes skip_input_data() still has to drop from future input */
    int data_missing;       /* libjpeg warned that a data segment ended early (JWRN_HIT_MARKER) */
    int hit_end;            /* the input ended and a fake EOI was given (arithmetic decoding only) */

    enum state state;
    cjpeg_header header;    /* filled when the header is read */
    int multiscan;
    int cmyk;
    int bytes_per_pixel;
    int max_scans;
    int final_pass_started;

    uint8_t *out;
    size_t out_stride;
    uint8_t *scratch;       /* CMYK rows (CMYK_BATCH × width × 4), malloc'd */
    cjpeg_cmyk_converter cmyk_convert;   /* NULL: the built-in arithmetic */
    void *cmyk_context;
    JSAMPROW rows[ROW_BATCH];

    long warnings;
    cjpeg_error_kind error_kind;
    char message[JMSG_LENGTH_MAX + 64];
};

/* ---- error manager ---------------------------------------------------------------------- */

static cjpeg_decoder *decoder_of(j_common_ptr cinfo) {
    return (cjpeg_decoder *)cinfo->client_data;
}

static cjpeg_error_kind classify(int code) {
    switch (code) {
    case JERR_OUT_OF_MEMORY:
    case JERR_NO_BACKING_STORE:
    case JERR_TFILE_CREATE:
    case JERR_TFILE_READ:
    case JERR_TFILE_SEEK:
    case JERR_TFILE_WRITE:
        return CJPEG_ERROR_OUT_OF_MEMORY;
    case JERR_BAD_PRECISION:
    case JERR_CONVERSION_NOTIMPL:
    case JERR_NOT_COMPILED:
    case JERR_ARITH_NOTIMPL:
    case JERR_NOTIMPL:
        return CJPEG_ERROR_UNSUPPORTED;
    case JERR_BAD_STATE:
        return CJPEG_ERROR_MISUSE;
    default:
        return CJPEG_ERROR_CORRUPT;
    }
}

static void error_exit(j_common_ptr cinfo) {
    cjpeg_decoder *d = decoder_of(cinfo);
    (*cinfo->err->format_message)(cinfo, d->message);
    d->error_kind = classify(cinfo->err->msg_code);
    d->state = ST_ERROR;
    longjmp(d->jump, 1);
}

static void output_message(j_common_ptr cinfo) {
    (void)cinfo; /* never print */
}

static void emit_message(j_common_ptr cinfo, int msg_level) {
    if (msg_level < 0) {
        cinfo->err->num_warnings++;
        decoder_of(cinfo)->warnings++;
        /* An entropy-coded segment ended early: image data is missing (a cut file with an end
           marker appended, say). libjpeg fills the rest with grey; WebImage calls it truncated. */
        if (cinfo->err->msg_code == JWRN_HIT_MARKER) decoder_of(cinfo)->data_missing = 1;
    }
}

/* Records an error the shim itself detects. Returns CJPEG_ERROR for convenience. */
static cjpeg_status fail(cjpeg_decoder *d, cjpeg_error_kind kind, const char *message) {
    d->state = ST_ERROR;
    d->error_kind = kind;
    snprintf(d->message, sizeof d->message, "%s", message);
    return CJPEG_ERROR;
}

/* ---- source manager --------------------------------------------------------------------- */

static void init_source(j_decompress_ptr cinfo) {
    (void)cinfo;
}

static boolean fill_input_buffer(j_decompress_ptr cinfo) {
    static const JOCTET fake_eoi[2] = {0xFF, JPEG_EOI};
    cjpeg_decoder *d = decoder_of((j_common_ptr)cinfo);
    /* The arithmetic decoder cannot suspend (it fails with "Suspension not allowed here"), so
     * arithmetic-coded data is decoded only once the input has ended; running out then is
     * truncation: give libjpeg an EOI so that it stops, and remember to report it. */
    if (d->input_ended && cinfo->arith_code) {
        d->hit_end = 1;
        cinfo->src->next_input_byte = fake_eoi;
        cinfo->src->bytes_in_buffer = 2;
        return TRUE;
    }
    /* Every byte we have is already exposed: suspend (once the input has ended: truncated). */
    return FALSE;
}

static void skip_input_data(j_decompress_ptr cinfo, long num_bytes) {
    struct jpeg_source_mgr *src = cinfo->src;
    if (num_bytes <= 0) return;
    if ((size_t)num_bytes <= src->bytes_in_buffer) {
        src->next_input_byte += num_bytes;
        src->bytes_in_buffer -= (size_t)num_bytes;
    } else {
        cjpeg_decoder *d = decoder_of((j_common_ptr)cinfo);
        d->skip_pending += (size_t)num_bytes - src->bytes_in_buffer;
        src->next_input_byte += src->bytes_in_buffer;
        src->bytes_in_buffer = 0;
    }
}

static void term_source(j_decompress_ptr cinfo) {
    (void)cinfo;
}

/* ---- lifecycle -------------------------------------------------------------------------- */

cjpeg_decoder *cjpeg_decoder_create(size_t max_memory, int max_scans) {
    cjpeg_decoder *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->cinfo.err = jpeg_std_error(&d->jerr);
    d->jerr.error_exit = error_exit;
    d->jerr.output_message = output_message;
    d->jerr.emit_message = emit_message;
    d->cinfo.client_data = d;
    d->max_scans = max_scans > 0 ? max_scans : 1000;
    if (setjmp(d->jump)) {
        /* jpeg_CreateDecompress failed (out of memory): nothing to destroy beyond what it freed. */
        jpeg_destroy_decompress(&d->cinfo);
        free(d);
        return NULL;
    }
    jpeg_create_decompress(&d->cinfo);
    d->cinfo.mem->max_memory_to_use = max_memory > (size_t)LONG_MAX ? LONG_MAX : (long)max_memory;
    d->src.init_source = init_source;
    d->src.fill_input_buffer = fill_input_buffer;
    d->src.skip_input_data = skip_input_data;
    d->src.resync_to_restart = jpeg_resync_to_restart;
    d->src.term_source = term_source;
    d->src.next_input_byte = NULL;
    d->src.bytes_in_buffer = 0;
    d->cinfo.src = &d->src;
    d->state = ST_HEADER;
    return d;
}

void cjpeg_decoder_destroy(cjpeg_decoder *d) {
    if (!d) return;
    jpeg_destroy_decompress(&d->cinfo); /* never calls error_exit */
    if (!d->borrowed) free(d->buffer);
    free(d->scratch);
    free(d);
}

/* ---- input ------------------------------------------------------------------------------ */

static size_t consumed_offset(const cjpeg_decoder *d) {
    return d->buffer ? (size_t)(d->src.next_input_byte - d->buffer) : 0;
}

int cjpeg_decoder_append(cjpeg_decoder *d, const void *bytes, size_t count) {
    if (d->state == ST_ERROR) return -1;
    if (d->state == ST_DONE || d->input_ended || d->borrowed || count == 0) return 0;
    const uint8_t *from = bytes;
    size_t skipped = 0;
    if (d->skip_pending > 0) {
        size_t skip = d->skip_pending < count ? d->skip_pending : count;
        d->skip_pending -= skip;
        if (d->compaction_allowed) {
            from += skip;
            count -= skip;
            if (count == 0) return 0;
        } else {
            /* Until configure, the buffer must hold the file from its start (EXIF is read from it):
               keep the skipped bytes, but count them as consumed. */
            skipped = skip;
        }
    }
    size_t offset = consumed_offset(d);
    /* Drop consumed bytes once the caller no longer needs the start of the file. */
    if (d->compaction_allowed && offset >= COMPACT_THRESHOLD && offset * 2 >= d->length) {
        memmove(d->buffer, d->buffer + offset, d->length - offset);
        d->length -= offset;
        offset = 0;
    }
    if (count > d->capacity - d->length) {
        if (count > SIZE_MAX / 4 - d->length) {
            fail(d, CJPEG_ERROR_OUT_OF_MEMORY, "input too large");
            return -1;
        }
        size_t needed = d->length + count;
        size_t capacity = d->capacity ? d->capacity : 16384;
        while (capacity < needed) capacity *= 2;
        uint8_t *grown = realloc(d->buffer, capacity);
        if (!grown) {
            fail(d, CJPEG_ERROR_OUT_OF_MEMORY, "cannot grow the input buffer");
            return -1;
        }
        d->buffer = grown;
        d->capacity = capacity;
    }
    memcpy(d->buffer + d->length, from, count);
    d->length += count;
    offset += skipped;
    /* Re-expose everything from libjpeg's restart point (the buffer may have moved). */
    d->src.next_input_byte = d->buffer + offset;
    d->src.bytes_in_buffer = d->length - offset;
    return 0;
}

void cjpeg_decoder_use_complete_input(cjpeg_decoder *d, const void *bytes, size_t count) {
    if (d->buffer || d->state == ST_ERROR) return;
    d->buffer = (uint8_t *)(uintptr_t)bytes; /* never written through: libjpeg reads via const pointers */
    d->length = count;
    d->capacity = count;
    d->borrowed = 1;
    d->input_ended = 1;
    d->src.next_input_byte = d->buffer;
    d->src.bytes_in_buffer = count;
}

void cjpeg_decoder_end_input(cjpeg_decoder *d) {
    d->input_ended = 1;
}

int cjpeg_decoder_input_ended(const cjpeg_decoder *d) {
    return d->input_ended;
}

const uint8_t *cjpeg_decoder_input(const cjpeg_decoder *d, size_t *count) {
    if (d->compaction_allowed || !d->buffer) {
        *count = 0;
        return NULL;
    }
    *count = d->length;
    return d->buffer;
}

/* ---- output ----------------------------------------------------------------------------- */

/* Inverted (Adobe) CMYK to RGB exactly as djpeg's PPM writer does it: R = round(C·K / 255). */
static void cmyk_rows_to_rgb(const uint8_t *cmyk, size_t cmyk_stride, uint8_t *rgb, size_t rgb_stride,
                             uint32_t width, uint32_t rows) {
    for (uint32_t y = 0; y < rows; y++) {
        const uint8_t *s = cmyk + y * cmyk_stride;
        uint8_t *t = rgb + y * rgb_stride;
        for (uint32_t x = 0; x < width; x++, s += 4, t += 3) {
            unsigned k = s[3];
            t[0] = (uint8_t)((s[0] * k + 127) / 255);
            t[1] = (uint8_t)((s[1] * k + 127) / 255);
            t[2] = (uint8_t)((s[2] * k + 127) / 255);
        }
    }
}

/* Reads the rest of the current output pass into pixels. Returns 1 when every row is written,
 * 0 when the input ran out first (libjpeg suspended). Must run under setjmp. */
static int read_rows(cjpeg_decoder *d, uint8_t *pixels, size_t stride) {
    j_decompress_ptr cinfo = &d->cinfo;
    while (cinfo->output_scanline < cinfo->output_height) {
        JDIMENSION y = cinfo->output_scanline;
        JDIMENSION left = cinfo->output_height - y;
        JDIMENSION got;
        if (d->cmyk) {
            JDIMENSION n = left < CMYK_BATCH ? left : CMYK_BATCH;
            size_t cmyk_stride = (size_t)cinfo->output_width * 4;
            for (JDIMENSION i = 0; i < n; i++) d->rows[i] = d->scratch + i * cmyk_stride;
            got = jpeg_read_scanlines(cinfo, d->rows, n);
            if (d->cmyk_convert) {
                for (JDIMENSION i = 0; i < got; i++) {
                    d->cmyk_convert(d->cmyk_context, d->scratch + i * cmyk_stride, pixels + (size_t)(y + i) * stride, cinfo->output_width);
                }
            } else {
                cmyk_rows_to_rgb(d->scratch, cmyk_stride, pixels + (size_t)y * stride, stride, cinfo->output_width, got);
            }
        } else {
            JDIMENSION n = left < ROW_BATCH ? left : ROW_BATCH;
            uint8_t *row = pixels + (size_t)y * stride;
            for (JDIMENSION i = 0; i < n; i++, row += stride) d->rows[i] = row;
            got = jpeg_read_scanlines(cinfo, d->rows, n);
        }
        if (got == 0 || d->hit_end) return 0;
        wi_yield_point();   /* a cold server thread lets a waiting thread run (CSystemTuning.h) */
    }
    return 1;
}

/* ---- the state machine ------------------------------------------------------------------ */

static cjpeg_status suspended(cjpeg_decoder *d) {
    (void)d;
    return CJPEG_NEED_MORE_DATA;
}

static cjpeg_status truncated(cjpeg_decoder *d) {
    return fail(d, CJPEG_ERROR_TRUNCATED, "Premature end of JPEG file");
}

cjpeg_status cjpeg_decoder_process(cjpeg_decoder *d) {
    j_decompress_ptr cinfo = &d->cinfo;
    if (d->state == ST_ERROR) return CJPEG_ERROR;
    if (setjmp(d->jump)) {
        /* error_exit set state, kind and message; an error after the data ran out is truncation. */
        if (d->hit_end) truncated(d);
        return CJPEG_ERROR;
    }
    for (;;) {
        if (d->hit_end) return truncated(d);
        switch (d->state) {
        case ST_HEADER:
            if (jpeg_read_header(cinfo, TRUE) == JPEG_SUSPENDED) return suspended(d);
            d->header.width = cinfo->image_width;
            d->header.height = cinfo->image_height;
            d->header.components = cinfo->num_components;
            d->header.data_precision = cinfo->data_precision;
            d->header.is_multiscan = jpeg_has_multiple_scans(cinfo) ? 1 : 0;
            d->header.is_progressive = cinfo->progressive_mode ? 1 : 0;
            d->header.is_cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
            d->header.is_arithmetic = cinfo->arith_code ? 1 : 0;
            d->state = ST_CONFIGURE;
            return CJPEG_HEADER_READY;
        case ST_CONFIGURE:
            return CJPEG_HEADER_READY;
        case ST_START:
            /* Arithmetic-coded data cannot be decoded with suspension: wait for all of it. */
            if (cinfo->arith_code && !d->input_ended) return suspended(d);
            /* Buffered-image mode never reads input here; single-scan start needs none either. */
            if (!jpeg_start_decompress(cinfo)) return suspended(d);
            d->state = d->multiscan ? ST_CONSUME : ST_SCANLINES;
            break;
        case ST_SCANLINES:
            if (!read_rows(d, d->out, d->out_stride)) return suspended(d);
            d->state = ST_FINISH;
            break;
        case ST_CONSUME: {
            int result = jpeg_consume_input(cinfo);
            if (result == JPEG_SUSPENDED) return suspended(d);
            if (cinfo->input_scan_number > d->max_scans) {
                char message[96];
                snprintf(message, sizeof message, "more than %d scans (a hostile progressive file?)", d->max_scans);
                return fail(d, CJPEG_ERROR_CORRUPT, message);
            }
            if (result == JPEG_REACHED_EOI) d->state = ST_FINAL_OUTPUT;
            break;
        }
        case ST_FINAL_OUTPUT:
            /* Every scan is in: this pass reads no input, so it cannot suspend. */
            if (!d->final_pass_started) {
                if (!jpeg_start_output(cinfo, cinfo->input_scan_number)) return suspended(d);
                d->final_pass_started = 1;
            }
            if (!read_rows(d, d->out, d->out_stride)) return suspended(d);
            if (!jpeg_finish_output(cinfo)) return suspended(d);
            d->state = ST_FINISH;
            break;
        case ST_FINISH:
            if (!jpeg_finish_decompress(cinfo)) return suspended(d);
            d->state = ST_DONE;
            return CJPEG_DONE;
        case ST_DONE:
            return CJPEG_DONE;
        case ST_ERROR:
            return CJPEG_ERROR;
        }
    }
}

int cjpeg_decoder_get_header(const cjpeg_decoder *d, cjpeg_header *header) {
    if (d->header.width == 0) return -1; /* not read yet (a read header always has a width) */
    *header = d->header;
    return 0;
}

int cjpeg_decoder_configure(cjpeg_decoder *d, unsigned scale_denom, cjpeg_output *output) {
    j_decompress_ptr cinfo = &d->cinfo;
    if (d->state != ST_CONFIGURE) {
        if (d->state != ST_ERROR) fail(d, CJPEG_ERROR_MISUSE, "configure called outside the header state");
        return -1;
    }
    if (scale_denom != 1 && scale_denom != 2 && scale_denom != 4 && scale_denom != 8) {
        fail(d, CJPEG_ERROR_MISUSE, "scale denominator must be 1, 2, 4 or 8");
        return -1;
    }
    if (setjmp(d->jump)) return -1;
    switch (cinfo->jpeg_color_space) {
    case JCS_GRAYSCALE:
        cinfo->out_color_space = JCS_GRAYSCALE;
        d->bytes_per_pixel = 1;
        break;
    case JCS_YCbCr:
    case JCS_RGB:
        cinfo->out_color_space = JCS_RGB;
        d->bytes_per_pixel = 3;
        break;
    case JCS_CMYK:
    case JCS_YCCK:
        cinfo->out_color_space = JCS_CMYK; /* libjpeg turns YCCK into CMYK; we convert to RGB */
        d->cmyk = 1;
        d->bytes_per_pixel = 3;
        break;
    default: {
        char message[96];
        snprintf(message, sizeof message, "unsupported JPEG colour space with %d components", cinfo->num_components);
        fail(d, CJPEG_ERROR_UNSUPPORTED, message);
        return -1;
    }
    }
    cinfo->scale_num = 1;
    cinfo->scale_denom = scale_denom;
    cinfo->dct_method = JDCT_ISLOW;
    cinfo->do_fancy_upsampling = TRUE;
    cinfo->do_block_smoothing = TRUE;
    cinfo->quantize_colors = FALSE;
    d->multiscan = d->header.is_multiscan;
    cinfo->buffered_image = d->multiscan ? TRUE : FALSE;
    jpeg_calc_output_dimensions(cinfo);
    if (d->cmyk) {
        d->scratch = malloc((size_t)cinfo->output_width * 4 * CMYK_BATCH);
        if (!d->scratch) {
            fail(d, CJPEG_ERROR_OUT_OF_MEMORY, "cannot allocate CMYK rows");
            return -1;
        }
    }
    output->width = cinfo->output_width;
    output->height = cinfo->output_height;
    output->pixels = d->bytes_per_pixel == 1 ? CJPEG_PIXELS_GRAY : CJPEG_PIXELS_RGB;
    d->compaction_allowed = 1;
    return 0;
}

int cjpeg_decoder_set_output(cjpeg_decoder *d, uint8_t *pixels, size_t bytes_per_row) {
    if (d->state != ST_CONFIGURE || !d->compaction_allowed || !pixels ||
        bytes_per_row < (size_t)d->cinfo.output_width * (size_t)d->bytes_per_pixel) {
        if (d->state != ST_ERROR) fail(d, CJPEG_ERROR_MISUSE, "set_output called in the wrong state or with a short row");
        return -1;
    }
    d->out = pixels;
    d->out_stride = bytes_per_row;
    d->state = ST_START;
    return 0;
}

void cjpeg_decoder_get_progress(const cjpeg_decoder *d, cjpeg_progress *p) {
    memset(p, 0, sizeof *p);
    p->header_ready = d->state >= ST_START && d->state != ST_ERROR;
    p->done = d->state == ST_DONE;
    p->is_multiscan = d->multiscan;
    if (!p->header_ready) return;
    if (d->multiscan) {
        if (d->state == ST_CONSUME) {
            /* A scan is complete once the next one's SOS has been read (after EOI the state has
             * moved on to the final output pass). */
            p->renderable_scan = d->cinfo.input_scan_number - 1;
        } else if (d->state > ST_CONSUME) {
            p->renderable_scan = d->cinfo.input_scan_number;
        }
    } else {
        p->rows = d->state >= ST_FINISH ? d->cinfo.output_height
                : d->state == ST_SCANLINES ? d->cinfo.output_scanline : 0;
    }
}

int cjpeg_decoder_render_scan(cjpeg_decoder *d, uint8_t *pixels, size_t bytes_per_row) {
    j_decompress_ptr cinfo = &d->cinfo;
    if (d->state == ST_ERROR) return -1;
    if (!d->multiscan || d->state != ST_CONSUME) return 1;
    if (bytes_per_row < (size_t)cinfo->output_width * (size_t)d->bytes_per_pixel) {
        fail(d, CJPEG_ERROR_MISUSE, "render_scan called with a short row");
        return -1;
    }
    if (setjmp(d->jump)) return -1;
    /* In ST_CONSUME the end of input has not been reached (else the state would have moved on),
     * so the latest complete scan is the one before the scan being read. Rendering it needs no
     * input, and finish_output reads none: input_scan_number is already past it. */
    int scan = cinfo->input_scan_number - 1;
    if (scan < 1) return 1;
    if (!jpeg_start_output(cinfo, scan) || !read_rows(d, pixels, bytes_per_row) || !jpeg_finish_output(cinfo)) {
        fail(d, CJPEG_ERROR_MISUSE, "rendering a complete scan suspended");
        return -1;
    }
    return 0;
}

cjpeg_error_kind cjpeg_decoder_error_kind(const cjpeg_decoder *d) {
    return d->state == ST_ERROR ? d->error_kind : CJPEG_ERROR_NONE;
}

const char *cjpeg_decoder_error_message(const cjpeg_decoder *d) {
    return d->message;
}

int cjpeg_decoder_data_missing(const cjpeg_decoder *d) {
    return d->data_missing;
}

long cjpeg_decoder_warning_count(const cjpeg_decoder *d) {
    return d->warnings;
}

void cjpeg_decoder_set_cmyk_converter(cjpeg_decoder *d, cjpeg_cmyk_converter convert, void *context) {
    if (d == NULL) return;
    d->cmyk_convert = convert;
    d->cmyk_context = convert ? context : NULL;
}
