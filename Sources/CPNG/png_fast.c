// The fast path for the PNGs servers see most: 8-bit gray, gray + alpha, RGB or RGBA, not interlaced,
// the whole file in memory. libdeflate inflates the IDAT stream in one call (about 1.7x zlib's inflate
// on the corpus's DIV2K-sized photos, which is most of a PNG decode), and the rows are unfiltered in
// place in the output buffer. Anything else, and anything libpng would warn about or refuse in the
// file's structure, is declined: the caller then decodes with libpng, whose pixels are the reference.
//
// What libdeflate 1.14 does (libdeflate.h): libdeflate_zlib_decompress_ex checks the zlib header
// (method 8, window at most 32 KiB, no preset dictionary, header checksum) and the Adler-32, never
// reads past `in_nbytes` nor writes past `out_nbytes_avail`, returns LIBDEFLATE_BAD_DATA for a
// damaged stream, LIBDEFLATE_INSUFFICIENT_SPACE when the output would be longer, and reports how many
// input bytes the stream used. It does not check distances against the header's window size (zlib
// does), so a stream whose header declares less than 32 KiB is declined.
//
// One difference is left (found in review, reading libdeflate's and zlib's sources): libdeflate is
// more lenient than zlib with deflate data no encoder writes — length symbols 286-287 and distance
// symbols 30-31, a one-codeword Huffman code's unused bit pattern, dynamic headers declaring more
// than 286/30 codes, code-length repeats running past the end. zlib (so libpng) calls those corrupt;
// here they decode. Telling them apart would mean inflating with zlib, which is what this path
// saves. Both are memory-safe; PNGIncrementalDecoder lets a full decode decide every failure, so
// its result still equals PNGCoder.decode's. It allocates nothing while
// decompressing, never calls back, and a decompressor is used by one thread at a time (one per call
// here). It is pure computation: nothing blocks.
//
// What libpng does with the same file, and so what is declined (see png_shim.c for its settings):
// critical chunks other than IHDR, IDAT and IEND (PLTE included), tRNS (turned into alpha) and acTL
// (an animation, decoded elsewhere) are declined; bad chunk names, lengths over 2^31 - 1, ancillary
// chunks over libpng's 8,000,000-byte chunk limit (IDAT chunks over its own limit), CRC errors in critical chunks, IDAT chunks that are
// not consecutive, a zlib stream that is damaged, too short, too long or followed by more data, and
// filter types over 4 are declined too, so that libpng reports them as it always has. Ancillary chunks
// are skipped unread, as libpng skips them (a damaged one is only a warning there). The deflate data
// itself is libdeflate's to judge (see above).

#include "CPNG.h"
#include "png_paeth.h"
#include "CSystemTuning.h"

#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_LIMIT 8000000u   // libpng's PNG_USER_CHUNK_MALLOC_MAX for chunks other than IDAT

