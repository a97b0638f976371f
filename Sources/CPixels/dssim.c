#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <float.h>
#include "dssim.h"
#include "CSystemTuning.h"
#include "fast_cbrt.h"
#include "perceptual_common.h"

/* The algorithm is dssim's (kornelski/dssim, 3.x) as its README and documentation describe it; the
   code is written here. Planes are float; sums are double. See dssim.h. */

enum { WI_DSSIM_MAX_SCALES = 5, WI_DSSIM_CHANNELS = 3 };

static const double wi_dssim_weights[WI_DSSIM_MAX_SCALES] = { 0.028, 0.197, 0.322, 0.298, 0.155 };

/* A scale's planes are L, a, b. */
typedef wi_metric_scale wi_dssim_scale;

struct wi_dssim_image {
    size_t width, height;
    int scale_count;
    wi_dssim_scale scales[WI_DSSIM_MAX_SCALES];
    /* Work buffers, kept by a candidate (freed once an original is prepared): linear premultiplied
       RGBA at full size (halved in place scale by scale), and four planes (a scratch plane for the
       blur, the blurred products, the covariance and the SSIM map). */
    float *linear, *scratch, *product, *covariance, *map;
    /* An original's spare candidate (see `wi_spare_take`). */
    void *_Atomic spare;
};

/* One 3-tap pass along rows, each edge pixel repeated (clamp to edge). */
WI_INLINE void wi_dssim_pass_rows(const float *in, float *out, size_t width, size_t height) {
    const float side = 0.30875886f, middle = 0.3824828f;
    for (size_t y = 0; y < height; y++) {
        const float *row = in + y * width;
        float *dst = out + y * width;
        if (width == 1) { dst[0] = row[0]; continue; }
        dst[0] = side * row[0] + middle * row[0] + side * row[1];
        for (size_t x = 1; x + 1 < width; x++) dst[x] = side * row[x - 1] + middle * row[x] + side * row[x + 1];
        dst[width - 1] = side * row[width - 2] + middle * row[width - 1] + side * row[width - 1];
    }
}

/* One 3-tap pass along columns, each edge row repeated. */
WI_INLINE void wi_dssim_pass_columns(const float *in, float *out, size_t width, size_t height) {
    const float side = 0.30875886f, middle = 0.3824828f;
    for (size_t y = 0; y < height; y++) {
        const float *above = in + (y > 0 ? y - 1 : 0) * width;
        const float *row = in + y * width;
        const float *below = in + (y + 1 < height ? y + 1 : y) * width;
        float *dst = out + y * width;
        for (size_t x = 0; x < width; x++) dst[x] = side * above[x] + middle * row[x] + side * below[x];
    }
    wi_yield_point();
}

/* dssim's blur: the 3×3 kernel (the outer product of the 3 taps) applied twice, edges clamped; in
   place on `plane`, with `scratch` of the same size. */
WI_INLINE void wi_dssim_blur_body(float *plane, float *scratch, size_t width, size_t height) {
    wi_dssim_pass_rows(plane, scratch, width, height);
    wi_dssim_pass_columns(scratch, plane, width, height);
    wi_dssim_pass_rows(plane, scratch, width, height);
    wi_dssim_pass_columns(scratch, plane, width, height);
}

WI_WITH_AVX2(wi_dssim_blur, wi_dssim_blur_body, (float *plane, float *scratch, size_t width, size_t height),
             (plane, scratch, width, height))

static inline float wi_dssim_lab_f(float t) {
    return t > 216.0f / 24389.0f ? wi_fast_cbrtf(t) - 16.0f / 116.0f : (24389.0f / (27.0f * 116.0f)) * t;
}

/* Linear premultiplied RGBA (4 floats a pixel) of one scale into its L, a, b planes. */
static void wi_dssim_to_lab(const float *rgba, size_t width, size_t height, float *l, float *a, float *b) {
    for (size_t y = 0; y < height; y++) {
        for (size_t x = 0; x < width; x++) {
            const float *p = rgba + (y * width + x) * 4;
            float alpha = p[3], r = p[0], g = p[1], bl = p[2];
            /* Composited over blocks of colour (each channel 0 or 1, about 8 pixels wide), so a change of alpha shows. */
            unsigned n = (unsigned)((x + 11) ^ (y + 11));
            float rest = 1.0f - alpha;
            if (n & 16) r += rest;
            if (n & 8) g += rest;
            if (n & 32) bl += rest;
            float fx = (0.4124f * r + 0.3576f * g + 0.1805f * bl) / 0.9505f;
            float fy = 0.2126f * r + 0.7152f * g + 0.0722f * bl;
            float fz = (0.0193f * r + 0.1192f * g + 0.9505f * bl) / 1.089f;
            float X = wi_dssim_lab_f(fx), Y = wi_dssim_lab_f(fy), Z = wi_dssim_lab_f(fz);
            size_t i = y * width + x;
            l[i] = 1.05f * Y;
            a[i] = (500.0f / 220.0f) * (X - Y) + 86.2f / 220.0f;
            b[i] = (200.0f / 220.0f) * (Y - Z) + 107.9f / 220.0f;
        }
        wi_yield_point();
    }
}

