/*
 * codec_loop: the codec work of one cold request of serve_bench.py's cells, and nothing else, in a
 * C loop on 2 threads: the reference "webimage serve" is measured against (issue 27: a cold cell's
 * throughput at least 0.8x this loop's in the same run).
 *
 *   codec_loop CELL [--seconds N] [--threads T] [--sources DIR] [--count K] [--out DIR] [--fetch PORT]
 *
 * CELL is jpeg, png, webp or avif. The K (20) sources DIR/<ext>/0..K-1.<ext> (default
 * $WEBIMAGE_NGINX_RUNTIME/serving/div2k, else /tmp/webimage-bench-nginx/serving/div2k: the files nginx
 * serves to the servers) are read into memory before the clock, as the server holds a source's bytes
 * once URLSession has them. Each of T threads (default 2) then cycles over them, thread k starting at
 * source k*K/T (as wrk_paths.lua's threads do), until N seconds (default 10) have passed. One
 * iteration is what `/insecure/rs:fit:512:512/q:Q/plain/<source>@<ext>` costs the server in codec
 * calls, made through the same C the server calls (compiled from Sources/: CJPEG, CPNG, CWebP,
 * CAVIF, CPixels) with the same arguments:
 *
 *   jpeg  cjpeg_decoder_* (libjpeg-turbo, ISLOW, fancy upsampling) at the DCT scale JPEGDecompressor
 *         picks (2040x1356 into 512x512: 1/2, 1020x678), the Resampler's area average to 512x340
 *         (wi_filter_rows / wi_filter_columns / wi_store_rounded), cjpeg_encode Q80 4:2:0 baseline
 *         (no optimize_coding, not progressive).
 *   png   cpng_fast_layout / cpng_fast_decode (libdeflate) at full size, the area average to 512x340,
 *         cpng_encode level 3 (libpng's default filter heuristic, libdeflate).
 *   webp  cwebp_info, cwebp_decode scaled on load by libwebp to 512x340 (no resample), cwebp_exif,
 *         cwebp_encode Q75 method 4 lossy.
 *   avif  cavif_decoder_* (libavif, 1 thread, bilinear chroma) at full size, the area average to
 *         512x340, cavif_encoder_* speed 9, quantizer 22 (q 65), 4:2:0 full range, 1 thread.
 *
 * No ICC transform: the sources have no profile (the server's SRGBConverter then does nothing but
 * look for one). Sources with alpha would be resampled premultiplied, as the Resampler does.
 *
 * Before the clock each thread makes one untimed iteration (the server gets 2 warm-up requests).
 * results = iterations finished by all threads; seconds = from the start until the last thread has
 * finished the iteration under way at the deadline; every output is checked (its size, non-empty).
 * Prints ONE JSON line on stdout:
 *   {"cell", "threads", "seconds", "results", "results_per_second", "mean_bytes", "output": "WxH",
 *    "sources", "peak_rss_mib", "cc": the compiler it was built with, "fetch": whether --fetch was given,
 *    "work": what one iteration does}
 * With --out DIR, the K sources are first processed once (untimed) and written to DIR/<i>.<ext>.
 * With --fetch PORT, each iteration first GETs its source from the nginx on 127.0.0.1:PORT over the
 * thread's kept-alive connection (/serving/div2k/<ext>/<i>.<ext>, what the server fetches), into a
 * buffer of its Content-Length, and works on that: the codec work plus the least a server that fetches
 * its sources over HTTP must do ("fetch": true in the JSON line).
 * Exits 1 (message on stderr) when anything fails.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "CAVIF.h"
#include "CJPEG.h"
#include "CPNG.h"
#include "CPixels.h"
#include "CWebP.h"

/* ---- the request ------------------------------------------------------------------------- */

/* rs:fit:512:512 */
#define BOX 512
/* q:80 JPEG, q:75 WebP, q:65 AVIF (VariantParameters.swift: compressionQuality = q / 100) */
#define JPEG_QUALITY 80
#define WEBP_QUALITY 75.0f
#define AVIF_QUALITY_PERCENT 65
/* EncodeOptions.pngCompressionLevel's default; WebP method 4 (no effort asked for WebP); AVIF effort
   0.1 (VariantParameters.avifEffort) -> speed round(10 - 0.1 * 10) = 9 (AVIFEncoding.speed). */
