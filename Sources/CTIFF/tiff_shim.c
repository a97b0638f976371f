// The libtiff layer behind ctiff.h. libtiff reports through per-handle error and warning handlers
// (TIFFOpenOptions, libtiff 4.5); nothing here longjmps, prints or touches libtiff's global state.

#include <tiffio.h>

#include "ctiff.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// MARK: - Messages

/// What libtiff said about one handle during one call.
typedef struct ctiff_log {
    char error[512];   /* the first error since the last reset ("module: text") */
    int has_error;
    int ifd_loop;      /* libtiff warned of an IFD loop */
    int reading;       /* inside ctiff_decoder_read: JPEG "premature end" warnings are truncation */
    int truncated;
    int tag_lost;      /* a tag's data lies outside the file (or past the allocation cap): libtiff ignored it */
    char warning[256]; /* the warning behind `truncated` or `tag_lost` */
} ctiff_log;

static void log_reset(ctiff_log *log) {
    log->error[0] = 0;
    log->has_error = 0;
    log->truncated = 0;
    log->tag_lost = 0;
    log->warning[0] = 0;
}

static void format_message(char *buffer, size_t capacity, const char *module, const char *fmt, va_list ap) {
    int used = 0;
    if (module && *module) used = snprintf(buffer, capacity, "%s: ", module);
    if (used < 0 || (size_t)used >= capacity) used = 0;
    vsnprintf(buffer + used, capacity - (size_t)used, fmt, ap);
}

static int on_error(TIFF *tif, void *user_data, const char *module, const char *fmt, va_list ap) {
    (void)tif;
    ctiff_log *log = user_data;
    if (!log->has_error) {
        format_message(log->error, sizeof log->error, module, fmt, ap);
        log->has_error = 1;
    }
    return 1; /* handled: libtiff's global handlers (stderr) are not called */
}

static int on_warning(TIFF *tif, void *user_data, const char *module, const char *fmt, va_list ap) {
    (void)tif;
    ctiff_log *log = user_data;
    if (strstr(fmt, "IFD loop")) log->ifd_loop = 1;
    /* TIFFReadDirectory drops a tag whose data it cannot read and goes on: a truncated file can lose
       its Colormap (libtiff then calls the page greyscale) or ExtraSamples that way. */
    if (!log->tag_lost && (strstr(fmt, "IO error during reading of") || strstr(fmt, "Out of memory reading of"))) {
        log->tag_lost = 1;
        format_message(log->warning, sizeof log->warning, module, fmt, ap);
        return 1;
    }
    if (log->reading && !log->truncated) {
        char text[256];
        format_message(text, sizeof text, module, fmt, ap);
        /* Data that ends early, which the codecs only warn about and pad: libjpeg (JPEG and OJPEG
           codecs) fills with grey (JWRN_JPEG_EOF "Premature end of JPEG file", JWRN_HIT_MARKER
           "... premature end of data segment"); the CCITT decoders fill with white ("Premature EOF at
           line", "Premature EOL at line"; "Line length mismatch", a row too long, is clipped and accepted). */
        if (strstr(text, "Premature end") || strstr(text, "premature end") || strstr(text, "Premature EOF") ||
            strstr(text, "Premature EOL")) {
            log->truncated = 1;
            snprintf(log->warning, sizeof log->warning, "%s", text);
        }
    }
    return 1;
}

