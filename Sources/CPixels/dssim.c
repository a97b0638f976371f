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

/* One scale of a prepared picture: per channel (L, a, b) the plane, its blurred mean and the blur of its square. */
typedef struct {
    size_t width, height;
    float *plane[WI_DSSIM_CHANNELS];
    float *mu[WI_DSSIM_CHANNELS];
    float *sq[WI_DSSIM_CHANNELS];
} wi_dssim_scale;

struct wi_dssim_image {
    size_t width, height;
    int scale_count;
    wi_dssim_scale scales[WI_DSSIM_MAX_SCALES];
};

/* One 3-tap pass along rows, each edge pixel repeated (clamp to edge). */
static void wi_dssim_pass_rows(const float *in, float *out, size_t width, size_t height) {
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
static void wi_dssim_pass_columns(const float *in, float *out, size_t width, size_t height) {
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
static void wi_dssim_blur(float *plane, float *scratch, size_t width, size_t height) {
    wi_dssim_pass_rows(plane, scratch, width, height);
    wi_dssim_pass_columns(scratch, plane, width, height);
    wi_dssim_pass_rows(plane, scratch, width, height);
    wi_dssim_pass_columns(scratch, plane, width, height);
}

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

void wi_dssim_free(wi_dssim_image *image) {
    if (!image) return;
    for (int s = 0; s < image->scale_count; s++) {
        for (int c = 0; c < WI_DSSIM_CHANNELS; c++) {
            free(image->scales[s].plane[c]);
            free(image->scales[s].mu[c]);
            free(image->scales[s].sq[c]);
        }
    }
    free(image);
}

/* Fills one scale from its linear RGBA; 0 when memory ran out. */
static int wi_dssim_fill_scale(wi_dssim_scale *scale, const float *rgba, float *scratch) {
    size_t count = scale->width * scale->height;
    for (int c = 0; c < WI_DSSIM_CHANNELS; c++) {
        scale->plane[c] = malloc(count * sizeof(float));
        scale->mu[c] = malloc(count * sizeof(float));
        scale->sq[c] = malloc(count * sizeof(float));
        if (!scale->plane[c] || !scale->mu[c] || !scale->sq[c]) return 0;
    }
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
    return 1;
}

wi_dssim_image *wi_dssim_prepare(const uint8_t *rgba, size_t width, size_t height, size_t stride) {
    if (!rgba || width == 0 || height == 0 || width > (SIZE_MAX / 16) / height) return NULL;
    wi_dssim_image *image = calloc(1, sizeof(wi_dssim_image));
    float *linear = wi_linear_pixels(rgba, width, height, stride, 4, 1);   /* premultiplied by alpha */
    float *scratch = malloc(width * height * sizeof(float));
    if (!image || !linear || !scratch) {
        free(image); free(linear); free(scratch);
        return NULL;
    }
    image->width = width;
    image->height = height;
    size_t w = width, h = height;
    int ok = 1;
    for (int s = 0; s < WI_DSSIM_MAX_SCALES && ok; s++) {
        wi_dssim_scale *scale = &image->scales[s];
        scale->width = w;
        scale->height = h;
        image->scale_count = s + 1;
        ok = wi_dssim_fill_scale(scale, linear, scratch);
        if (!ok || w < 8 || h < 8) break;
        /* The next scale: 2×2 box averages of the linear premultiplied RGBA, an odd last row or column dropped. */
        wi_halve_in_place(linear, &w, &h, 4, 0);
    }
    free(linear);
    free(scratch);
    if (!ok) {
        wi_dssim_free(image);
        return NULL;
    }
    return image;
}

/* SSIM of one scale, pooled into `*score`: 1 − the mean absolute deviation of its map around the
   map's mean (that mean raised to 0.5^scale first). 0 when memory runs out. */
static int wi_dssim_compare_scale(const wi_dssim_scale *one, const wi_dssim_scale *two, int index, double *score) {
    size_t width = one->width, height = one->height, count = width * height;
    float *product = malloc(count * sizeof(float));
    float *scratch = malloc(count * sizeof(float));
    float *covariance = calloc(count, sizeof(float));
    float *map = malloc(count * sizeof(float));
    int ok = 0;
    if (!product || !scratch || !covariance || !map) goto done;
    for (int c = 0; c < WI_DSSIM_CHANNELS; c++) {
        const float *x1 = one->plane[c], *x2 = two->plane[c], *mu1 = one->mu[c], *mu2 = two->mu[c];
        for (size_t i = 0; i < count; i++) product[i] = x1[i] * x2[i];
        wi_dssim_blur(product, scratch, width, height);
        for (size_t i = 0; i < count; i++) covariance[i] += product[i] - mu1[i] * mu2[i];
    }
    const float c1 = 0.01f * 0.01f, c2 = 0.03f * 0.03f, third = 1.0f / 3.0f;
    double sum = 0.0;
    for (size_t y = 0; y < height; y++) {
        double row_sum = 0.0;
        for (size_t x = 0; x < width; x++) {
            size_t i = y * width + x;
            float mu1_sq = 0, mu2_sq = 0, mu12 = 0, var1 = 0, var2 = 0;
            for (int c = 0; c < WI_DSSIM_CHANNELS; c++) {
                float m1 = one->mu[c][i], m2 = two->mu[c][i];
                mu1_sq += m1 * m1;
                mu2_sq += m2 * m2;
                mu12 += m1 * m2;
                var1 += one->sq[c][i] - m1 * m1;
                var2 += two->sq[c][i] - m2 * m2;
            }
            mu1_sq *= third; mu2_sq *= third; mu12 *= third; var1 *= third; var2 *= third;
            float sigma12 = covariance[i] * third;
            float ssim = (2.0f * mu12 + c1) * (2.0f * sigma12 + c2) / ((mu1_sq + mu2_sq + c1) * (var1 + var2 + c2));
            map[i] = ssim;
            row_sum += ssim;
        }
        sum += row_sum;
    }
    double mean = sum / (double)count;
    double average = pow(mean > 0.0 ? mean : 0.0, pow(0.5, index));
    double deviation = 0.0;
    for (size_t i = 0; i < count; i++) deviation += fabs(average - (double)map[i]);
    *score = 1.0 - deviation / (double)count;
    ok = 1;
done:
    free(product);
    free(scratch);
    free(covariance);
    free(map);
    return ok;
}

double wi_dssim_compare(const wi_dssim_image *original, const wi_dssim_image *modified) {
    if (!original || !modified || original->width != modified->width || original->height != modified->height) return -1.0;
    double weighted = 0.0, weights = 0.0;
    for (int s = 0; s < original->scale_count && s < modified->scale_count; s++) {
        double score = 0.0;
        if (!wi_dssim_compare_scale(&original->scales[s], &modified->scales[s], s, &score)) return -1.0;
        weighted += wi_dssim_weights[s] * score;
        weights += wi_dssim_weights[s];
    }
    double ssim = weights > 0.0 ? weighted / weights : 0.0;
    return 1.0 / (ssim > DBL_EPSILON ? ssim : DBL_EPSILON) - 1.0;
}