#define PNG_LEVEL 3
#define WEBP_METHOD 4
#define AVIF_SPEED 9
/* DecodeOptions.defaultPixelCountLimit; JPEGDecompressor's libjpeg memory cap from it. */
#define PIXEL_LIMIT 100000000ull
#define JPEG_MAX_SCANS 1000

enum cell { CELL_JPEG, CELL_PNG, CELL_WEBP, CELL_AVIF };
static const char *const CELL_NAMES[] = {"jpeg", "png", "webp", "avif"};
static const char *const CELL_EXTS[] = {"jpg", "png", "webp", "avif"};
static const char *const CELL_WORK[] = {
    "cjpeg decode at DCT scale 1/2 (ISLOW, fancy upsampling), Resampler area average, cjpeg_encode Q80 4:2:0 baseline",
    "cpng_fast_decode (libdeflate) full size, Resampler area average, cpng_encode level 3",
    "cwebp_decode scaled on load by libwebp, cwebp_encode Q75 method 4",
    "cavif decode full size (1 thread, bilinear chroma), Resampler area average, cavif encode speed 9 quantizer 22 4:2:0",
};

/* AVIFEncoding.quantizer(forQuality:): libavif 1.0's mapping of a 0-100 quality. */
#ifndef CODEC_LOOP_CC
#define CODEC_LOOP_CC "cc"
#endif

static int avif_quantizer(int percent) { return ((100 - percent) * 63 + 50) / 100; }

/* ---- helpers ----------------------------------------------------------------------------- */

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

typedef struct {
    uint8_t *data;
    size_t size;
} buffer;

/* An encoded output and how to free it. */
typedef struct {
    uint8_t *bytes;
    size_t count;
    void (*release)(void *);
    int width, height;
} encoded;

static void release_encoded(encoded *e) {
    if (e->bytes) e->release(e->bytes);
    e->bytes = NULL;
}

/* DecodeOptions.outputSize(forSource:) for a fit box, aspect ratio kept, never enlarged. */
static void fitted_size(int width, int height, int box_w, int box_h, int *out_w, int *out_h) {
    int w = width, h = height;
    if (box_w < width || box_h < height) {
        double source_ratio = (double)width / (double)height, box_ratio = (double)box_w / (double)box_h;
        if (source_ratio > box_ratio) {
            w = box_w;
            h = (int)round((double)box_w / source_ratio);
        } else {
            w = (int)round((double)box_h * source_ratio);
            h = box_h;
        }
    }
    if (w < 1) w = 1;
    if (h < 1) h = 1;
    *out_w = w > width ? width : w;
    *out_h = h > height ? height : h;
}

/* ---- the Resampler (Sources/WebImage/Coding/Resampler.swift), on CPixels ----------------- */

typedef struct {
    long *firsts;
    int count;
    float *weights; /* target * count */
} taps;

static void free_taps(taps *t) {
    free(t->firsts);
    free(t->weights);
}

/* Resampler.contributions(source:target:) laid out as Resampler.Taps: area average when shrinking,
   bilinear when enlarging; every output has `count` taps, its first moved back to stay inside. */
