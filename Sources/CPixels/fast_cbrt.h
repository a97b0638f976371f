#pragma once
#include <stdint.h>
#include <string.h>

/* The cube root of a float of 0 or more, to within about 1e-7 relative, without libm's cbrtf (a call
   per value that the colour conversions of DSSIM and SSIMULACRA2 spent most of their preparing in):
   an exponent-third first guess from the bits, then three Newton steps. Plain arithmetic that clang
   vectorises; 0 for 0. */
static inline float wi_fast_cbrtf(float x) {
    if (!(x > 0.0f)) return 0.0f;
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    bits = bits / 3 + 709921077u;
    float y;
    memcpy(&y, &bits, sizeof y);
    y = (2.0f * y + x / (y * y)) * (1.0f / 3.0f);
    y = (2.0f * y + x / (y * y)) * (1.0f / 3.0f);
    y = (2.0f * y + x / (y * y)) * (1.0f / 3.0f);
    return y;
}