static int fail(char *message, size_t capacity, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *message, size_t capacity, const char *fmt, ...) {
    if (capacity > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(message, capacity, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/// Fails with libtiff's first error, or `fallback` when it said nothing.
static int fail_libtiff(const ctiff_log *log, char *message, size_t capacity, const char *fallback) {
    return fail(message, capacity, "%s", log->has_error ? log->error : fallback);
}

static TIFFOpenOptions *open_options(ctiff_log *log, size_t max_single_alloc) {
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (!options) return NULL;
    TIFFOpenOptionsSetErrorHandlerExtR(options, on_error, log);
    TIFFOpenOptionsSetWarningHandlerExtR(options, on_warning, log);
    if (max_single_alloc > 0) {
        tmsize_t cap = max_single_alloc > (size_t)TIFF_TMSIZE_T_MAX ? TIFF_TMSIZE_T_MAX : (tmsize_t)max_single_alloc;
        TIFFOpenOptionsSetMaxSingleMemAlloc(options, cap);
    }
    return options;
}

// MARK: - Memory I/O

/// A seekable byte range: read-only over the caller's data (decoder), growable (encoder).
typedef struct ctiff_stream {
    uint8_t *bytes;
    size_t size;     /* bytes in the stream */
    size_t capacity; /* allocated (encoder) */
    uint64_t position;
    int writable;
    int out_of_memory;
} ctiff_stream;

static tmsize_t stream_read(thandle_t handle, void *buffer, tmsize_t count) {
    ctiff_stream *s = handle;
    if (count <= 0 || s->position >= s->size) return 0;
    size_t available = s->size - (size_t)s->position;
    size_t n = (uint64_t)count < available ? (size_t)count : available;
    memcpy(buffer, s->bytes + s->position, n);
    s->position += n;
    return (tmsize_t)n;
}

static tmsize_t stream_write(thandle_t handle, void *buffer, tmsize_t count) {
    ctiff_stream *s = handle;
    if (!s->writable || count < 0) return -1;
    if (count == 0) return 0;
    if (s->position > (uint64_t)SIZE_MAX - (uint64_t)count) return -1;
    size_t end = (size_t)s->position + (size_t)count;
    if (end > s->capacity) {
        size_t capacity = s->capacity ? s->capacity : 65536;
        while (capacity < end) capacity = capacity > SIZE_MAX / 2 ? end : capacity * 2;
        uint8_t *bytes = realloc(s->bytes, capacity);
        if (!bytes) {
            s->out_of_memory = 1;
            return -1;
        }
        s->bytes = bytes;
        s->capacity = capacity;
    }
    if (s->position > s->size) memset(s->bytes + s->size, 0, (size_t)s->position - s->size); /* a hole */
    memcpy(s->bytes + s->position, buffer, (size_t)count);
    s->position = end;
    if (end > s->size) s->size = end;
    return count;
}

static toff_t stream_seek(thandle_t handle, toff_t offset, int whence) {
    ctiff_stream *s = handle;
    int64_t base;
    switch (whence) {
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = (int64_t)s->position; break;
    case SEEK_END: base = (int64_t)s->size; break;
    default: return (toff_t)-1;
    }
    /* Relative seeks may be negative (libtiff passes them as two's complement). */
    int64_t position;
    if (whence == SEEK_SET ? offset > (toff_t)INT64_MAX : __builtin_add_overflow(base, (int64_t)offset, &position))
        return (toff_t)-1;
    if (whence == SEEK_SET) position = (int64_t)offset;
    if (position < 0) return (toff_t)-1;
    s->position = (uint64_t)position;
    return (toff_t)position;
}

static toff_t stream_size(thandle_t handle) {
    return ((ctiff_stream *)handle)->size;
}

static int stream_close(thandle_t handle) {
    (void)handle;
    return 0;
}

/// Decoder input: libtiff reads strips straight from the caller's bytes.
static int stream_map(thandle_t handle, void **base, toff_t *size) {
    ctiff_stream *s = handle;
    if (s->writable) return 0;
    *base = s->bytes;
    *size = s->size;
    return 1;
}

static int stream_no_map(thandle_t handle, void **base, toff_t *size) {
    (void)handle;
    (void)base;
    (void)size;
    return 0;
}

static void stream_unmap(thandle_t handle, void *base, toff_t size) {
    (void)handle;
    (void)base;
    (void)size;
}

// MARK: - Decoder

enum { KIND_GREY, KIND_PALETTE, KIND_RGB, KIND_CMYK };
enum { ALPHA_NONE = 0, ALPHA_ASSOCIATED = 1, ALPHA_UNASSOCIATED = 2 };

struct CTIFFDecoder {
    ctiff_stream stream;
    ctiff_log log;
    TIFF *tif;
    size_t max_single_alloc;
    int page_count;
    int selected; /* the page the fields below describe, or -1 */
    ctiff_page_info info;
    uint32_t width, height;
    uint16_t bps, spp, planar;
    int kind, color_samples, alpha, miniswhite;
    int via_rgba; /* OJPEG / non-JPEG YCbCr: libtiff's TIFFRGBAImage */
    const uint16_t *colormap[3];
    const uint8_t *icc;
    size_t icc_size;
};

CTIFFDecoder *ctiff_decoder_create(const uint8_t *data, size_t size, size_t max_single_alloc, char *message,
                                   size_t capacity) {
    if (size < 8) {
        fail(message, capacity, "not a TIFF file: %zu bytes", size);
        return NULL;
    }
    CTIFFDecoder *d = calloc(1, sizeof *d);
    TIFFOpenOptions *options = d ? open_options(&d->log, max_single_alloc) : NULL;
    if (!options) {
        fail(message, capacity, "out of memory");
        free(d);
        return NULL;
    }
    d->stream.bytes = (uint8_t *)(uintptr_t)data; /* read only: libtiff never writes to a read handle's map */
    d->stream.size = size;
    d->max_single_alloc = max_single_alloc;
    d->selected = -1;
    d->tif = TIFFClientOpenExt("TIFF", "r", (thandle_t)&d->stream, stream_read, stream_write, stream_seek,
                               stream_close, stream_size, stream_map, stream_unmap, options);
    TIFFOpenOptionsFree(options);
    if (!d->tif) {
        fail_libtiff(&d->log, message, capacity, "libtiff cannot open the data");
        free(d);
        return NULL;
    }
    tdir_t count = TIFFNumberOfDirectories(d->tif);
    if (d->log.ifd_loop) {
        fail(message, capacity, "corrupt TIFF: the IFD chain loops");
        ctiff_decoder_destroy(d);
        return NULL;
    }
    if (count == 0) {
        fail_libtiff(&d->log, message, capacity, "no image directory");
        ctiff_decoder_destroy(d);
        return NULL;
    }
    d->page_count = count > (tdir_t)INT_MAX ? INT_MAX : (int)count;
    return d;
}

void ctiff_decoder_destroy(CTIFFDecoder *d) {
    if (!d) return;
    if (d->tif) TIFFClose(d->tif);
    free(d);
}

const uint8_t *ctiff_decoder_icc(const CTIFFDecoder *d, size_t *size) {
    *size = d->selected >= 0 ? d->icc_size : 0;
    return d->selected >= 0 ? d->icc : NULL;
}

static int is_supported_depth(uint16_t bps) {
    return bps == 1 || bps == 2 || bps == 4 || bps == 8 || bps == 16;
}

/// Reads the current directory's tags into `d` and `info`.
static int describe_page(CTIFFDecoder *d, ctiff_page_info *info, char *message, size_t capacity) {
    TIFF *tif = d->tif;
    uint32_t width = 0, height = 0;
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &height) ||
        width == 0 || height == 0)
        return fail(message, capacity, "corrupt TIFF: no image size");
    if (width > INT_MAX || height > INT_MAX)
        return fail(message, capacity, "unsupported: image size %" PRIu32 " x %" PRIu32, width, height);
    uint16_t orientation = ORIENTATION_TOPLEFT;
    TIFFGetFieldDefaulted(tif, TIFFTAG_ORIENTATION, &orientation);
    info->width = (int)width;
    info->height = (int)height;
    info->orientation = orientation >= 1 && orientation <= 8 ? orientation : 1;
    info->page_count = d->page_count;

    uint16_t bps = 1, spp = 1, format = SAMPLEFORMAT_UINT, planar = PLANARCONFIG_CONTIG,
             compression = COMPRESSION_NONE, photometric = 0, extra_count = 0;
    uint16_t *extra = NULL;
    uint32_t image_depth = 1;
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bps);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &format);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
    TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &extra_count, &extra);
    TIFFGetFieldDefaulted(tif, TIFFTAG_IMAGEDEPTH, &image_depth);
    if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric))
        return fail(message, capacity, "unsupported: no PhotometricInterpretation");
    if (format != SAMPLEFORMAT_UINT && format != SAMPLEFORMAT_VOID)
        return fail(message, capacity, "unsupported: SampleFormat %u (%s samples)", format,
                    format == SAMPLEFORMAT_INT ? "signed integer" : format == SAMPLEFORMAT_IEEEFP ? "floating-point" : "non-integer");
    if (!is_supported_depth(bps)) return fail(message, capacity, "unsupported: %u bits per sample", bps);
    if (image_depth > 1) return fail(message, capacity, "unsupported: 3-D image (ImageDepth %" PRIu32 ")", image_depth);
    if (spp == 0) return fail(message, capacity, "corrupt TIFF: SamplesPerPixel 0");
    /* Every sample is decoded even when only the first few are used: bound the strip/tile per pixel. */
    if (spp > 32) return fail(message, capacity, "unsupported: %u samples per pixel", spp);
    if (!TIFFIsCODECConfigured(compression)) {
        const TIFFCodec *codec = TIFFFindCODEC(compression);
        return fail(message, capacity, "unsupported: compression %u%s%s%s is not built into libtiff", compression,
                    codec ? " (" : "", codec ? codec->name : "", codec ? ")" : "");
    }
    if (planar != PLANARCONFIG_CONTIG && planar != PLANARCONFIG_SEPARATE)
        return fail(message, capacity, "corrupt TIFF: PlanarConfiguration %u", planar);

    d->width = width;
    d->height = height;
    d->bps = bps;
    d->spp = spp;
    d->planar = planar;
    d->miniswhite = 0;
    d->via_rgba = 0;
    d->alpha = ALPHA_NONE;
    switch (photometric) {
    case PHOTOMETRIC_MINISWHITE:
        d->miniswhite = 1;
        /* fall through */
    case PHOTOMETRIC_MINISBLACK:
        d->kind = KIND_GREY;
        d->color_samples = 1;
        break;
    case PHOTOMETRIC_PALETTE: {
        uint16_t *red = NULL, *green = NULL, *blue = NULL;
        if (bps > 16 || !TIFFGetField(tif, TIFFTAG_COLORMAP, &red, &green, &blue) || !red || !green || !blue)
            return fail(message, capacity, "corrupt TIFF: palette image without a colormap");
        d->colormap[0] = red;
        d->colormap[1] = green;
        d->colormap[2] = blue;
        d->kind = KIND_PALETTE;
        d->color_samples = 1;
        break;
    }
    case PHOTOMETRIC_RGB:
        d->kind = KIND_RGB;
        d->color_samples = 3;
        break;
    case PHOTOMETRIC_SEPARATED: {
        uint16_t inkset = INKSET_CMYK;
        TIFFGetFieldDefaulted(tif, TIFFTAG_INKSET, &inkset);
        if (inkset != INKSET_CMYK) return fail(message, capacity, "unsupported: separated image with InkSet %u (not CMYK)", inkset);
        if (bps != 8) return fail(message, capacity, "unsupported: %u-bit CMYK", bps);
        d->kind = KIND_CMYK;
        d->color_samples = 4;
        break;
    }
    case PHOTOMETRIC_YCBCR:
        if (compression == COMPRESSION_JPEG && planar == PLANARCONFIG_CONTIG && spp == 3 && bps == 8) {
            /* libjpeg converts to RGB; TIFFStripSize/TIFFTileSize then count full-resolution RGB. */
            if (!TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB))
                return fail_libtiff(&d->log, message, capacity, "libtiff refused JPEGCOLORMODE_RGB");
            d->kind = KIND_RGB;
            d->color_samples = 3;
        } else {
            d->kind = KIND_RGB;
            d->color_samples = 3;
            d->via_rgba = 1;
        }
        break;
    default:
        return fail(message, capacity, "unsupported: PhotometricInterpretation %u", photometric);
    }
    if (compression == COMPRESSION_OJPEG) d->via_rgba = 1;
    if (spp < d->color_samples)
        return fail(message, capacity, "corrupt TIFF: %u samples per pixel for %d colour samples", spp, d->color_samples);
    if (d->via_rgba) {
        char reason[1024] = "";
        if (!TIFFRGBAImageOK(tif, reason)) return fail(message, capacity, "unsupported: %s", reason);
    } else if (spp > d->color_samples && extra_count > 0 && extra &&
               (extra[0] == EXTRASAMPLE_ASSOCALPHA || extra[0] == EXTRASAMPLE_UNASSALPHA)) {
        d->alpha = extra[0] == EXTRASAMPLE_ASSOCALPHA ? ALPHA_ASSOCIATED : ALPHA_UNASSOCIATED;
    }

    info->channels = (d->kind == KIND_GREY ? 1 : 3) + (d->alpha ? 1 : 0);
    info->bits = (!d->via_rgba && bps == 16 && (d->kind == KIND_GREY || d->kind == KIND_RGB)) ? 16 : 8;

    uint32_t icc_size = 0;
    void *icc = NULL;
    if (TIFFGetField(tif, TIFFTAG_ICCPROFILE, &icc_size, &icc) && icc && icc_size > 0) {
        d->icc = icc;
        d->icc_size = icc_size;
    }
    return 0;
}