static int make_taps(int source, int target, taps *t) {
    double scale = (double)source / (double)target;
    int *first = malloc(sizeof(int) * (size_t)target), *n = malloc(sizeof(int) * (size_t)target);
    int max_taps = (int)ceil(scale) + 2;
    if (max_taps < 2) max_taps = 2;
    float *w = malloc(sizeof(float) * (size_t)target * (size_t)max_taps);
    if (!first || !n || !w) {
        free(first), free(n), free(w);
        return -1;
    }
    int count = 1;
    for (int i = 0; i < target; i++) {
        float *wi = w + (size_t)i * (size_t)max_taps;
        if (scale >= 1) {
            double start = (double)i * scale;
            double end = fmin((double)(i + 1) * scale, (double)source);
            int f = (int)start;
            int last = (int)floor(end - 1e-9);
            if (last > source - 1) last = source - 1;
            first[i] = f;
            n[i] = 0;
            for (int s = f; s <= last; s++) {
                double covered = fmin(end, (double)(s + 1)) - fmax(start, (double)s);
                wi[n[i]++] = (float)(covered / (end - start));
            }
        } else if (source == 1) {
            first[i] = 0;
            n[i] = 1;
            wi[0] = 1;
        } else {
            double centre = ((double)i + 0.5) * scale - 0.5;
            double clamped = fmin(fmax(centre, 0), (double)(source - 1));
            int f = (int)clamped;
            if (f > source - 2) f = source - 2;
            float fraction = (float)(clamped - (double)f);
            first[i] = f;
            n[i] = 2;
            wi[0] = 1 - fraction;
            wi[1] = fraction;
        }
        if (n[i] > count) count = n[i];
    }
    t->count = count;
    t->firsts = malloc(sizeof(long) * (size_t)target);
    t->weights = calloc((size_t)target * (size_t)count, sizeof(float));
    if (!t->firsts || !t->weights) {
        free(first), free(n), free(w), free_taps(t);
        return -1;
    }
    for (int i = 0; i < target; i++) {
        int f = first[i] < source - count ? first[i] : source - count;
        int skip = first[i] - f;
        t->firsts[i] = f;
        for (int k = 0; k < n[i]; k++) t->weights[(size_t)i * (size_t)count + (size_t)(skip + k)] = w[(size_t)i * (size_t)max_taps + (size_t)k];
    }
    free(first), free(n), free(w);
    return 0;
}

/* Resampler.resample(_:to:): vertical pass into a float row, horizontal pass, rounded (or
   un-premultiplied) into the output row; `alpha`: the last of `channels` is alpha. Returns a malloc'd
   buffer of dst_h rows of dst_w * channels bytes, or NULL. */
static uint8_t *resample(const uint8_t *pixels, int width, int height, size_t stride, int channels, int alpha,
                         int dst_w, int dst_h) {
    taps horizontal = {0}, vertical = {0};
    if (make_taps(width, dst_w, &horizontal) || make_taps(height, dst_h, &vertical)) {
        free_taps(&horizontal);
        free_taps(&vertical);
        return NULL;
    }
    size_t out_row = (size_t)dst_w * (size_t)channels;
    size_t source_count = (size_t)width * (size_t)channels;
    uint8_t *target = malloc(out_row * (size_t)dst_h);
    float *columns = malloc(sizeof(float) * source_count);
    float *filtered = malloc(sizeof(float) * out_row);
    const uint8_t **rows = malloc(sizeof(*rows) * (size_t)vertical.count);
    if (target && columns && filtered && rows) {
        for (int y = 0; y < dst_h; y++) {
            for (int k = 0; k < vertical.count; k++) rows[k] = pixels + (size_t)(vertical.firsts[y] + k) * stride;
            wi_filter_rows(rows, vertical.weights + (size_t)y * (size_t)vertical.count, (size_t)vertical.count, source_count,
                           alpha ? (size_t)channels : 0, columns);
            wi_filter_columns(columns, horizontal.firsts, horizontal.weights, (size_t)horizontal.count, (size_t)dst_w,
                              (size_t)channels, filtered);
            if (alpha) {
                wi_store_unpremultiplied(filtered, (size_t)dst_w, (size_t)channels, target + (size_t)y * out_row);
            } else {
                wi_store_rounded(filtered, out_row, target + (size_t)y * out_row);
            }
        }
    } else {
        free(target);
        target = NULL;
    }
    free(columns);
    free(filtered);
    free(rows);
    free_taps(&horizontal);
    free_taps(&vertical);
    return target;
}

/* ---- one request per cell ---------------------------------------------------------------- */

/* JPEGDecompressor.scaleDenominator: the largest of 8, 4, 2 whose ceil(side / d) covers the target. */
static unsigned jpeg_scale_denominator(int width, int height, int target_w, int target_h) {
    static const int denominators[] = {8, 4, 2};
    for (int i = 0; i < 3; i++) {
        int d = denominators[i];
        if ((width + d - 1) / d >= target_w && (height + d - 1) / d >= target_h) return (unsigned)d;
    }
    return 1;
}

