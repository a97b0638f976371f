// The colour quantizer behind gif_quantize.h: a palette per frame by a variance-based median cut refined by
// k-means, and the mapping of pixels to it (nearest colour per histogram cell, or Floyd–Steinberg).

#include "gif_quantize.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

// The same palette on every architecture: no fused multiply-adds in the quantizer's arithmetic.
#pragma STDC FP_CONTRACT OFF

enum { HIST_SIZE = 1 << 18, MAX_COLORS = CGIF_MAX_COLORS };   // the histogram has 6 bits per channel

/// A histogram cell, with the sums of the full 8-bit values for exact centroids.
typedef struct cgif_q_bin { uint64_t count, sum[3]; } Bin;

/// A non-empty cell as a weighted point, for the median cut and k-means.
typedef struct cgif_q_entry {
    double weight, color[3];
    uint8_t position[3];   // the cell's coordinates, 0–63 per channel
    uint8_t cluster;       // the palette colour it belongs to
} Entry;

/// The weighted totals of a set of points: enough for its centroid and its squared error.
typedef struct Stats { double weight, sum[3], squares; } Stats;

/// A median-cut box: entries begin ..< end, their totals, and the cut `measure` found best.
typedef struct Box {
    size_t begin, end;
    Stats stats;
    double error;
    int axis, plane;   // entries with position[axis] <= plane go left; plane < 0: cannot be split
} Box;

// MARK: - Work space

int cgif_q_start(CGIFQuantizer *q, uint32_t width) {
    q->errors = malloc(((size_t)width + 2) * 6 * sizeof(int32_t));
    return q->errors != NULL;
}

void cgif_q_free(CGIFQuantizer *q) {
    free(q->histogram);
    free(q->entries);
    free(q->cache);
    free(q->errors);
}

// MARK: - Quantizing

static inline uint32_t cell_of(int r, int g, int b) {
    return (uint32_t)(r >> 2) << 12 | (uint32_t)(g >> 2) << 6 | (uint32_t)(b >> 2);
}

static void add_stats(Stats *into, const Stats *more, double sign) {
    into->weight += sign * more->weight;
    into->squares += sign * more->squares;
    for (int c = 0; c < 3; c++) into->sum[c] += sign * more->sum[c];
}

/// The squared error of a set of points about their centroid.
static double spread(const Stats *s) {
    if (s->weight <= 0) return 0;
    return s->squares - (s->sum[0] * s->sum[0] + s->sum[1] * s->sum[1] + s->sum[2] * s->sum[2]) / s->weight;
}

/// Totals a box and finds its best cut: the plane, along any axis, that leaves the least squared error
/// in the two halves together.
static void measure(const Entry *entries, Box *box) {
    Stats planes[3][64];
    memset(planes, 0, sizeof planes);
    for (size_t i = box->begin; i < box->end; i++) {
        const Entry *n = &entries[i];
        Stats point = {n->weight, {n->weight * n->color[0], n->weight * n->color[1], n->weight * n->color[2]},
                       n->weight * (n->color[0] * n->color[0] + n->color[1] * n->color[1] + n->color[2] * n->color[2])};
        for (int axis = 0; axis < 3; axis++) add_stats(&planes[axis][n->position[axis]], &point, 1);
    }
    memset(&box->stats, 0, sizeof box->stats);
    for (int plane = 0; plane < 64; plane++) add_stats(&box->stats, &planes[0][plane], 1);
    box->error = spread(&box->stats);
    box->plane = -1;
    double best = 0;
    for (int axis = 0; axis < 3; axis++) {
        Stats left = {0}, right = box->stats;
        for (int plane = 0; plane < 63; plane++) {
            add_stats(&left, &planes[axis][plane], 1);
            add_stats(&right, &planes[axis][plane], -1);
            if (left.weight <= 0 || left.weight >= box->stats.weight) continue;   // whole counts: exact
            double cost = spread(&left) + spread(&right);
            if (box->plane < 0 || cost < best) {
                best = cost;
                box->axis = axis;
                box->plane = plane;
            }
        }
    }
}