int ctiff_decoder_select_page(CTIFFDecoder *d, int page, ctiff_page_info *info, char *message, size_t capacity) {
    memset(info, 0, sizeof *info);
    info->page_count = d->page_count;
    info->orientation = 1;
    d->selected = -1;
    d->icc = NULL;
    d->icc_size = 0;
    if (page < 0 || page >= d->page_count)
        return fail(message, capacity, "page %d does not exist (%d pages)", page, d->page_count);
    log_reset(&d->log);
    if (!TIFFSetDirectory(d->tif, (tdir_t)page))
        return fail_libtiff(&d->log, message, capacity, "libtiff cannot read the page's directory");
    if (d->log.ifd_loop) return fail(message, capacity, "corrupt TIFF: the IFD chain loops");
    if (d->log.tag_lost) return fail(message, capacity, "truncated or corrupt TIFF: %s", d->log.warning);
    if (describe_page(d, info, message, capacity) != 0) {
        d->icc = NULL;
        d->icc_size = 0;
        return -1;
    }
    d->info = *info;
    d->selected = page;
    return 0;
}

// MARK: Raw samples

static inline uint32_t sample_at(const uint8_t *row, uint32_t index, unsigned bps) {
    switch (bps) {
    case 8: return row[index];
    case 16: {
        uint16_t v;
        memcpy(&v, row + 2 * (size_t)index, 2);
        return v;
    }
    case 4: return (row[index >> 1] >> (4 - 4 * (index & 1))) & 0x0f;
    case 2: return (row[index >> 2] >> (6 - 2 * (index & 3))) & 0x03;
    default: return (row[index >> 3] >> (7 - (index & 7))) & 0x01;
    }
}