static int once_jpeg(const buffer *source, encoded *out, char *error, size_t error_size) {
    size_t max_memory = (size_t)(PIXEL_LIMIT * 8 + (64u << 20));
    cjpeg_decoder *decoder = cjpeg_decoder_create(max_memory, JPEG_MAX_SCANS);
    if (!decoder) return snprintf(error, error_size, "cjpeg_decoder_create failed"), -1;
    cjpeg_decoder_use_complete_input(decoder, source->data, source->size);
    uint8_t *decoded = NULL;
    int decoded_w = 0, decoded_h = 0, target_w = 0, target_h = 0, channels = 3;
    for (;;) {
        cjpeg_status status = cjpeg_decoder_process(decoder);
        if (status == CJPEG_HEADER_READY) {
            cjpeg_header header;
            cjpeg_output output;
            if (cjpeg_decoder_get_header(decoder, &header) != 0) break;
            fitted_size((int)header.width, (int)header.height, BOX, BOX, &target_w, &target_h);
            unsigned denominator = jpeg_scale_denominator((int)header.width, (int)header.height, target_w, target_h);
            if (cjpeg_decoder_configure(decoder, denominator, &output) != 0) break;
            decoded_w = (int)output.width;
            decoded_h = (int)output.height;
            channels = output.pixels == CJPEG_PIXELS_GRAY ? 1 : 3;
            decoded = malloc((size_t)decoded_w * (size_t)channels * (size_t)decoded_h);
            if (!decoded) break;
            if (cjpeg_decoder_set_output(decoder, decoded, (size_t)decoded_w * (size_t)channels) != 0) break;
        } else if (status == CJPEG_DONE) {
            break;
        } else {
            break; /* NEED_MORE_DATA with the input ended (truncated) or ERROR */
        }
    }
    cjpeg_progress progress;
    cjpeg_decoder_get_progress(decoder, &progress);
    if (!progress.done || !decoded || cjpeg_decoder_data_missing(decoder)) {
        snprintf(error, error_size, "JPEG decode failed: %s", cjpeg_decoder_error_message(decoder));
        cjpeg_decoder_destroy(decoder);
        free(decoded);
        return -1;
    }
    cjpeg_decoder_destroy(decoder);
    uint8_t *pixels = decoded;
    if (decoded_w != target_w || decoded_h != target_h) {
        pixels = resample(decoded, decoded_w, decoded_h, (size_t)decoded_w * (size_t)channels, channels, 0, target_w, target_h);
        free(decoded);
        if (!pixels) return snprintf(error, error_size, "resample: out of memory"), -1;
    }
    static const uint8_t white[3] = {255, 255, 255};
    cjpeg_encoded result;
    /* JPEGEncoder: 4:4:4 only from quality 0.9 up; baseline (EncodeOptions.isProgressive false). */
    int status = cjpeg_encode(pixels, (uint32_t)target_w, (uint32_t)target_h, (size_t)target_w * (size_t)channels, channels,
                              channels == 1 ? 1 : 3, JPEG_QUALITY, JPEG_QUALITY >= 90, 0, white, &result, error, error_size);
    free(pixels);
    if (status != 0) return -1;
    *out = (encoded){result.bytes, result.count, free, target_w, target_h};
    return 0;
}

static int once_png(const buffer *source, encoded *out, char *error, size_t error_size) {
    CPNGFastLayout layout;
    if (!cpng_fast_layout(source->data, source->size, &layout)) {
        return snprintf(error, error_size, "not a PNG the fast path takes (the server would decode it with libpng)"), -1;
    }
    uint8_t *decoded = malloc(layout.filteredBytes);
    if (!decoded) return snprintf(error, error_size, "out of memory"), -1;
    if (!cpng_fast_decode(source->data, source->size, &layout, decoded, layout.filteredBytes)) {
        free(decoded);
        return snprintf(error, error_size, "cpng_fast_decode declined the file"), -1;
    }
    int width = (int)layout.width, height = (int)layout.height, channels = (int)layout.channels;
    int target_w, target_h;
    fitted_size(width, height, BOX, BOX, &target_w, &target_h);
    uint8_t *pixels = decoded;
    if (target_w != width || target_h != height) {
        int alpha = channels == 2 || channels == 4;
        pixels = resample(decoded, width, height, layout.rowBytes, channels, alpha, target_w, target_h);
        free(decoded);
        if (!pixels) return snprintf(error, error_size, "resample: out of memory"), -1;
    }
    uint8_t *bytes = NULL;
    size_t count = 0;
    int ok = cpng_encode(pixels, (uint32_t)target_w, (uint32_t)target_h, (size_t)target_w * (size_t)channels, (uint32_t)channels,
                         PNG_LEVEL, &bytes, &count, error, error_size);
    free(pixels);
    if (!ok) return -1;
    *out = (encoded){bytes, count, cpng_free, target_w, target_h};
    return 0;
}