/// Median cut: splits the box with the largest squared error at its best cut until there are `target`
/// boxes (or none can be split); their centroids go to `centers`. Returns the number of boxes.
static int median_cut(Entry *entries, size_t count, int target, double centers[MAX_COLORS][3]) {
    Box boxes[MAX_COLORS];
    boxes[0] = (Box){.begin = 0, .end = count};
    measure(entries, &boxes[0]);
    int made = 1;
    while (made < target) {
        Box *pick = NULL;
        for (int i = 0; i < made; i++) {
            if (boxes[i].plane >= 0 && (!pick || boxes[i].error > pick->error)) pick = &boxes[i];
        }
        if (!pick) break;
        size_t left = pick->begin, right = pick->end;   // partition: the cut's left side first
        while (left < right) {
            if (entries[left].position[pick->axis] <= pick->plane) {
                left++;
            } else {
                Entry swap = entries[left];
                entries[left] = entries[--right];
                entries[right] = swap;
            }
        }
        boxes[made] = (Box){.begin = left, .end = pick->end};
        pick->end = left;
        measure(entries, pick);
        measure(entries, &boxes[made++]);
    }
    for (int i = 0; i < made; i++) {
        for (int c = 0; c < 3; c++) centers[i][c] = boxes[i].stats.sum[c] / boxes[i].stats.weight;
        for (size_t n = boxes[i].begin; n < boxes[i].end; n++) entries[n].cluster = (uint8_t)i;
    }
    return made;
}

/// The squared distance between two colours, or some value >= `bound` as soon as it must be at least that.
static inline double distance_below(const double a[3], const double b[3], double bound) {
    double d = 0;
    for (int c = 0; c < 3 && d < bound; c++) d += (a[c] - b[c]) * (a[c] - b[c]);
    return d;
}

/// Lloyd's k-means over the cells: each goes to its nearest centre, then each centre to its cells' centroid.
static void refine(Entry *entries, size_t count, double centers[MAX_COLORS][3], int k, int passes) {
    for (int pass = 0; pass < passes; pass++) {
        Stats totals[MAX_COLORS];
        memset(totals, 0, sizeof totals);
        for (size_t i = 0; i < count; i++) {
            Entry *n = &entries[i];
            int best = n->cluster;
            double best_distance = distance_below(n->color, centers[best], DBL_MAX);
            for (int j = 0; j < k; j++) {
                double d = distance_below(n->color, centers[j], best_distance);
                if (d < best_distance) {
                    best_distance = d;
                    best = j;
                }
            }
            n->cluster = (uint8_t)best;
            totals[best].weight += n->weight;
            for (int c = 0; c < 3; c++) totals[best].sum[c] += n->weight * n->color[c];
        }
        for (int j = 0; j < k; j++) {
            for (int c = 0; c < 3 && totals[j].weight > 0; c++) centers[j][c] = totals[j].sum[c] / totals[j].weight;
        }
    }
}

/// Builds a quantized palette: 255 colours when the frame has transparent pixels or `reserve` asks for a
/// spare slot, else 256. Returns 0 when the work space cannot be allocated.
int cgif_q_quantize(CGIFQuantizer *q, const CGIFEncodeFrame *frame, uint32_t width, uint32_t height, int reserve,
                    CGIFPalette *palette) {
    if (!q->histogram) q->histogram = calloc(HIST_SIZE, sizeof(Bin));
    if (!q->entries) q->entries = malloc(HIST_SIZE * sizeof(Entry));
    if (!q->cache) q->cache = malloc(HIST_SIZE * sizeof(uint16_t));
    if (!q->histogram || !q->entries || !q->cache) return 0;
    int transparent = 0;
    for (uint32_t y = 0; y < height; y++) {
        const uint8_t *pixel = frame->rgba + (size_t)y * frame->bytes_per_row;
        for (uint32_t x = 0; x < width; x++, pixel += 4) {
            if (pixel[3] < 128) {
                transparent = 1;
                continue;
            }
            Bin *bin = &q->histogram[cell_of(pixel[0], pixel[1], pixel[2])];
            bin->count++;
            for (int c = 0; c < 3; c++) bin->sum[c] += pixel[c];
        }
    }
    size_t count = 0;   // gather the non-empty cells, leaving the histogram zeroed for the next frame
    for (uint32_t cell = 0; cell < HIST_SIZE; cell++) {
        Bin *bin = &q->histogram[cell];
        if (!bin->count) continue;
        Entry *n = &q->entries[count++];
        n->weight = (double)bin->count;
        for (int c = 0; c < 3; c++) n->color[c] = (double)bin->sum[c] / (double)bin->count;
        n->position[0] = (uint8_t)(cell >> 12);
        n->position[1] = (uint8_t)(cell >> 6 & 63);
        n->position[2] = (uint8_t)(cell & 63);
        *bin = (Bin){0};
    }
    double centers[MAX_COLORS][3];
    int k = median_cut(q->entries, count, transparent || reserve ? MAX_COLORS - 1 : MAX_COLORS, centers);
    refine(q->entries, count, centers, k, 2);
    for (int i = 0; i < k; i++) {
        uint8_t rgb[3];
        for (int c = 0; c < 3; c++) rgb[c] = (uint8_t)(centers[i][c] <= 0 ? 0 : centers[i][c] >= 255 ? 255 : centers[i][c] + 0.5);
        palette->colors[i] = (GifColorType){rgb[0], rgb[1], rgb[2]};
        int at = i;   // insertion sort by green (stable: deterministic)
        for (; at > 0 && palette->colors[q->by_green[at - 1]].Green > rgb[1]; at--) q->by_green[at] = q->by_green[at - 1];
        q->by_green[at] = (uint8_t)i;
    }
    palette->opaque = k;
    palette->transparent = transparent ? k : -1;
    memset(q->cache, 0, HIST_SIZE * sizeof(uint16_t));
    return 1;
}

