// The libpng layer behind CPNG.h. Every setjmp of the package's PNG code is in this file.
//
// Error handling: libpng calls on_*_error with its message when data is corrupt; the handler copies the
// message and longjmps back to the setjmp of the public function that called into libpng, which turns
// it into a return status. Only C frames lie between a setjmp and its longjmp. State that must survive
// a longjmp lives in heap structs reached through a pointer that is never reassigned after the setjmp,
// so no local variable needs `volatile`. Warnings never print (libpng's default would write to stderr).

#include "CPNG.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// MARK: - Decoding

enum Phase {
    PhaseReadingHeader,   // signature and chunks before the first IDAT
    PhaseAwaitingOutput,  // header read, paused until cpng_decoder_set_output
    PhaseReadingRows,     // IDAT data flows into the output buffer
    PhaseComplete,        // IEND read with every row written
    PhaseTooLarge,        // header refused by the pixel limit
    PhaseFailed,          // libpng reported corrupt data
};

struct CPNGDecoder {
    png_structp png;
    png_infop info;
    jmp_buf jump;
    enum Phase phase;
    uint64_t maxPixels;
    // cpng_decoder_keep_16: 16-bit samples kept (native-endian) rather than reduced to their high byte.
    int keeps16;
    CPNGHeader header;
    uint8_t *pixels;
    size_t bytesPerRow;
    uint64_t rowsDelivered;
    // Set by on_info when it pauses png_process_data; the bytes of the current buffer it left unread.
    int paused;
    size_t unconsumed;
    // A zlib failure libpng's progressive reader only warns about (see on_decode_warning).
    int zlibFailed;
    char message[256];
};

static void copy_message(char *target, size_t capacity, const char *message) {
    snprintf(target, capacity, "%s", message != NULL ? message : "unknown libpng error");
}

static void on_decode_error(png_structp png, png_const_charp message) {
    CPNGDecoder *decoder = (CPNGDecoder *)png_get_error_ptr(png);
    copy_message(decoder->message, sizeof decoder->message, message);
    longjmp(decoder->jump, 1);
}

// libpng's sequential reader fails on a damaged zlib stream (bad data, bad Adler-32 checksum), but its
// progressive reader only warns, stops inflating and may still reach IEND with rows missing or with the
// last row unchecked. Such a warning is recorded and reported as a failure, so that the outcome does
// not depend on how the bytes were split. Other warnings (damaged ancillary chunks, extra compressed
// data after the last row) keep their meaning: the image is still good.
static void on_decode_warning(png_structp png, png_const_charp message) {
    CPNGDecoder *decoder = (CPNGDecoder *)png_get_error_ptr(png);
    if (message == NULL || decoder->zlibFailed) return;
    if (strstr(message, "ADLER32 checksum mismatch") != NULL ||
        strstr(message, "Truncated compressed data in IDAT") != NULL) {
        decoder->zlibFailed = 1;
        // A benign error arrives as a chunk warning: "IDAT: " is prefixed to "IDAT: ADLER32 ...".
        if (strncmp(message, "IDAT: IDAT: ", 12) == 0) message += 6;
        copy_message(decoder->message, sizeof decoder->message, message);
    }
}

static void pause_feeding(CPNGDecoder *decoder) {
    decoder->unconsumed = png_process_data_pause(decoder->png, 0);
    decoder->paused = 1;
}