static int once_webp(const buffer *source, encoded *out, char *error, size_t error_size) {
    CWebPInfo info;
    int status = cwebp_info(source->data, source->size, &info);
    if (status != 0) return snprintf(error, error_size, "cwebp_info: status %d", status), -1;
    if (info.frame_count != 1) return snprintf(error, error_size, "an animation (not this benchmark's)"), -1;
    int has_alpha = info.has_alpha || info.is_lossless, channels = has_alpha ? 4 : 3;
    int target_w, target_h;
    fitted_size(info.width, info.height, BOX, BOX, &target_w, &target_h);
    /* WebPDecoding.decodeStill: scaled on load by libwebp, except with alpha (full size, then the
       premultiplied area average). */
    int scaled = !has_alpha || (target_w == info.width && target_h == info.height);
    int decode_w = scaled ? target_w : info.width, decode_h = scaled ? target_h : info.height;
    size_t stride = (size_t)decode_w * (size_t)channels;
    uint8_t *pixels = malloc(stride * (size_t)decode_h);
    if (!pixels) return snprintf(error, error_size, "out of memory"), -1;
    status = cwebp_decode(source->data, source->size, channels, decode_w, decode_h, pixels, stride);
    if (status != 0) {
        free(pixels);
        return snprintf(error, error_size, "cwebp_decode: status %d", status), -1;
    }
    if (!scaled) {
        uint8_t *resized = resample(pixels, decode_w, decode_h, stride, channels, 1, target_w, target_h);
        free(pixels);
        if (!resized) return snprintf(error, error_size, "resample: out of memory"), -1;
        pixels = resized;
    }
    size_t exif_offset, exif_length;
    (void)cwebp_exif(source->data, source->size, &exif_offset, &exif_length); /* WebPDecoding.oriented */
    uint8_t *bytes = NULL;
    int encode_error = 0;
    size_t count = cwebp_encode(pixels, target_w, target_h, (size_t)target_w * (size_t)channels, channels, WEBP_QUALITY, 0,
                                WEBP_METHOD, &bytes, &encode_error);
    free(pixels);
    if (count == 0 || !bytes) return snprintf(error, error_size, "cwebp_encode: error %d", encode_error), -1;
    *out = (encoded){bytes, count, cwebp_free, target_w, target_h};
    return 0;
}

