// PNG encoding: rows filtered as libpng filters them by default, compressed with libdeflate (about
// twice as fast as zlib at the same level on photos, and never a worse ratio in `bench codecs`), and
// written as IHDR, IDAT chunks of at most 1 MiB, IEND. Nothing else: outputs carry no metadata (the
// caller embeds what it was asked to keep).
//
// libdeflate 1.14 (libdeflate.h): a compressor per call (not thread-safe, cheap to allocate at levels
// 0-9), a zlib stream with a 32 KiB window, level 0 writing stored blocks; libdeflate_zlib_compress
// returns 0 when the output buffer is too small, which libdeflate_zlib_compress_bound rules out. It
// allocates nothing while compressing, never calls back and never blocks.

#include "CPNG.h"
#include "png_paeth.h"
#include "CSystemTuning.h"

#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#define IDAT_CHUNK_LIMIT (1u << 20)

static void copy_text(char *target, size_t capacity, const char *text) {
    if (capacity == 0) return;
    strncpy(target, text, capacity - 1);
    target[capacity - 1] = '\0';
}

static void put32(uint8_t *p, uint32_t value) {
    p[0] = (uint8_t)(value >> 24);
    p[1] = (uint8_t)(value >> 16);
    p[2] = (uint8_t)(value >> 8);
    p[3] = (uint8_t)value;
}

// Writes a chunk (length, type, data, CRC) at `out`; returns the bytes written.
static size_t put_chunk(uint8_t *out, const char *type, const uint8_t *data, size_t length) {
    put32(out, (uint32_t)length);
    memcpy(out + 4, type, 4);
    if (length > 0) memmove(out + 8, data, length);
    put32(out + 8 + length, libdeflate_crc32(0, out + 4, length + 4));
    return length + 12;
}

// A filtered byte's weight in libpng's default heuristic: its value read as signed, made positive.
static inline unsigned weight(uint8_t v) {
    return v < 128 ? v : 256u - v;
}

// `weigh` is None's weight; each other filter writes its output for `row` (above it `up`, zeros for the first row) into `out` and
// returns the output's weight. Straight loops without branches on the byte, which compilers turn into
// vector code (Paeth's choice is made with selects: png_paeth.h).
static size_t weigh(const uint8_t *row, size_t count) {
    size_t sum = 0;
    for (size_t i = 0; i < count; i++) sum += weight(row[i]);
    return sum;
}

static size_t filter_sub(const uint8_t *row, size_t count, size_t bpp, uint8_t *out) {
    size_t sum = 0;
    for (size_t i = 0; i < bpp && i < count; i++) {
        out[i] = row[i];
        sum += weight(row[i]);
    }
    for (size_t i = bpp; i < count; i++) {
        uint8_t v = (uint8_t)(row[i] - row[i - bpp]);
        out[i] = v;
        sum += weight(v);
    }
    return sum;
}

static size_t filter_up(const uint8_t *row, const uint8_t *up, size_t count, uint8_t *out) {
    size_t sum = 0;
    for (size_t i = 0; i < count; i++) {
        uint8_t v = (uint8_t)(row[i] - up[i]);
        out[i] = v;
        sum += weight(v);
    }
    return sum;
}

static size_t filter_average(const uint8_t *row, const uint8_t *up, size_t count, size_t bpp, uint8_t *out) {
    size_t sum = 0;
    for (size_t i = 0; i < bpp && i < count; i++) {
        uint8_t v = (uint8_t)(row[i] - (up[i] >> 1));
        out[i] = v;
        sum += weight(v);
    }
    for (size_t i = bpp; i < count; i++) {
        uint8_t v = (uint8_t)(row[i] - (((unsigned)row[i - bpp] + up[i]) >> 1));
        out[i] = v;
        sum += weight(v);
    }
    return sum;
}

static size_t filter_paeth(const uint8_t *row, const uint8_t *up, size_t count, size_t bpp, uint8_t *out) {
    size_t sum = 0;
    for (size_t i = 0; i < bpp && i < count; i++) {   // left and corner are zero: Paeth predicts `up`
        uint8_t v = (uint8_t)(row[i] - up[i]);
        out[i] = v;
        sum += weight(v);
    }
    for (size_t i = bpp; i < count; i++) {
        uint8_t v = (uint8_t)(row[i] - cpng_paeth(row[i - bpp], up[i], up[i - bpp]));
        out[i] = v;
        sum += weight(v);
    }
    return sum;
}

int cpng_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t bytesPerRow,
                uint32_t channels, int compressionLevel, uint8_t **output, size_t *outputCount,
                char *message, size_t messageCapacity) {
    return cpng_encode_depth(pixels, width, height, bytesPerRow, channels, 8, compressionLevel, output, outputCount,
                             message, messageCapacity);
}

// Row `y` of 16-bit native-endian samples written big-endian (PNG's order) into `out`.
static void big_endian_row(const uint8_t *pixels, size_t bytesPerRow, uint32_t y, size_t samples, uint8_t *out) {
    const uint16_t *row = (const uint16_t *)(const void *)(pixels + (size_t)y * bytesPerRow);
    for (size_t i = 0; i < samples; i++) {
        out[2 * i] = (uint8_t)(row[i] >> 8);
        out[2 * i + 1] = (uint8_t)row[i];
    }
}

