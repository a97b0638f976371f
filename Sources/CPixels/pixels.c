#include "CPixels.h"
#include "CSystemTuning.h"

static inline uint8_t wi_round_clamp(float value) {
    float v = value + 0.5f;
    v = v < 0.0f ? 0.0f : v;
    v = v > 255.0f ? 255.0f : v;
    return (uint8_t)(int)v;
}

void wi_store_rounded(const float *values, size_t count, uint8_t *out) {
    for (size_t i = 0; i < count; i++) out[i] = wi_round_clamp(values[i]);
}

void wi_store_unpremultiplied(const float *values, size_t pixels, size_t channels, uint8_t *out) {
    for (size_t x = 0; x < pixels; x++) {
        const float *pixel = values + x * channels;
        float alpha = pixel[channels - 1];
        float unpremultiply = alpha > 0.0f ? 255.0f / alpha : 0.0f;
        for (size_t c = 0; c + 1 < channels; c++) out[x * channels + c] = wi_round_clamp(pixel[c] * unpremultiply);
        out[x * channels + channels - 1] = wi_round_clamp(alpha);
    }
}

void wi_filter_rows(const uint8_t *const *rows, const float *weights, size_t taps, size_t count, size_t alpha_channels,
                    float *out) {
    wi_yield_point();   /* one output row: a cold server thread lets a waiting thread run (CSystemTuning.h) */
    if (alpha_channels == 0) {
        const uint8_t *first = rows[0];
        float w0 = weights[0];
        for (size_t i = 0; i < count; i++) out[i] = (float)first[i] * w0;
        for (size_t k = 1; k < taps; k++) {
            const uint8_t *row = rows[k];
            float w = weights[k];
            if (w == 0.0f) continue;
            for (size_t i = 0; i < count; i++) out[i] += (float)row[i] * w;
        }
        return;
    }
    size_t channels = alpha_channels;
    for (size_t i = 0; i < count; i++) out[i] = 0.0f;
    for (size_t k = 0; k < taps; k++) {
        const uint8_t *row = rows[k];
        float w = weights[k];
        if (w == 0.0f) continue;
        for (size_t p = 0; p + channels <= count; p += channels) {
            float a = (float)row[p + channels - 1];
            float scaled = w * a * (1.0f / 255.0f);
            for (size_t c = 0; c + 1 < channels; c++) out[p + c] += (float)row[p + c] * scaled;
            out[p + channels - 1] += a * w;
        }
    }
}

void wi_filter_columns(const float *row, const long *firsts, const float *weights, size_t taps, size_t pixels, size_t channels,
                       float *out) {
    wi_yield_point();
    if (channels == 4) {
        for (size_t x = 0; x < pixels; x++) {
            const float *source = row + firsts[x] * 4;
            const float *w = weights + x * taps;
            float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (size_t k = 0; k < taps; k++) {
                s0 += source[4 * k] * w[k];
                s1 += source[4 * k + 1] * w[k];
                s2 += source[4 * k + 2] * w[k];
                s3 += source[4 * k + 3] * w[k];
            }
            out[4 * x] = s0; out[4 * x + 1] = s1; out[4 * x + 2] = s2; out[4 * x + 3] = s3;
        }
        return;
    }
    if (channels == 3) {
        for (size_t x = 0; x < pixels; x++) {
            const float *source = row + firsts[x] * 3;
            const float *w = weights + x * taps;
            float s0 = 0, s1 = 0, s2 = 0;
            for (size_t k = 0; k < taps; k++) {
                s0 += source[3 * k] * w[k];
                s1 += source[3 * k + 1] * w[k];
                s2 += source[3 * k + 2] * w[k];
            }
            out[3 * x] = s0; out[3 * x + 1] = s1; out[3 * x + 2] = s2;
        }
        return;
    }
    for (size_t x = 0; x < pixels; x++) {
        const float *w = weights + x * taps;
        for (size_t c = 0; c < channels; c++) {
            float sum = 0;
            for (size_t k = 0; k < taps; k++) sum += row[(firsts[x] + k) * channels + c] * w[k];
            out[x * channels + c] = sum;
        }
    }
}

/* The same passes over 16-bit samples (0...65535), for images kept at 16 bits per channel. */

static inline uint16_t wi_round_clamp16(float value) {
    float v = value + 0.5f;
    v = v < 0.0f ? 0.0f : v;
    v = v > 65535.0f ? 65535.0f : v;
    return (uint16_t)(int)v;
}

void wi_store_rounded16(const float *values, size_t count, uint16_t *out) {
    for (size_t i = 0; i < count; i++) out[i] = wi_round_clamp16(values[i]);
}

void wi_store_unpremultiplied16(const float *values, size_t pixels, size_t channels, uint16_t *out) {
    for (size_t x = 0; x < pixels; x++) {
        const float *pixel = values + x * channels;
        float alpha = pixel[channels - 1];
        float unpremultiply = alpha > 0.0f ? 65535.0f / alpha : 0.0f;
        for (size_t c = 0; c + 1 < channels; c++) out[x * channels + c] = wi_round_clamp16(pixel[c] * unpremultiply);
        out[x * channels + channels - 1] = wi_round_clamp16(alpha);
    }
}

void wi_filter_rows16(const uint16_t *const *rows, const float *weights, size_t taps, size_t count, size_t alpha_channels,
                      float *out) {
    wi_yield_point();
    for (size_t i = 0; i < count; i++) out[i] = 0.0f;
    for (size_t k = 0; k < taps; k++) {
        const uint16_t *row = rows[k];
        float w = weights[k];
        if (w == 0.0f) continue;
        if (alpha_channels == 0) {
            for (size_t i = 0; i < count; i++) out[i] += (float)row[i] * w;
            continue;
        }
        size_t channels = alpha_channels;
        for (size_t p = 0; p + channels <= count; p += channels) {
            float a = (float)row[p + channels - 1];
            float scaled = w * a * (1.0f / 65535.0f);
            for (size_t c = 0; c + 1 < channels; c++) out[p + c] += (float)row[p + c] * scaled;
            out[p + channels - 1] += a * w;
        }
    }
}