static int once_avif(const buffer *source, encoded *out, char *error, size_t error_size) {
    int result = 0;
    CAVIFDecoder *decoder = cavif_decoder_create(source->data, source->size, &result);
    if (!decoder) return snprintf(error, error_size, "cavif_decoder_create: %s", cavif_result_string(result)), -1;
    CAVIFInfo info;
    cavif_decoder_info(decoder, &info);
    if (info.has_crop || info.exif_orientation != 1) {
        cavif_decoder_destroy(decoder);
        return snprintf(error, error_size, "clap/irot/imir: not this benchmark's sources"), -1;
    }
    int width = (int)info.width, height = (int)info.height, channels = info.has_alpha ? 4 : 3;
    size_t stride = (size_t)width * (size_t)channels;
    uint8_t *decoded = malloc(stride * (size_t)height);
    double seconds = 0;
    if (!decoded) {
        cavif_decoder_destroy(decoder);
        return snprintf(error, error_size, "out of memory"), -1;
    }
    result = cavif_decoder_next(decoder, decoded, stride, channels, &seconds);
    cavif_decoder_destroy(decoder);
    if (cavif_result_kind(result) != CAVIFResultOK) {
        free(decoded);
        return snprintf(error, error_size, "cavif_decoder_next: %s", cavif_result_string(result)), -1;
    }
    int target_w, target_h;
    fitted_size(width, height, BOX, BOX, &target_w, &target_h);
    uint8_t *pixels = decoded;
    if (target_w != width || target_h != height) {
        pixels = resample(decoded, width, height, stride, channels, info.has_alpha, target_w, target_h);
        free(decoded);
        if (!pixels) return snprintf(error, error_size, "resample: out of memory"), -1;
    }
    CAVIFEncoder *encoder = cavif_encoder_create(AVIF_SPEED, avif_quantizer(AVIF_QUALITY_PERCENT), 0, 1);
    if (!encoder) {
        free(pixels);
        return snprintf(error, error_size, "cavif_encoder_create failed"), -1;
    }
    int added = cavif_encoder_add(encoder, pixels, (uint32_t)target_w, (uint32_t)target_h, (size_t)target_w * (size_t)channels,
                                  channels, 1, 1);
    free(pixels);
    uint8_t *bytes = NULL;
    size_t count = added ? cavif_encoder_finish(encoder, &bytes) : 0;
    if (count == 0 || !bytes) {
        snprintf(error, error_size, "AVIF encode: %s", cavif_encoder_message(encoder));
        cavif_encoder_destroy(encoder);
        return -1;
    }
    cavif_encoder_destroy(encoder);
    *out = (encoded){bytes, count, cavif_encoded_free, target_w, target_h};
    return 0;
}

static int once(enum cell cell, const buffer *source, encoded *out, char *error, size_t error_size) {
    error[0] = '\0';
    switch (cell) {
    case CELL_JPEG: return once_jpeg(source, out, error, error_size);
    case CELL_PNG: return once_png(source, out, error, error_size);
    case CELL_WEBP: return once_webp(source, out, error, error_size);
    case CELL_AVIF: return once_avif(source, out, error, error_size);
    }
    return -1;
}

/* ---- --fetch: each source from nginx, as the server gets it ------------------------------- */

/* With --fetch PORT, an iteration first GETs its source from the nginx on 127.0.0.1:PORT
 * (/serving/div2k/<ext>/<i>.<ext>, the URL the server fetches) over the thread's kept-alive
 * connection, reading the body into a buffer of its Content-Length, the least any server that
 * fetches its sources over HTTP must do; then the codec work on it. */
static int fetch_port;
static enum cell the_cell;

static int connect_origin(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)fetch_port)};
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* GETs source `index` on *fd (connected first if -1): 0 and the body in *out, else -1 and why. */
static int fetch_source(int *fd, int index, buffer *out, char *error, size_t error_size) {
    if (*fd < 0 && (*fd = connect_origin()) < 0) return snprintf(error, error_size, "connect: %s", strerror(errno)), -1;
    const char *ext = CELL_EXTS[the_cell];
    char request[256];
    int length = snprintf(request, sizeof request, "GET /serving/div2k/%s/%d.%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n",
                          ext, index, ext, fetch_port);
    for (int sent = 0; sent < length;) {
        ssize_t n = send(*fd, request + sent, (size_t)(length - sent), MSG_NOSIGNAL);
        if (n <= 0) return snprintf(error, error_size, "send: %s", strerror(errno)), -1;
        sent += (int)n;
    }
    char head[16384];
    size_t have = 0;
    char *end = NULL;
    while (!end) {
        if (have == sizeof head - 1) return snprintf(error, error_size, "a head over 16 KiB"), -1;
        ssize_t n = recv(*fd, head + have, sizeof head - 1 - have, 0);
        if (n <= 0) return snprintf(error, error_size, "recv (head): %s", n == 0 ? "closed" : strerror(errno)), -1;
        have += (size_t)n;
        head[have] = '\0';
        end = strstr(head, "\r\n\r\n");
    }
    if (strncmp(head, "HTTP/1.1 200", 12) != 0) return snprintf(error, error_size, "status line: %.40s", head), -1;
    const char *field = strcasestr(head, "\r\ncontent-length:");
    if (!field || field > end) return snprintf(error, error_size, "no Content-Length"), -1;
    size_t body = strtoull(field + 17, NULL, 10), leftover = have - (size_t)(end + 4 - head);
    if (body == 0 || leftover > body) return snprintf(error, error_size, "Content-Length %zu", body), -1;
    out->data = malloc(body);
    out->size = body;
    if (!out->data) return snprintf(error, error_size, "out of memory"), -1;
    memcpy(out->data, end + 4, leftover);
    for (size_t got = leftover; got < body;) {
        ssize_t n = recv(*fd, out->data + got, body - got, 0);
        if (n <= 0) {
            free(out->data);
            return snprintf(error, error_size, "recv (body): %s", n == 0 ? "closed" : strerror(errno)), -1;
        }
        got += (size_t)n;
    }
    return 0;
}