// Called at the first IDAT chunk: every header chunk is read.
static void on_info(png_structp png, png_infop info) {
    CPNGDecoder *decoder = (CPNGDecoder *)png_get_progressive_ptr(png);
    png_uint_32 width = 0, height = 0;
    int bitDepth = 0, colorType = 0, interlace = 0;
    png_get_IHDR(png, info, &width, &height, &bitDepth, &colorType, &interlace, NULL, NULL);
    decoder->header.width = width;
    decoder->header.height = height;
    decoder->header.interlaced = interlace != PNG_INTERLACE_NONE;

    // Refuse before libpng allocates its row buffers and before Swift allocates the pixels. A side
    // over a million pixels (libpng's own default limit) is refused whatever the pixel count: libpng's
    // two row buffers grow with the width alone (8 bytes a pixel at 16-bit RGBA), so a 68-byte file
    // declaring 100,000,000 x 1 would otherwise cost 800 MB.
    if ((uint64_t)width * (uint64_t)height > decoder->maxPixels || width > CPNG_MAX_SIDE || height > CPNG_MAX_SIDE) {
        decoder->phase = PhaseTooLarge;
        pause_feeding(decoder);
        return;
    }

    int keeps16 = bitDepth == 16 && decoder->keeps16;
    if (bitDepth == 16 && !keeps16) png_set_strip_16(png);  // the high byte, as the corpus reference does
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (keeps16) png_set_swap(png);             // PNG stores big-endian samples; the caller reads native ones
#endif
    if (colorType == PNG_COLOR_TYPE_PALETTE) {
        png_set_palette_to_rgb(png);            // also turns tRNS into alpha
    } else if (bitDepth < 8) {
        png_set_expand_gray_1_2_4_to_8(png);    // only gray has depths below 8
    }
    if (png_get_valid(png, info, PNG_INFO_tRNS) != 0) png_set_tRNS_to_alpha(png);
    if (interlace != PNG_INTERLACE_NONE) png_set_interlace_handling(png);
    png_read_update_info(png, info);

    png_byte channels = png_get_channels(png, info);
    size_t rowBytes = png_get_rowbytes(png, info);
    size_t sampleBytes = keeps16 ? 2 : 1;
    if (png_get_bit_depth(png, info) != (keeps16 ? 16 : 8) || channels < 1 || channels > 4 ||
        rowBytes != (size_t)width * channels * sampleBytes) {
        png_error(png, "unexpected output layout after transformations");
    }
    decoder->header.channels = channels;
    decoder->header.bitDepth = keeps16 ? 16 : 8;
    decoder->header.rowBytes = rowBytes;
    decoder->phase = PhaseAwaitingOutput;
    pause_feeding(decoder);
}

static void on_row(png_structp png, png_bytep row, png_uint_32 rowNumber, int pass) {
    (void)pass;
    CPNGDecoder *decoder = (CPNGDecoder *)png_get_progressive_ptr(png);
    // libpng also calls with NULL for rows an interlace pass does not touch.
    if (row == NULL || rowNumber >= decoder->header.height) return;
    uint8_t *target = decoder->pixels + (size_t)rowNumber * decoder->bytesPerRow;
    if (decoder->header.interlaced) {
        // Merges this pass's pixels into the row, replicating them across the columns later passes
        // fill ("blocky" display); the final pass leaves exactly the image.
        png_progressive_combine_row(png, target, row);
    } else {
        memcpy(target, row, decoder->header.rowBytes);
    }
    decoder->rowsDelivered += 1;
}

static void on_end(png_structp png, png_infop info) {
    (void)info;
    CPNGDecoder *decoder = (CPNGDecoder *)png_get_progressive_ptr(png);
    if (decoder->zlibFailed) longjmp(decoder->jump, 1);  // the message is already recorded
    // After the last row of the last pass libpng moves to pass 7.
    int complete = decoder->header.interlaced
        ? png_get_current_pass_number(png) >= 7
        : decoder->rowsDelivered >= decoder->header.height;
    if (!complete) png_error(png, "Not enough image data");
    decoder->phase = PhaseComplete;
}

void cpng_decoder_keep_16(CPNGDecoder *decoder) {
    decoder->keeps16 = 1;
}