static inline uint32_t to8(uint32_t v, unsigned bps) {
    switch (bps) {
    case 16: return v >> 8;
    case 8: return v;
    case 4: return v * 17;
    case 2: return v * 85;
    default: return v * 255;
    }
}

static inline uint32_t to16(uint32_t v, unsigned bps) {
    switch (bps) {
    case 16: return v;
    case 8: return v * 257;
    case 4: return v * 4369;
    case 2: return v * 21845;
    default: return v * 65535;
    }
}

static inline uint32_t muldiv255(uint32_t a, uint32_t b) {
    uint32_t t = a * b + 128;
    return ((t >> 8) + t) >> 8;
}

/// How one page's samples become output pixels.
typedef struct converter {
    int kind, alpha, miniswhite, channels, depth;
    int alpha_index; /* the alpha sample's index in `v` (= the colour samples' count) */
    unsigned bps;
    int wide; /* compute at 16 bits (else at 8, widened by 257 at depth 16) */
    const uint16_t *colormap[3];
} converter;

/// `v`: the colour samples, then the alpha sample, as stored.
static inline void convert_pixel(const converter *c, const uint32_t *v, uint8_t *out) {
    uint32_t px[4];
    int colors;
    uint32_t max = c->wide ? 65535 : 255;
    switch (c->kind) {
    case KIND_GREY:
        px[0] = c->wide ? to16(v[0], c->bps) : to8(v[0], c->bps);
        if (c->miniswhite) px[0] = max - px[0];
        colors = 1;
        break;
    case KIND_PALETTE:
        for (int i = 0; i < 3; i++) px[i] = c->wide ? c->colormap[i][v[0]] : (uint32_t)(c->colormap[i][v[0]] >> 8);
        colors = 3;
        break;
    case KIND_CMYK: {
        uint32_t nk = 255 - v[3];
        for (int i = 0; i < 3; i++) px[i] = nk - muldiv255(v[i], nk);
        colors = 3;
        break;
    }
    default:
        for (int i = 0; i < 3; i++) px[i] = c->wide ? to16(v[i], c->bps) : to8(v[i], c->bps);
        colors = 3;
        break;
    }
    int n = colors;
    if (c->alpha) {
        uint32_t a = c->wide ? to16(v[c->alpha_index], c->bps) : to8(v[c->alpha_index], c->bps);
        if (c->alpha == ALPHA_ASSOCIATED && a > 0 && a < max) {
            for (int i = 0; i < colors; i++) {
                uint64_t u = (uint64_t)max * px[i] / a;
                px[i] = u > max ? max : (uint32_t)u;
            }
        }
        px[n++] = a;
    }
    if (c->depth == 8) {
        for (int i = 0; i < n; i++) out[i] = (uint8_t)px[i];
    } else {
        for (int i = 0; i < n; i++) {
            uint16_t w = (uint16_t)(c->wide ? px[i] : px[i] * 257);
            memcpy(out + 2 * i, &w, 2);
        }
    }
}