/* ---- the loop ---------------------------------------------------------------------------- */

static buffer *sources;
static int source_count;
static int expected_w, expected_h;
static int thread_count = 2;
static pthread_barrier_t ready, start_line;
static double deadline;

typedef struct {
    int index;
    long results;
    double bytes;
    double finished;
} worker;

static void fail(const char *what, int index, const char *message) {
    fprintf(stderr, "codec_loop %s: %s %d: %s\n", CELL_NAMES[the_cell], what, index, message);
    exit(1);
}

static void check(const encoded *e, int index) {
    if (e->count == 0 || e->width != expected_w || e->height != expected_h) {
        char message[96];
        snprintf(message, sizeof message, "output %dx%d of %zu bytes, expected %dx%d", e->width, e->height, e->count,
                 expected_w, expected_h);
        fail("source", index, message);
    }
}

/* One iteration on source i: fetched first with --fetch (on *fd), else from memory. */
static void iterate(int i, int *fd, encoded *e) {
    char error[512];
    if (fetch_port) {
        buffer fetched;
        if (fetch_source(fd, i, &fetched, error, sizeof error) != 0) fail("fetching source", i, error);
        int result = once(the_cell, &fetched, e, error, sizeof error);
        free(fetched.data);
        if (result != 0) fail("source", i, error);
    } else if (once(the_cell, &sources[i], e, error, sizeof error) != 0) {
        fail("source", i, error);
    }
}

static void *work(void *argument) {
    worker *me = argument;
    int i = me->index * source_count / thread_count, fd = -1;
    encoded e;
    /* One untimed iteration, then wait for the others. */
    iterate(i, &fd, &e);
    check(&e, i);
    release_encoded(&e);
    pthread_barrier_wait(&ready);        /* every warm-up done: main starts the clock */
    pthread_barrier_wait(&start_line);   /* the deadline is set */
    double end = deadline;
    for (;;) {
        i = (i + 1) % source_count;
        iterate(i, &fd, &e);
        check(&e, i);
        me->results += 1;
        me->bytes += (double)e.count;
        release_encoded(&e);
        double t = now_seconds();
        if (t >= end) {
            me->finished = t;
            break;
        }
    }
    if (fd >= 0) close(fd);
    return NULL;
}