int cpng_encode_depth(const uint8_t *pixels, uint32_t width, uint32_t height, size_t bytesPerRow,
                      uint32_t channels, uint32_t bitDepth, int compressionLevel, uint8_t **output, size_t *outputCount,
                      char *message, size_t messageCapacity) {
    *output = NULL;
    *outputCount = 0;
    static const uint8_t colorTypes[5] = {0, 0, 4, 2, 6};
    size_t sampleBytes = bitDepth == 16 ? 2 : 1;
    if (channels < 1 || channels > 4 || (bitDepth != 8 && bitDepth != 16) || width == 0 || height == 0 ||
        width > 0x7FFFFFFFu || height > 0x7FFFFFFFu || (size_t)width * channels > SIZE_MAX / 2 ||
        bytesPerRow < (size_t)width * channels * sampleBytes) {
        copy_text(message, messageCapacity, "invalid image geometry for PNG");
        return 0;
    }
    int level = compressionLevel < 0 ? 0 : (compressionLevel > 9 ? 9 : compressionLevel);
    size_t rowBytes = (size_t)width * channels * sampleBytes;
    size_t bpp = channels * sampleBytes;   // the filters' "previous pixel" distance, in bytes
    if (rowBytes + 1 > SIZE_MAX / height) {
        copy_text(message, messageCapacity, "encoded data too large");
        return 0;
    }
    size_t filteredBytes = (rowBytes + 1) * (size_t)height;
    uint8_t *filtered = malloc(filteredBytes);
    uint8_t *candidates = malloc(rowBytes * 4);
    uint8_t *zeroRow = calloc(rowBytes, 1);
    // 16-bit rows are filtered in PNG's byte order: this row and the one above, big-endian.
    uint8_t *swapped = sampleBytes == 2 ? malloc(rowBytes * 2) : NULL;
    struct libdeflate_compressor *compressor = libdeflate_alloc_compressor(level);
    if (filtered == NULL || candidates == NULL || zeroRow == NULL || compressor == NULL || (sampleBytes == 2 && swapped == NULL)) {
        free(filtered);
        free(candidates);
        free(zeroRow);
        free(swapped);
        if (compressor) libdeflate_free_compressor(compressor);
        copy_text(message, messageCapacity, "out of memory");
        return 0;
    }
    for (uint32_t y = 0; y < height; y++) {
        wi_yield_point();   /* a cold server thread lets a waiting thread run (CSystemTuning.h) */
        const uint8_t *row = pixels + (size_t)y * bytesPerRow;
        const uint8_t *up = y > 0 ? row - bytesPerRow : NULL;
        if (swapped != NULL) {
            uint8_t *current = swapped + (size_t)(y % 2) * rowBytes;
            big_endian_row(pixels, bytesPerRow, y, rowBytes / 2, current);
            up = y > 0 ? swapped + (size_t)((y + 1) % 2) * rowBytes : NULL;
            row = current;
        }
        uint8_t *out = filtered + (size_t)y * (rowBytes + 1);
        if (level == 0) {   // filters only help compression: without it they are wasted work
            out[0] = 0;
            memcpy(out + 1, row, rowBytes);
            continue;
        }
        // libpng's default choice: the filter whose output weighs least (the first of equals). Above
        // the first row is a row of zeros.
        const uint8_t *above = up != NULL ? up : zeroRow;
        size_t sums[5];
        sums[0] = weigh(row, rowBytes);
        sums[1] = filter_sub(row, rowBytes, bpp, candidates);
        sums[2] = filter_up(row, above, rowBytes, candidates + rowBytes);
        sums[3] = filter_average(row, above, rowBytes, bpp, candidates + 2 * rowBytes);
        sums[4] = filter_paeth(row, above, rowBytes, bpp, candidates + 3 * rowBytes);
        uint8_t best = 0;
        for (uint8_t type = 1; type <= 4; type++) {
            if (sums[type] < sums[best]) best = type;
        }
        out[0] = best;
        memcpy(out + 1, best == 0 ? row : candidates + (size_t)(best - 1) * rowBytes, rowBytes);
    }
    free(candidates);
    free(zeroRow);
    free(swapped);

    size_t bound = libdeflate_zlib_compress_bound(compressor, filteredBytes);
    size_t chunks = bound / IDAT_CHUNK_LIMIT + 1;
    size_t capacity = 8 + 25 + bound + chunks * 12 + 12;
    uint8_t *file = malloc(capacity);
    if (file == NULL) {
        free(filtered);
        libdeflate_free_compressor(compressor);
        copy_text(message, messageCapacity, "out of memory");
        return 0;
    }
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    memcpy(file, signature, 8);
    uint8_t header[13];
    put32(header, width);
    put32(header + 4, height);
    header[8] = (uint8_t)bitDepth;
    header[9] = colorTypes[channels];
    header[10] = header[11] = header[12] = 0;
    size_t count = 8 + put_chunk(file + 8, "IHDR", header, sizeof header);
    // The stream is compressed past the room for every chunk's 12 bytes of framing; each chunk then
    // moves its part left into place (memmove in put_chunk), never reaching a part not yet moved,
    // so no second buffer is needed.
    size_t streamOffset = count + chunks * 12;
    size_t streamBytes = libdeflate_zlib_compress(compressor, filtered, filteredBytes, file + streamOffset, bound);
    free(filtered);
    libdeflate_free_compressor(compressor);
    if (streamBytes == 0) {
        free(file);
        copy_text(message, messageCapacity, "compression failed");
        return 0;
    }
    for (size_t offset = 0; offset < streamBytes; offset += IDAT_CHUNK_LIMIT) {
        size_t length = streamBytes - offset < IDAT_CHUNK_LIMIT ? streamBytes - offset : IDAT_CHUNK_LIMIT;
        count += put_chunk(file + count, "IDAT", file + streamOffset + offset, length);
    }
    count += put_chunk(file + count, "IEND", NULL, 0);
    uint8_t *shrunk = realloc(file, count);
    *output = shrunk != NULL ? shrunk : file;
    *outputCount = count;
    return 1;
}

void cpng_free(void *pointer) {
    free(pointer);
}