/// After each strip or tile: libtiff's decoders do not always fail when they report an error (Fax4Decode
/// returns success after "Bad code word" once a row was decoded: "don't error on badly-terminated
/// strips"), so any error message, or a warning of missing data, fails the read.
static int check_decoded(const CTIFFDecoder *d, char *message, size_t capacity) {
    if (d->log.has_error) return fail(message, capacity, "corrupt TIFF data: %s", d->log.error);
    if (d->log.truncated) return fail(message, capacity, "truncated or corrupt TIFF data: %s", d->log.warning);
    return 0;
}

static int read_raw(CTIFFDecoder *d, const converter *conv, uint8_t *output, size_t row_bytes, char *message,
                    size_t capacity) {
    TIFF *tif = d->tif;
    const int tiled = TIFFIsTiled(tif);
    uint32_t block_width, block_height;
    if (tiled) {
        if (!TIFFGetField(tif, TIFFTAG_TILEWIDTH, &block_width) || !TIFFGetField(tif, TIFFTAG_TILELENGTH, &block_height) ||
            block_width == 0 || block_height == 0)
            return fail(message, capacity, "corrupt TIFF: no tile size");
    } else {
        uint32_t rows_per_strip = 0;
        TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
        if (rows_per_strip == 0) return fail(message, capacity, "corrupt TIFF: RowsPerStrip 0");
        block_width = d->width;
        block_height = rows_per_strip < d->height ? rows_per_strip : d->height;
    }
    const int separate = d->planar == PLANARCONFIG_SEPARATE && d->spp > 1;
    const int needed = d->color_samples + (d->alpha ? 1 : 0); /* samples 0 ..< needed */
    const int planes = separate ? needed : 1;
    const unsigned samples_per_block_pixel = separate ? 1u : d->spp;
    const uint64_t stride = ((uint64_t)block_width * samples_per_block_pixel * d->bps + 7) / 8;

    tmsize_t block_size = tiled ? TIFFTileSize(tif) : TIFFStripSize(tif);
    if (block_size <= 0) return fail_libtiff(&d->log, message, capacity, "corrupt TIFF: bad strip or tile size");
    if (stride * block_height > (uint64_t)block_size)
        return fail(message, capacity, "corrupt TIFF: %s of %lld bytes for %" PRIu32 " rows of %llu bytes",
                    tiled ? "tile" : "strip", (long long)block_size, block_height, (unsigned long long)stride);
    if (d->max_single_alloc > 0 && (uint64_t)block_size > d->max_single_alloc)
        return fail(message, capacity, "a %s of %lld bytes passes the allocation limit of %zu bytes",
                    tiled ? "tile" : "strip", (long long)block_size, d->max_single_alloc);

    uint8_t *buffers[5] = {NULL, NULL, NULL, NULL, NULL};
    int result = 0;
    for (int p = 0; p < planes; p++) {
        if (!(buffers[p] = calloc(1, (size_t)block_size))) {
            result = fail(message, capacity, "out of memory (%lld bytes)", (long long)block_size);
            goto done;
        }
    }
    const size_t pixel_bytes = (size_t)conv->channels * (size_t)(conv->depth / 8);
    // The stored samples are the output's (8-bit grey or RGB(A) read at depth 8, 16-bit at depth 16, alpha
    // unassociated or none, no other extra sample): rows are copied as they are, and a strip whose rows
    // are as long as the output's is decoded straight into it.
    const int identity = !separate && !conv->miniswhite && (conv->kind == KIND_GREY || conv->kind == KIND_RGB) &&
                         conv->alpha != ALPHA_ASSOCIATED && (int)d->spp == needed &&
                         ((d->bps == 8 && conv->depth == 8) || (d->bps == 16 && conv->depth == 16));
    const int direct = identity && !tiled && stride == row_bytes;
    const uint32_t strips = tiled ? 0 : TIFFNumberOfStrips(tif);
    const uint32_t tiles = tiled ? TIFFNumberOfTiles(tif) : 0;
    for (uint32_t y0 = 0; y0 < d->height; y0 += block_height) {
        uint32_t rows = d->height - y0 < block_height ? d->height - y0 : block_height;
        for (uint32_t x0 = 0; x0 < d->width; x0 += block_width) {
            uint32_t cols = d->width - x0 < block_width ? d->width - x0 : block_width;
            for (int p = 0; p < planes; p++) {
                uint16_t plane = (uint16_t)(separate ? p : 0);
                tmsize_t expected, got;
                if (tiled) {
                    uint32_t tile = TIFFComputeTile(tif, x0, y0, 0, plane);
                    if (tile >= tiles) {
                        result = fail(message, capacity, "corrupt TIFF: tile %" PRIu32 " of %" PRIu32, tile, tiles);
                        goto done;
                    }
                    expected = block_size;
                    got = TIFFReadEncodedTile(tif, tile, buffers[p], block_size);
                } else {
                    uint32_t strip = TIFFComputeStrip(tif, y0, plane);
                    if (strip >= strips) {
                        result = fail(message, capacity, "corrupt TIFF: strip %" PRIu32 " of %" PRIu32, strip, strips);
                        goto done;
                    }
                    expected = TIFFVStripSize(tif, rows);
                    if (expected <= 0 || expected > block_size) {
                        result = fail_libtiff(&d->log, message, capacity, "corrupt TIFF: bad strip size");
                        goto done;
                    }
                    got = TIFFReadEncodedStrip(tif, strip, direct ? output + (size_t)y0 * row_bytes : buffers[p], expected);
                }
                if (got < 0) {
                    result = fail_libtiff(&d->log, message, capacity, "libtiff cannot decode a strip or tile");
                    goto done;
                }
                if (got < expected) {
                    result = fail(message, capacity, "truncated TIFF: a %s decoded to %lld of %lld bytes",
                                  tiled ? "tile" : "strip", (long long)got, (long long)expected);
                    goto done;
                }
                if ((result = check_decoded(d, message, capacity)) != 0) goto done;
            }
            if (direct) continue;
            if (identity) {
                for (uint32_t r = 0; r < rows; r++) {
                    memcpy(output + (size_t)(y0 + r) * row_bytes + (size_t)x0 * pixel_bytes, buffers[0] + (size_t)r * stride,
                           (size_t)cols * pixel_bytes);
                }
                continue;
            }
            for (uint32_t r = 0; r < rows; r++) {
                uint8_t *out = output + (size_t)(y0 + r) * row_bytes + (size_t)x0 * pixel_bytes;
                const uint8_t *rowp[5];
                for (int p = 0; p < planes; p++) rowp[p] = buffers[p] + (size_t)r * stride;
                uint32_t v[5];
                for (uint32_t x = 0; x < cols; x++, out += pixel_bytes) {
                    if (separate) {
                        for (int s = 0; s < needed; s++) v[s] = sample_at(rowp[s], x, d->bps);
                    } else {
                        uint32_t base = x * d->spp;
                        for (int s = 0; s < needed; s++) v[s] = sample_at(rowp[0], base + (uint32_t)s, d->bps);
                    }
                    convert_pixel(conv, v, out);
                }
            }
        }
    }
done:
    for (int p = 0; p < planes; p++) free(buffers[p]);
    return result;
}