static buffer read_file(const char *path) {
    buffer b = {0};
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "codec_loop: cannot open %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    b.data = malloc(size > 0 ? (size_t)size : 1);
    b.size = size > 0 ? (size_t)size : 0;
    if (!b.data || fread(b.data, 1, b.size, f) != b.size) {
        fprintf(stderr, "codec_loop: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    return b;
}

static void usage(void) {
    fprintf(stderr, "usage: codec_loop jpeg|png|webp|avif [--seconds N] [--threads T] [--sources DIR] [--count K] [--out DIR] [--fetch PORT]\n");
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    int found = 0;
    for (int c = 0; c < 4; c++) {
        if (strcmp(argv[1], CELL_NAMES[c]) == 0) {
            the_cell = (enum cell)c;
            found = 1;
        }
    }
    if (!found) usage();
    double seconds = 10;
    const char *out_dir = NULL;
    char default_sources[1024];
    const char *runtime = getenv("WEBIMAGE_NGINX_RUNTIME");
    snprintf(default_sources, sizeof default_sources, "%s/serving/div2k",
             runtime && *runtime ? runtime : "/tmp/webimage-bench-nginx");
    const char *source_dir = default_sources;
    source_count = 20;
    for (int a = 2; a < argc; a++) {
        if (a + 1 >= argc) usage();
        if (strcmp(argv[a], "--seconds") == 0) seconds = atof(argv[++a]);
        else if (strcmp(argv[a], "--threads") == 0) thread_count = atoi(argv[++a]);
        else if (strcmp(argv[a], "--sources") == 0) source_dir = argv[++a];
        else if (strcmp(argv[a], "--count") == 0) source_count = atoi(argv[++a]);
        else if (strcmp(argv[a], "--out") == 0) out_dir = argv[++a];
        else if (strcmp(argv[a], "--fetch") == 0) fetch_port = atoi(argv[++a]);
        else usage();
    }
    if (seconds <= 0 || thread_count < 1 || thread_count > 64 || source_count < 1 || fetch_port < 0 || fetch_port > 65535) usage();

    const char *ext = CELL_EXTS[the_cell];
    sources = calloc((size_t)source_count, sizeof *sources);
    for (int i = 0; i < source_count; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s/%d.%s", source_dir, ext, i, ext);
        sources[i] = read_file(path);
    }
    /* Every source of the benchmark is 2040x1356: the output size is read from the first one's decode. */
    {
        char error[512];
        encoded e;
        if (once(the_cell, &sources[0], &e, error, sizeof error) != 0) fail("source", 0, error);
        expected_w = e.width;
        expected_h = e.height;
        release_encoded(&e);
    }
    if (out_dir) {
        mkdir(out_dir, 0755);
        for (int i = 0; i < source_count; i++) {
            char error[512], path[1200];
            encoded e;
            if (once(the_cell, &sources[i], &e, error, sizeof error) != 0) fail("source", i, error);
            check(&e, i);
            snprintf(path, sizeof path, "%s/%d.%s", out_dir, i, ext);
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(e.bytes, 1, e.count, f) != e.count || fclose(f) != 0) fail("writing", i, path);
            release_encoded(&e);
        }
    }

    pthread_barrier_init(&ready, NULL, (unsigned)thread_count + 1);
    pthread_barrier_init(&start_line, NULL, (unsigned)thread_count + 1);
    worker *workers = calloc((size_t)thread_count, sizeof *workers);
    pthread_t *threads = calloc((size_t)thread_count, sizeof *threads);
    for (int t = 0; t < thread_count; t++) {
        workers[t].index = t;
        if (pthread_create(&threads[t], NULL, work, &workers[t]) != 0) {
            fprintf(stderr, "codec_loop: pthread_create failed\n");
            return 1;
        }
    }
    /* The clock starts once every thread has made its warm-up iteration; the second barrier
       publishes the deadline to them. */
    pthread_barrier_wait(&ready);
    double start = now_seconds();
    deadline = start + seconds;
    pthread_barrier_wait(&start_line);
    long results = 0;
    double bytes = 0, finished = start;
    for (int t = 0; t < thread_count; t++) {
        pthread_join(threads[t], NULL);
        results += workers[t].results;
        bytes += workers[t].bytes;
        if (workers[t].finished > finished) finished = workers[t].finished;
    }
    double elapsed = finished - start;
    struct rusage usage_self;
    getrusage(RUSAGE_SELF, &usage_self);
    printf("{\"cell\": \"%s\", \"threads\": %d, \"seconds\": %.3f, \"results\": %ld, \"results_per_second\": %.2f, "
           "\"mean_bytes\": %.0f, \"output\": \"%dx%d\", \"sources\": %d, \"peak_rss_mib\": %.1f, \"cc\": \"%s\", \"fetch\": %s, \"work\": \"%s\"}\n",
           CELL_NAMES[the_cell], thread_count, elapsed, results, elapsed > 0 ? (double)results / elapsed : 0.0,
           results > 0 ? bytes / (double)results : 0.0, expected_w, expected_h, source_count,
           (double)usage_self.ru_maxrss / 1024.0, CODEC_LOOP_CC " -O2", fetch_port ? "true" : "false", CELL_WORK[the_cell]);
    return 0;
}
