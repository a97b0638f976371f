#pragma once
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* What DSSIM (dssim.c) and SSIMULACRA2 (ssimulacra2.c) prepare alike. */

/* One scale of a prepared picture: per channel of its colour space (L*a*b* or XYB) the plane, its
   blurred mean and the blur of its square. */
typedef struct {
    size_t width, height;
    float *plane[3], *mu[3], *sq[3];
} wi_metric_scale;

/* Allocates a scale's nine planes of `width`×`height`; 0 when memory runs out (`wi_metric_scale_free`
   frees what was allocated). */
static inline int wi_metric_scale_allocate(wi_metric_scale *scale, size_t width, size_t height) {
    scale->width = width;
    scale->height = height;
    for (int c = 0; c < 3; c++) {
        scale->plane[c] = malloc(width * height * sizeof(float));
        scale->mu[c] = malloc(width * height * sizeof(float));
        scale->sq[c] = malloc(width * height * sizeof(float));
        if (!scale->plane[c] || !scale->mu[c] || !scale->sq[c]) return 0;
    }
    return 1;
}

/* Frees a scale's planes (NULL ones are ignored). */
static inline void wi_metric_scale_free(wi_metric_scale *scale) {
    for (int c = 0; c < 3; c++) {
        free(scale->plane[c]);
        free(scale->mu[c]);
        free(scale->sq[c]);
    }
}

/* Linear-light floats from 8-bit sRGB pixels of `channels` bytes (3 or 4), rows `stride` bytes apart,
   written to `linear`: with `premultiplied` 4 floats a pixel (RGB times alpha, then alpha; needs 4
   channels), else 3 (RGB, alpha ignored). */
static inline void wi_linear_pixels(const uint8_t *pixels, size_t width, size_t height, size_t stride,
                                    size_t channels, int premultiplied, float *linear) {
    const size_t out = premultiplied ? 4 : 3;
    float curve[256];
    for (int v = 0; v < 256; v++) {
        double s = v / 255.0;
        curve[v] = (float)(s <= 0.04045 ? s / 12.92 : pow((s + 0.055) / 1.055, 2.4));
    }
    for (size_t y = 0; y < height; y++) {
        const uint8_t *row = pixels + y * stride;
        float *dst = linear + y * width * out;
        for (size_t x = 0; x < width; x++) {
            const float alpha = premultiplied ? row[x * channels + 3] / 255.0f : 1.0f;
            for (int c = 0; c < 3; c++) dst[x * out + c] = curve[row[x * channels + c]] * alpha;
            if (premultiplied) dst[x * out + 3] = alpha;
        }
    }
}

/* Takes the spare candidate `*slot` holds (leaving NULL), or NULL when there is none (another
   comparison holds it). With `wi_spare_return`, a prepared original keeps one candidate's planes
   and work buffers from one comparison to the next: a quality search compares several candidates
   of one size, and allocating their megabytes afresh each time cost more in page faults
   than the arithmetic (4,240 faults, most of a 640×427 SSIMULACRA2 preparation). */
static inline void *wi_spare_take(void *_Atomic *slot) {
    return atomic_exchange(slot, NULL);
}

/* Gives `candidate` back to `*slot`; 0 when the slot was filled meanwhile (the caller frees it). */
static inline int wi_spare_return(void *_Atomic *slot, void *candidate) {
    void *expected = NULL;
    return atomic_compare_exchange_strong(slot, &expected, candidate);
}

/* The next scale of a picture of interleaved float pixels (`channels` values each): 2×2 box averages,
   written over the same buffer (output pixel (x, y) reads input rows 2y and 2y+1 at or after its own
   index). An odd last row or column is dropped (`keep_odd_edge` 0, as DSSIM does) or averaged over
   the pixels it has (1, as SSIMULACRA2 does). Gives the new size in `*width` and `*height`. */
static inline void wi_halve_in_place(float *pixels, size_t *width, size_t *height, int channels, int keep_odd_edge) {
    const size_t w = *width, h = *height;
    const size_t nw = keep_odd_edge ? (w + 1) / 2 : w / 2, nh = keep_odd_edge ? (h + 1) / 2 : h / 2;
    for (size_t y = 0; y < nh; y++) {
        for (size_t x = 0; x < nw; x++) {
            float sum[4] = {0, 0, 0, 0};
            int n = 0;
            for (size_t dy = 0; dy < 2; dy++) {
                for (size_t dx = 0; dx < 2; dx++) {
                    const size_t sy = 2 * y + dy, sx = 2 * x + dx;
                    if (sy >= h || sx >= w) continue;
                    for (int c = 0; c < channels; c++) sum[c] += pixels[(sy * w + sx) * channels + c];
                    n++;
                }
            }
            for (int c = 0; c < channels; c++) pixels[(y * nw + x) * channels + c] = sum[c] / (float)n;
        }
    }
    *width = nw;
    *height = nh;
}

/* Defines `static void name parameters` to run `body arguments` (a `static inline` function marked
   `WI_INLINE`), compiled twice on x86-64, for AVX2 and for the baseline the package is built for,
   and chosen by the processor at each call. Only AVX2 is enabled, not FMA: clang fuses a multiply
   and an add only where FMA is, so both compilations round alike and give the same floats. The blurs
   and pooling loops of DSSIM and SSIMULACRA2 run about twice as fast with eight lanes as with four. */
#define WI_INLINE static inline __attribute__((always_inline))
#if defined(__x86_64__)
#define WI_WITH_AVX2(name, body, parameters, arguments)                                          \
    __attribute__((target("avx2"))) static void name##_avx2 parameters { body arguments; }       \
    static void name##_baseline parameters { body arguments; }                                   \
    static void name parameters {                                                                \
        if (__builtin_cpu_supports("avx2")) name##_avx2 arguments;                               \
        else name##_baseline arguments;                                                          \
    }
#else
#define WI_WITH_AVX2(name, body, parameters, arguments) \
    static void name parameters { body arguments; }
#endif