/// OJPEG and non-JPEG YCbCr: libtiff's RGBA conversion, band by band (strip or tile rows), asking for
/// the file's own orientation so that nothing is flipped. Alpha is not read (channels 1 or 3).
static int read_rgba(CTIFFDecoder *d, const converter *conv, uint8_t *output, size_t row_bytes, char *message,
                     size_t capacity) {
    TIFF *tif = d->tif;
    uint32_t band = 0;
    if (TIFFIsTiled(tif)) {
        if (!TIFFGetField(tif, TIFFTAG_TILELENGTH, &band)) band = 0;
    } else {
        TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &band);
    }
    if (band == 0) return fail(message, capacity, "corrupt TIFF: no strip or tile height");
    if (band > d->height) band = d->height;
    uint64_t raster_bytes = (uint64_t)d->width * band * 4;
    if (raster_bytes > SIZE_MAX || (d->max_single_alloc > 0 && raster_bytes > d->max_single_alloc))
        return fail(message, capacity, "a band of %llu bytes passes the allocation limit", (unsigned long long)raster_bytes);
    uint32_t *raster = malloc((size_t)raster_bytes);
    if (!raster) return fail(message, capacity, "out of memory (%llu bytes)", (unsigned long long)raster_bytes);

    char reason[1024] = "";
    TIFFRGBAImage image;
    if (!TIFFRGBAImageBegin(&image, tif, 1 /* stop on error */, reason)) {
        free(raster);
        return fail(message, capacity, "%s", reason[0] ? reason : "libtiff cannot convert the page");
    }
    image.req_orientation = image.orientation; /* stored order: no flips */
    const size_t pixel_bytes = (size_t)conv->channels * (size_t)(conv->depth / 8);
    int result = 0;
    for (uint32_t y0 = 0; y0 < d->height && result == 0; y0 += band) {
        uint32_t rows = d->height - y0 < band ? d->height - y0 : band;
        image.row_offset = (int)y0;
        image.col_offset = 0;
        if (!TIFFRGBAImageGet(&image, raster, d->width, rows)) {
            result = fail_libtiff(&d->log, message, capacity, "libtiff cannot decode the page (old-style JPEG or YCbCr data)");
            break;
        }
        if ((result = check_decoded(d, message, capacity)) != 0) break;
        for (uint32_t r = 0; r < rows; r++) {
            const uint32_t *in = raster + (size_t)r * d->width;
            uint8_t *out = output + (size_t)(y0 + r) * row_bytes;
            for (uint32_t x = 0; x < d->width; x++, out += pixel_bytes) {
                uint32_t px[3] = {TIFFGetR(in[x]), TIFFGetG(in[x]), TIFFGetB(in[x])};
                for (int i = 0; i < conv->channels; i++) {
                    if (conv->depth == 8) {
                        out[i] = (uint8_t)px[i];
                    } else {
                        uint16_t w = (uint16_t)(px[i] * 257);
                        memcpy(out + 2 * i, &w, 2);
                    }
                }
            }
        }
    }
    TIFFRGBAImageEnd(&image);
    free(raster);
    return result;
}