CPNGDecoder *cpng_decoder_create(uint64_t maxPixels) {
    CPNGDecoder *decoder = (CPNGDecoder *)calloc(1, sizeof(CPNGDecoder));
    if (decoder == NULL) return NULL;
    decoder->maxPixels = maxPixels;
    decoder->phase = PhaseReadingHeader;
    if (setjmp(decoder->jump) != 0) {
        cpng_decoder_destroy(decoder);
        return NULL;
    }
    decoder->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, decoder, on_decode_error, on_decode_warning);
    if (decoder->png == NULL) {
        cpng_decoder_destroy(decoder);
        return NULL;
    }
    decoder->info = png_create_info_struct(decoder->png);
    if (decoder->info == NULL) {
        cpng_decoder_destroy(decoder);
        return NULL;
    }
    png_set_progressive_read_fn(decoder->png, decoder, on_info, on_row, on_end);
    // Skip every ancillary chunk except tRNS (libpng's own list for a negative count): no text, ICC or
    // EXIF decompression, so text-chunk decompression bombs cost nothing. Unknown chunks are skipped too.
    png_set_keep_unknown_chunks(decoder->png, PNG_HANDLE_CHUNK_NEVER, NULL, -1);
    // libpng's default limit is 1,000,000 per side. The pixel-count limit checked in on_info is the one
    // that protects memory, and it reports the size; lift the per-side limit to the format's maximum.
    // The chunk-size limits (chunk_malloc_max, chunk_cache_max) keep libpng's defaults.
    png_set_user_limits(decoder->png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
    return decoder;
}

void cpng_decoder_destroy(CPNGDecoder *decoder) {
    if (decoder == NULL) return;
    if (decoder->png != NULL) {
        png_destroy_read_struct(&decoder->png, decoder->info != NULL ? &decoder->info : NULL, NULL);
    }
    free(decoder);
}

CPNGStatus cpng_decoder_feed(CPNGDecoder *decoder, const uint8_t *bytes, size_t count, size_t *consumed) {
    *consumed = 0;
    switch (decoder->phase) {
    case PhaseComplete:
        *consumed = count;
        return CPNGStatusComplete;
    case PhaseTooLarge:
        return CPNGStatusTooLarge;
    case PhaseFailed:
        return CPNGStatusFailed;
    case PhaseAwaitingOutput:
        copy_message(decoder->message, sizeof decoder->message, "internal error: no output buffer was set");
        decoder->phase = PhaseFailed;
        return CPNGStatusFailed;
    case PhaseReadingHeader:
    case PhaseReadingRows:
        break;
    }
    if (count == 0 || bytes == NULL) return CPNGStatusNeedMore;

    decoder->paused = 0;
    decoder->unconsumed = 0;
    if (setjmp(decoder->jump) != 0) {
        decoder->phase = PhaseFailed;
        return CPNGStatusFailed;
    }
    // libpng does not write to the buffer; its prototype just predates const.
    png_process_data(decoder->png, decoder->info, (png_bytep)(uintptr_t)bytes, count);

    *consumed = decoder->paused ? count - decoder->unconsumed : count;
    if (decoder->zlibFailed && decoder->phase != PhaseTooLarge) {
        decoder->phase = PhaseFailed;
        return CPNGStatusFailed;
    }
    switch (decoder->phase) {
    case PhaseAwaitingOutput: return CPNGStatusHeaderReady;
    case PhaseComplete: return CPNGStatusComplete;
    case PhaseTooLarge: return CPNGStatusTooLarge;
    case PhaseFailed: return CPNGStatusFailed;
    case PhaseReadingHeader:
    case PhaseReadingRows:
        break;
    }
    return CPNGStatusNeedMore;
}

CPNGHeader cpng_decoder_header(const CPNGDecoder *decoder) {
    return decoder->header;
}

void cpng_decoder_set_output(CPNGDecoder *decoder, uint8_t *pixels, size_t bytesPerRow) {
    if (decoder->phase != PhaseAwaitingOutput) return;
    decoder->pixels = pixels;
    decoder->bytesPerRow = bytesPerRow;
    decoder->phase = PhaseReadingRows;
}

uint64_t cpng_decoder_rows_delivered(const CPNGDecoder *decoder) {
    return decoder->rowsDelivered;
}

const char *cpng_decoder_message(const CPNGDecoder *decoder) {
    return decoder->phase == PhaseFailed ? decoder->message : "";
}