/// The opaque palette colour nearest the centre of a colour's histogram cell (the lowest index among equals),
/// remembered per cell. The search walks both ways from the centre's green through the palette sorted by
/// green, each way until green alone is farther than the best colour found.
static int nearest(CGIFQuantizer *q, const CGIFPalette *palette, int r, int g, int b) {
    uint32_t cell = cell_of(r, g, b);
    if (q->cache[cell]) return q->cache[cell] - 1;
    int cr = (r >> 2) * 8 + 3, cg = (g >> 2) * 8 + 3, cb = (b >> 2) * 8 + 3;   // the centre, doubled
    int low = 0, high = palette->opaque;
    while (low < high) {   // the first sorted position whose green is at least the centre's
        int middle = (low + high) / 2;
        if (2 * palette->colors[q->by_green[middle]].Green < cg) low = middle + 1;
        else high = middle;
    }
    int best = 0, best_distance = INT32_MAX;
    for (int step = 1; step >= -1; step -= 2) {
        for (int at = step > 0 ? low : low - 1; at >= 0 && at < palette->opaque; at += step) {
            int i = q->by_green[at];
            const GifColorType *color = &palette->colors[i];
            int dg = 2 * color->Green - cg, dr = 2 * color->Red - cr, db = 2 * color->Blue - cb;
            if (dg * dg > best_distance) break;
            int d = dr * dr + dg * dg + db * db;
            if (d < best_distance || (d == best_distance && i < best)) {
                best_distance = d;
                best = i;
            }
        }
    }
    q->cache[cell] = (uint16_t)(best + 1);
    return best;
}

// MARK: - Mapping

/// Maps row `y` to the nearest palette colours, or with `dither` through Floyd–Steinberg (whose error rows
/// carry from row to row: the rows must come in order from 0).
void cgif_q_map_row(CGIFQuantizer *q, const CGIFPalette *palette, int dither, const uint8_t *source, uint32_t width,
                    uint32_t y, GifPixelType *out) {
    if (!dither) {
        for (uint32_t x = 0; x < width; x++, source += 4) {
            out[x] = (GifPixelType)(source[3] < 128 ? palette->transparent : nearest(q, palette, source[0], source[1], source[2]));
        }
        return;
    }
    // Floyd–Steinberg, serpentine; entry x + 1 of an error row is pixel x, so the edges need no tests.
    size_t stride = ((size_t)width + 2) * 3;
    int32_t *current = q->errors + (y & 1) * stride, *next = q->errors + ((y & 1) ^ 1) * stride;
    if (y == 0) memset(current, 0, stride * sizeof *current);
    memset(next, 0, stride * sizeof *next);
    int step = (y & 1) ? -1 : 1;
    for (uint32_t i = 0; i < width; i++) {
        uint32_t x = step > 0 ? i : width - 1 - i;
        const uint8_t *pixel = source + (size_t)x * 4;
        if (pixel[3] < 128) {   // transparent: nothing to correct, and the error reaching it is dropped
            out[x] = (GifPixelType)palette->transparent;
            continue;
        }
        int32_t *here = current + ((size_t)x + 1) * 3, *below = next + ((size_t)x + 1) * 3;
        int v[3];
        for (int c = 0; c < 3; c++) {
            int wanted = pixel[c] + (here[c] >= 0 ? here[c] + 8 : here[c] - 8) / 16;
            v[c] = wanted < 0 ? 0 : wanted > 255 ? 255 : wanted;
        }
        int index = nearest(q, palette, v[0], v[1], v[2]);
        out[x] = (GifPixelType)index;
        const GifColorType *chosen = &palette->colors[index];
        int error[3] = {v[0] - chosen->Red, v[1] - chosen->Green, v[2] - chosen->Blue};
        for (int c = 0; c < 3; c++) {
            here[step * 3 + c] += 7 * error[c];
            below[-step * 3 + c] += 3 * error[c];
            below[c] += 5 * error[c];
            below[step * 3 + c] += error[c];
        }
    }
}