int ctiff_decoder_read(CTIFFDecoder *d, int depth, uint8_t *output, size_t row_bytes, char *message, size_t capacity) {
    if (d->selected < 0) return fail(message, capacity, "no page selected");
    if (depth != 8 && depth != 16) return fail(message, capacity, "depth %d is neither 8 nor 16", depth);
    const ctiff_page_info *info = &d->info;
    size_t bytes = (size_t)depth / 8;
    size_t channels = (size_t)info->channels;
    size_t width = (size_t)info->width, height = (size_t)info->height;
    if (width > SIZE_MAX / channels / bytes) return fail(message, capacity, "image too large");
    size_t pixel_row = width * channels * bytes;
    if (row_bytes < pixel_row) return fail(message, capacity, "row_bytes %zu < %zu", row_bytes, pixel_row);
    if (height - 1 > (SIZE_MAX - pixel_row) / row_bytes) return fail(message, capacity, "image too large");

    converter conv = {
        .kind = d->kind,
        .alpha = d->alpha,
        .miniswhite = d->miniswhite,
        .channels = info->channels,
        .depth = depth,
        .alpha_index = d->color_samples,
        .bps = d->bps,
        .wide = depth == 16 && (d->bps == 16 || d->kind == KIND_PALETTE) && d->kind != KIND_CMYK,
        .colormap = {d->colormap[0], d->colormap[1], d->colormap[2]},
    };
    log_reset(&d->log);
    d->log.reading = 1;
    int result = d->via_rgba ? read_rgba(d, &conv, output, row_bytes, message, capacity)
                             : read_raw(d, &conv, output, row_bytes, message, capacity);
    d->log.reading = 0;
    return result;
}

// MARK: - Encoder

void ctiff_free(void *p) {
    free(p);
}