/* Frees a picture's work buffers (an original's, once prepared, or all of a picture's when it is freed). */
static void wi_dssim_free_work(wi_dssim_image *image) {
    free(image->linear);
    free(image->scratch);
    free(image->product);
    free(image->covariance);
    free(image->map);
    image->linear = image->scratch = image->product = image->covariance = image->map = NULL;
}

void wi_dssim_free(wi_dssim_image *image) {
    if (!image) return;
    wi_dssim_free(wi_spare_take(&image->spare));
    for (int s = 0; s < image->scale_count; s++) wi_metric_scale_free(&image->scales[s]);
    wi_dssim_free_work(image);
    free(image);
}

/* A picture of `width`×`height` with its planes and work buffers allocated, not filled; NULL for a
   zero size or when memory runs out. Five scales at most, each half the last (rounding down), the
   last one the first under 8 pixels on a side. */
static wi_dssim_image *wi_dssim_allocate(size_t width, size_t height) {
    if (width == 0 || height == 0 || width > (SIZE_MAX / 16) / height) return NULL;
    wi_dssim_image *image = calloc(1, sizeof(wi_dssim_image));
    if (!image) return NULL;
    image->width = width;
    image->height = height;
    const size_t count = width * height;
    image->linear = malloc(count * 4 * sizeof(float));
    image->scratch = malloc(count * sizeof(float));
    image->product = malloc(count * sizeof(float));
    image->covariance = malloc(count * sizeof(float));
    image->map = malloc(count * sizeof(float));
    int ok = image->linear && image->scratch && image->product && image->covariance && image->map;
    size_t w = width, h = height;
    for (int s = 0; s < WI_DSSIM_MAX_SCALES && ok; s++) {
        image->scale_count = s + 1;
        ok = wi_metric_scale_allocate(&image->scales[s], w, h);
        if (w < 8 || h < 8) break;
        w /= 2;
        h /= 2;
    }
    if (!ok) {
        wi_dssim_free(image);
        return NULL;
    }
    return image;
}

/* Fills one scale from its linear RGBA. */
static void wi_dssim_fill_scale(wi_dssim_scale *scale, const float *rgba, float *scratch) {
    size_t count = scale->width * scale->height;
    wi_dssim_to_lab(rgba, scale->width, scale->height, scale->plane[0], scale->plane[1], scale->plane[2]);
    /* The chroma planes are compared with less spatial precision: blurred first. */
    wi_dssim_blur(scale->plane[1], scratch, scale->width, scale->height);
    wi_dssim_blur(scale->plane[2], scratch, scale->width, scale->height);
    for (int c = 0; c < WI_DSSIM_CHANNELS; c++) {
        const float *x = scale->plane[c];
        float *mu = scale->mu[c], *sq = scale->sq[c];
        memcpy(mu, x, count * sizeof(float));
        for (size_t i = 0; i < count; i++) sq[i] = x[i] * x[i];
        wi_dssim_blur(mu, scratch, scale->width, scale->height);
        wi_dssim_blur(sq, scratch, scale->width, scale->height);
    }
}

/* Fills an allocated picture from straight-alpha RGBA pixels with the buffers it holds. */
static void wi_dssim_fill(wi_dssim_image *image, const uint8_t *rgba, size_t stride) {
    wi_linear_pixels(rgba, image->width, image->height, stride, 4, 1, image->linear);   /* premultiplied by alpha */
    size_t w = image->width, h = image->height;
    for (int s = 0; s < image->scale_count; s++) {
        wi_dssim_fill_scale(&image->scales[s], image->linear, image->scratch);
        /* The next scale: 2×2 box averages of the linear premultiplied RGBA, an odd last row or column dropped. */
        if (s + 1 < image->scale_count) wi_halve_in_place(image->linear, &w, &h, 4, 0);
    }
}

wi_dssim_image *wi_dssim_prepare(const uint8_t *rgba, size_t width, size_t height, size_t stride) {
    if (!rgba) return NULL;
    wi_dssim_image *image = wi_dssim_allocate(width, height);
    if (!image) return NULL;
    wi_dssim_fill(image, rgba, stride);
    wi_dssim_free_work(image);   /* an original needs them no more; its first candidate allocates its own */
    return image;
}

