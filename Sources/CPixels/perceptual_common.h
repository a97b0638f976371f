#pragma once
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* What DSSIM (dssim.c) and SSIMULACRA2 (ssimulacra2.c) prepare alike. */

/* A new buffer of linear-light floats from 8-bit sRGB pixels of `channels` bytes (3 or 4), rows
   `stride` bytes apart: with `premultiplied` 4 floats a pixel (RGB times alpha, then alpha; needs 4
   channels), else 3 (RGB, alpha ignored). NULL when memory runs out; the caller frees it. */
static inline float *wi_linear_pixels(const uint8_t *pixels, size_t width, size_t height, size_t stride,
                                      size_t channels, int premultiplied) {
    const size_t out = premultiplied ? 4 : 3;
    float *linear = malloc(width * height * out * sizeof(float));
    if (!linear) return NULL;
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
    return linear;
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