int ctiff_encode(const uint8_t *pixels, int width, int height, size_t row_bytes, int channels, int depth,
                 int compression, int quality, const uint8_t *icc, size_t icc_size, uint8_t **out, size_t *out_size,
                 char *message, size_t capacity) {
    *out = NULL;
    *out_size = 0;
    if (width <= 0 || height <= 0) return fail(message, capacity, "bad size %d x %d", width, height);
    if (channels < 1 || channels > 4) return fail(message, capacity, "bad channel count %d", channels);
    if (depth != 8 && depth != 16) return fail(message, capacity, "bad depth %d", depth);
    if (compression < 0 || compression > 3) return fail(message, capacity, "bad compression %d", compression);
    if (compression == 3) {
        if (depth != 8 || (channels != 1 && channels != 3))
            return fail(message, capacity, "unsupported: JPEG-compressed TIFF takes 8-bit grey or RGB only");
        if (quality < 1 || quality > 100) return fail(message, capacity, "bad JPEG quality %d", quality);
    }
    if (icc && icc_size > UINT32_MAX) return fail(message, capacity, "ICC profile too large");
    size_t bytes = (size_t)depth / 8;
    size_t pixel_row = (size_t)width * (size_t)channels * bytes;
    if (row_bytes < pixel_row) return fail(message, capacity, "row_bytes %zu < %zu", row_bytes, pixel_row);
    uint64_t raw_size = (uint64_t)pixel_row * (uint64_t)height;

    ctiff_stream stream = {.writable = 1};
    ctiff_log log = {0};
    TIFFOpenOptions *options = open_options(&log, 0);
    if (!options) return fail(message, capacity, "out of memory");
    /* Classic TIFF offsets are 32-bit: BigTIFF when the pixels alone come near 4 GiB. */
    const char *mode = raw_size > (uint64_t)UINT32_MAX - (64u << 20) ? "w8" : "w";
    TIFF *tif = TIFFClientOpenExt("TIFF", mode, (thandle_t)&stream, stream_read, stream_write, stream_seek, stream_close,
                                  stream_size, stream_no_map, stream_unmap, options);
    TIFFOpenOptionsFree(options);
    if (!tif) {
        fail_libtiff(&log, message, capacity, "libtiff cannot start a TIFF");
        free(stream.bytes);
        return -1;
    }
    int ok = TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)width) && TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)height) &&
             TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, depth) && TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, channels) &&
             TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
             TIFFSetField(tif, TIFFTAG_ORIENTATION, ORIENTATION_TOPLEFT);
    if (ok && (channels == 2 || channels == 4)) {
        uint16_t extra = EXTRASAMPLE_UNASSALPHA;
        ok = TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, &extra);
    }
    if (ok) {
        switch (compression) {
        case 0:
            ok = TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_NONE) &&
                 TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, channels >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
            break;
        case 1:
        case 2:
            ok = TIFFSetField(tif, TIFFTAG_COMPRESSION, compression == 1 ? COMPRESSION_ADOBE_DEFLATE : COMPRESSION_LZW) &&
                 TIFFSetField(tif, TIFFTAG_PREDICTOR, PREDICTOR_HORIZONTAL) &&
                 TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, channels >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
            break;
        default:
            ok = TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_JPEG) &&
                 TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, channels == 3 ? PHOTOMETRIC_YCBCR : PHOTOMETRIC_MINISBLACK) &&
                 TIFFSetField(tif, TIFFTAG_JPEGQUALITY, quality) &&
                 (channels != 3 || TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB));
            break;
        }
    }
    if (ok && icc && icc_size > 0) ok = TIFFSetField(tif, TIFFTAG_ICCPROFILE, (uint32_t)icc_size, icc);
    uint32_t rows_per_strip = 0;
    if (ok) {
        size_t target = pixel_row >= (256u << 10) ? 1 : (256u << 10) / pixel_row;
        rows_per_strip = TIFFDefaultStripSize(tif, target > (size_t)height ? (uint32_t)height : (uint32_t)target);
        if (rows_per_strip == 0 || rows_per_strip > (uint32_t)height) rows_per_strip = (uint32_t)height;
        ok = TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, rows_per_strip);
    }
    uint8_t *strip = NULL;
    if (ok) {
        tmsize_t strip_size = TIFFStripSize(tif);
        if (strip_size <= 0 || (uint64_t)strip_size < (uint64_t)pixel_row * rows_per_strip) {
            fail_libtiff(&log, message, capacity, "libtiff computed a bad strip size");
            goto failed;
        }
        if (!(strip = malloc((size_t)strip_size))) {
            fail(message, capacity, "out of memory");
            goto failed;
        }
        uint32_t index = 0;
        for (uint32_t y0 = 0; y0 < (uint32_t)height; y0 += rows_per_strip, index++) {
            uint32_t rows = (uint32_t)height - y0 < rows_per_strip ? (uint32_t)height - y0 : rows_per_strip;
            for (uint32_t r = 0; r < rows; r++)
                memcpy(strip + (size_t)r * pixel_row, pixels + (size_t)(y0 + r) * row_bytes, pixel_row);
            if (TIFFWriteEncodedStrip(tif, index, strip, (tmsize_t)(pixel_row * rows)) < 0) {
                ok = 0;
                break;
            }
        }
        free(strip);
        strip = NULL;
    }
    if (ok) ok = TIFFWriteDirectory(tif);
    if (!ok || stream.out_of_memory) {
        if (stream.out_of_memory) fail(message, capacity, "out of memory");
        else fail_libtiff(&log, message, capacity, "libtiff cannot write the TIFF");
        goto failed;
    }
    TIFFClose(tif);
    if (stream.out_of_memory || log.has_error) {
        fail_libtiff(&log, message, capacity, "out of memory");
        free(stream.bytes);
        return -1;
    }
    *out = stream.bytes;
    *out_size = stream.size;
    return 0;

failed:
    free(strip);
    TIFFClose(tif);
    free(stream.bytes);
    return -1;
}
