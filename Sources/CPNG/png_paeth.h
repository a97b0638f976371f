// PNG's Paeth predictor, shared by the fast decoder (png_fast.c) and the encoder (png_encode.c):
// of the left (a), upper (b) and upper-left (c) neighbours, the one nearest a + b - c, ties going to
// a, then b. Written with selects, no branches on the bytes, so loops over it can be vectorised.

#ifndef CPNG_PAETH_H
#define CPNG_PAETH_H

#include <stdint.h>
#include <stdlib.h>

static inline uint8_t cpng_paeth(uint8_t a, uint8_t b, uint8_t c) {
    int pa = abs((int)b - (int)c), pb = abs((int)a - (int)c), pc = abs((int)a + (int)b - 2 * (int)c);
    return (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
}

#endif