/* The SSIM map of one scale, into `map`, from the blurred means and squares of the two pictures and
   the covariance their channels sum to. */
WI_INLINE void wi_dssim_map_body(const wi_dssim_scale *one, const wi_dssim_scale *two, const float *covariance, float *map) {
    const size_t count = one->width * one->height;
    const float c1 = 0.01f * 0.01f, c2 = 0.03f * 0.03f, third = 1.0f / 3.0f;
    const float *mu1[3] = { one->mu[0], one->mu[1], one->mu[2] }, *mu2[3] = { two->mu[0], two->mu[1], two->mu[2] };
    const float *sq1[3] = { one->sq[0], one->sq[1], one->sq[2] }, *sq2[3] = { two->sq[0], two->sq[1], two->sq[2] };
    for (size_t i = 0; i < count; i++) {
        float mu1_sq = 0, mu2_sq = 0, mu12 = 0, var1 = 0, var2 = 0;
        for (int c = 0; c < WI_DSSIM_CHANNELS; c++) {
            float m1 = mu1[c][i], m2 = mu2[c][i];
            mu1_sq += m1 * m1;
            mu2_sq += m2 * m2;
            mu12 += m1 * m2;
            var1 += sq1[c][i] - m1 * m1;
            var2 += sq2[c][i] - m2 * m2;
        }
        mu1_sq *= third; mu2_sq *= third; mu12 *= third; var1 *= third; var2 *= third;
        float sigma12 = covariance[i] * third;
        map[i] = (2.0f * mu12 + c1) * (2.0f * sigma12 + c2) / ((mu1_sq + mu2_sq + c1) * (var1 + var2 + c2));
    }
}

WI_WITH_AVX2(wi_dssim_map, wi_dssim_map_body,
             (const wi_dssim_scale *one, const wi_dssim_scale *two, const float *covariance, float *map),
             (one, two, covariance, map))

/* SSIM of one scale of a filled candidate (its work buffers used) against the original's: 1 − the
   mean absolute deviation of its map around the map's mean (that mean raised to 0.5^scale first). */
static double wi_dssim_compare_scale(const wi_dssim_scale *one, const wi_dssim_scale *two, int index, wi_dssim_image *candidate) {
    const size_t width = one->width, height = one->height, count = width * height;
    float *product = candidate->product, *covariance = candidate->covariance, *map = candidate->map;
    memset(covariance, 0, count * sizeof(float));
    for (int c = 0; c < WI_DSSIM_CHANNELS; c++) {
        const float *x1 = one->plane[c], *x2 = two->plane[c], *mu1 = one->mu[c], *mu2 = two->mu[c];
        for (size_t i = 0; i < count; i++) product[i] = x1[i] * x2[i];
        wi_dssim_blur(product, candidate->scratch, width, height);
        for (size_t i = 0; i < count; i++) covariance[i] += product[i] - mu1[i] * mu2[i];
    }
    wi_dssim_map(one, two, covariance, map);
    double sum = 0.0;
    for (size_t y = 0; y < height; y++) {
        double row_sum = 0.0;
        for (size_t x = 0; x < width; x++) row_sum += map[y * width + x];
        sum += row_sum;
    }
    double mean = sum / (double)count;
    double average = pow(mean > 0.0 ? mean : 0.0, pow(0.5, index));
    double deviation = 0.0;
    for (size_t i = 0; i < count; i++) deviation += fabs(average - (double)map[i]);
    return 1.0 - deviation / (double)count;
}

double wi_dssim_compare_pixels(wi_dssim_image *original, const uint8_t *rgba, size_t width, size_t height, size_t stride) {
    if (!original || !rgba || width != original->width || height != original->height) return -1.0;
    wi_dssim_image *candidate = wi_spare_take(&original->spare);
    if (!candidate) candidate = wi_dssim_allocate(width, height);
    if (!candidate) return -1.0;
    wi_dssim_fill(candidate, rgba, stride);
    double weighted = 0.0, weights = 0.0;
    for (int s = 0; s < original->scale_count; s++) {
        weighted += wi_dssim_weights[s] * wi_dssim_compare_scale(&original->scales[s], &candidate->scales[s], s, candidate);
        weights += wi_dssim_weights[s];
    }
    if (!wi_spare_return(&original->spare, candidate)) wi_dssim_free(candidate);
    double ssim = weights > 0.0 ? weighted / weights : 0.0;
    return 1.0 / (ssim > DBL_EPSILON ? ssim : DBL_EPSILON) - 1.0;
}
