#pragma once
#include <stddef.h>
#include <stdint.h>
#include "dssim.h"
#include "ssimulacra2.h"

/// Pixel loops the Swift compiler does not vectorise: its Float-to-integer conversion checks every
/// value for infinity and NaN, one lane at a time, even after a clamp. Plain C loops clang turns
/// into SIMD. Pure functions on caller-owned memory; no allocation, no errors.

/// out[i] = (uint8_t)clamp(values[i] + 0.5, 0, 255), truncated: the resampler's rounding.
void wi_store_rounded(const float *values, size_t count, uint8_t *out);

/// Interleaved premultiplied pixels (`channels` floats, alpha last, colour on a 0...255·alpha/255
/// scale) to straight 8-bit: colour divided by alpha/255, alpha rounded; colour 0 where alpha is 0.
void wi_store_unpremultiplied(const float *values, size_t pixels, size_t channels, uint8_t *out);

/// One row of the vertical pass: out[i] = Σ_k weights[k] · rows[k][i] over `count` 8-bit samples
/// (`taps` source rows). With `alpha_channels` > 0 the samples are pixels of that many channels,
/// alpha last, and colour is premultiplied by alpha/255 before weighting (alpha itself is not).
void wi_filter_rows(const uint8_t *const *rows, const float *weights, size_t taps, size_t count, size_t alpha_channels,
                    float *out);

/// One row of the horizontal pass: output pixel x is Σ_k weights[x·taps + k] · row pixel
/// (firsts[x] + k), `channels` floats per pixel.
void wi_filter_columns(const float *row, const long *firsts, const float *weights, size_t taps, size_t pixels, size_t channels,
                       float *out);

/// `wi_store_rounded` onto 16-bit samples: clamp(values[i] + 0.5, 0, 65535), truncated.
void wi_store_rounded16(const float *values, size_t count, uint16_t *out);

/// `wi_store_unpremultiplied` for pixels premultiplied on a 0...65535 scale, stored as 16-bit samples.
void wi_store_unpremultiplied16(const float *values, size_t pixels, size_t channels, uint16_t *out);

/// `wi_filter_rows` over 16-bit samples: colour premultiplied by alpha/65535 when `alpha_channels` > 0.
void wi_filter_rows16(const uint16_t *const *rows, const float *weights, size_t taps, size_t count, size_t alpha_channels,
                      float *out);