static uint32_t read32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static int is_letter(uint8_t c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static int chunk_is(const uint8_t *type, const char *name) {
    return memcmp(type, name, 4) == 0;
}

// Whether the CRC stored after a chunk's data matches its type and data.
static int crc_matches(const uint8_t *chunk, uint32_t length) {
    return libdeflate_crc32(0, chunk + 4, (size_t)length + 4) == read32(chunk + 8 + length);
}

// libpng's limit on one IDAT chunk (png_check_chunk_length): the inflated size plus zlib's and
// deflate's overhead, or the general chunk limit if that is larger.
static size_t idat_limit(const CPNGFastLayout *layout) {
    size_t rowFactor = layout->rowBytes + 1;
    size_t limit = layout->filteredBytes;
    size_t capped = rowFactor > 32566 ? 32566 : rowFactor;
    limit += 6 + 5 * (limit / capped + 1);
    if (limit > 0x7FFFFFFFu) limit = 0x7FFFFFFFu;
    return limit > CHUNK_LIMIT ? limit : CHUNK_LIMIT;
}

// Walks every chunk up to IEND and fills `layout`; with `checksCRCs`, also checks the CRCs of IDAT and
// IEND (IHDR's always is), and with `gather`, copies the IDAT data there (never more than
// `gatherCapacity` bytes). Returns 0 for anything the fast path declines.
static int walk(const uint8_t *bytes, size_t count, CPNGFastLayout *layout, int checksCRCs, uint8_t *gather,
                size_t gatherCapacity) {
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    if (count < 8 + 25 + 12 || memcmp(bytes, signature, 8) != 0) return 0;
    size_t offset = 8;
    int sawIHDR = 0, idatState = 0;   // idatState: 0 none yet, 1 in the run of IDATs, 2 after it
    size_t gathered = 0;
    while (offset + 12 <= count) {
        const uint8_t *chunk = bytes + offset;
        uint32_t length = read32(chunk);
        const uint8_t *type = chunk + 4;
        if (length > 0x7FFFFFFFu || !is_letter(type[0]) || !is_letter(type[1]) || !is_letter(type[2]) || !is_letter(type[3])) return 0;
        if ((size_t)length > count - offset - 12) return 0;   // truncated: libpng says so
        const uint8_t *data = chunk + 8;
        int critical = (type[0] & 0x20) == 0;
        if (!sawIHDR) {
            if (!chunk_is(type, "IHDR") || length != 13 || !crc_matches(chunk, length)) return 0;
            uint32_t width = read32(data), height = read32(data + 4);
            uint8_t depth = data[8], color = data[9];
            if (width == 0 || height == 0 || width > CPNG_MAX_SIDE || height > CPNG_MAX_SIDE) return 0;
            if (depth != 8 || data[10] != 0 || data[11] != 0 || data[12] != 0) return 0;
            uint32_t channels = color == 0 ? 1 : color == 4 ? 2 : color == 2 ? 3 : color == 6 ? 4 : 0;
            if (channels == 0) return 0;
            layout->width = width;
            layout->height = height;
            layout->channels = channels;
            layout->rowBytes = (size_t)width * channels;
            if (layout->rowBytes + 1 > SIZE_MAX / height) return 0;   // only on 32-bit targets
            layout->filteredBytes = (layout->rowBytes + 1) * (size_t)height;
            layout->compressedBytes = 0;
            layout->idatChunks = 0;
            sawIHDR = 1;
        } else if (chunk_is(type, "IDAT")) {
            if (idatState == 2 || (size_t)length > idat_limit(layout)) return 0;
            idatState = 1;
            if (checksCRCs && !crc_matches(chunk, length)) return 0;
            if (gather) {
                if (length > gatherCapacity - gathered) return 0;
                memcpy(gather + gathered, data, length);
                gathered += length;
            }
            layout->compressedBytes += length;
            layout->idatChunks += 1;
            if (layout->idatChunks == 1) layout->firstIDATOffset = offset + 8;
        } else if (chunk_is(type, "IEND")) {
            if (idatState == 0 || length != 0) return 0;
            if (checksCRCs && !crc_matches(chunk, length)) return 0;
            return layout->compressedBytes > 0;
        } else {
            if (critical || chunk_is(type, "tRNS") || chunk_is(type, "acTL") || length > CHUNK_LIMIT) return 0;
            if (idatState == 1) idatState = 2;
        }
        offset += (size_t)length + 12;
    }
    return 0;   // no IEND: truncated
}

int cpng_fast_layout(const uint8_t *bytes, size_t count, CPNGFastLayout *layout) {
    memset(layout, 0, sizeof *layout);
    return walk(bytes, count, layout, 0, NULL, 0);
}

// Unfilters the rows in place: filtered row y (its filter byte, then rowBytes bytes) starts at
// y * (rowBytes + 1), output row y at y * rowBytes. Every byte is read before the output reaches it
// (the output runs y + 1 bytes behind), and the row above is final when a row is unfiltered.
static int unfilter(uint8_t *buffer, size_t rowBytes, uint32_t height, size_t bpp) {
    for (uint32_t y = 0; y < height; y++) {
        wi_yield_point();   /* a cold server thread lets a waiting thread run (CSystemTuning.h) */
        const uint8_t *in = buffer + (size_t)y * (rowBytes + 1);
        uint8_t filter = in[0];
        in += 1;
        uint8_t *out = buffer + (size_t)y * rowBytes;
        const uint8_t *up = y > 0 ? out - rowBytes : NULL;
        size_t i;
        switch (filter) {
        case 0:
            memmove(out, in, rowBytes);
            break;
        case 1:
            for (i = 0; i < bpp && i < rowBytes; i++) out[i] = in[i];
            for (; i < rowBytes; i++) out[i] = (uint8_t)(in[i] + out[i - bpp]);
            break;
        case 2:
            if (up) {
                for (i = 0; i < rowBytes; i++) out[i] = (uint8_t)(in[i] + up[i]);
            } else {
                memmove(out, in, rowBytes);
            }
            break;
        case 3:
            for (i = 0; i < bpp && i < rowBytes; i++) out[i] = (uint8_t)(in[i] + (up ? up[i] >> 1 : 0));
            for (; i < rowBytes; i++) out[i] = (uint8_t)(in[i] + (((unsigned)out[i - bpp] + (up ? up[i] : 0)) >> 1));
            break;
        case 4:
            if (up) {
                for (i = 0; i < bpp && i < rowBytes; i++) out[i] = (uint8_t)(in[i] + up[i]);
                for (; i < rowBytes; i++) out[i] = (uint8_t)(in[i] + cpng_paeth(out[i - bpp], up[i], up[i - bpp]));
            } else {
                // Above the first row is zero: Paeth picks the left neighbour, as Sub does.
                for (i = 0; i < bpp && i < rowBytes; i++) out[i] = in[i];
                for (; i < rowBytes; i++) out[i] = (uint8_t)(in[i] + out[i - bpp]);
            }
            break;
        default:
            return 0;
        }
    }
    return 1;
}

int cpng_fast_decode(const uint8_t *bytes, size_t count, const CPNGFastLayout *layout, uint8_t *output, size_t capacity) {
    if (capacity < layout->filteredBytes) return 0;
    CPNGFastLayout checked;
    memset(&checked, 0, sizeof checked);
    // A single IDAT is inflated where it is; several are gathered into one stream first.
    uint8_t *gathered = NULL;
    if (layout->idatChunks > 1 && (gathered = malloc(layout->compressedBytes)) == NULL) return 0;
    size_t gatherCapacity = gathered != NULL ? layout->compressedBytes : 0;
    if (!walk(bytes, count, &checked, 1, gathered, gatherCapacity) || checked.compressedBytes != layout->compressedBytes ||
        checked.filteredBytes != layout->filteredBytes || checked.idatChunks != layout->idatChunks ||
        checked.rowBytes != layout->rowBytes || checked.height != layout->height || checked.channels != layout->channels) {
        free(gathered);
        return 0;
    }
    const uint8_t *stream = gathered != NULL ? gathered : bytes + checked.firstIDATOffset;
    // zlib refuses distances beyond the window the header declares; libdeflate does not check: only
    // a 32 KiB window (CINFO 7, what encoders write for images of any size) is left to libdeflate.
    if (layout->compressedBytes < 2 || (stream[0] >> 4) != 7) {
        free(gathered);
        return 0;
    }
    struct libdeflate_decompressor *decompressor = libdeflate_alloc_decompressor();
    if (decompressor == NULL) {
        free(gathered);
        return 0;
    }
    size_t used = 0, produced = 0;
    enum libdeflate_result result = libdeflate_zlib_decompress_ex(decompressor, stream, layout->compressedBytes, output,
                                                                  layout->filteredBytes, &used, &produced);
    libdeflate_free_decompressor(decompressor);
    free(gathered);
    if (result != LIBDEFLATE_SUCCESS || used != layout->compressedBytes || produced != layout->filteredBytes) return 0;
    return unfilter(output, checked.rowBytes, checked.height, checked.channels);
}
