#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ssimulacra2.h"
#include "CSystemTuning.h"
#include "fast_cbrt.h"
#include "perceptual_common.h"

/* SSIMULACRA2 as its definition gives it (see ssimulacra2.h); the code is written here. The opsin
   matrix, bias, the 108 feature weights and the final mapping are the metric's published constants
   (libjxl tools/ssimulacra2.cc, BSD-3-Clause): without them it would not be SSIMULACRA2. */

enum { WI_S2_SCALES = 6, WI_S2_RADIUS = 5 };

/* A scale's planes are the positive X, Y and B. */
typedef wi_metric_scale wi_s2_scale;

struct wi_ssimulacra2_image {
    size_t width, height;
    int scale_count;
    wi_s2_scale scales[WI_S2_SCALES];
    /* Work buffers, kept by a candidate (freed once an original is prepared): linear RGB at full
       size (halved in place scale by scale), a plane of products, and a plane plus a padded row of
       scratch for the blur. */
    float *linear, *product, *scratch;
    /* An original's spare candidate (see `wi_spare_take`). */
    void *_Atomic spare;
};

static const double wi_s2_weights[108] = {
    0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0, 0.0004371155730107379, 0.0,
    1.1041726426657346, 0.00066284834129271, 0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0,
    1.8422455520539298, 11.441172603757666, 0.0, 0.0007989109436015163, 0.000176816438078653, 0.0,
    1.8787594979546387, 10.94906990605142, 0.0, 0.0007289346991508072, 0.9677937080626833, 0.0,
    0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053, 0.0004550992113792063, 0.0, 0.0,
    0.0013648766163243398, 0.0, 0.0, 0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262,
    0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296, 1.027889937768264,
    225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
    176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408, 0.0, 0.0, 0.0,
    34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0008680556573291698, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0004179171803251336, 0.0017290828234722833, 0.0, 0.0020827005846636437, 0.0, 0.0, 8.826982764996862,
    23.19243343998926, 0.0, 95.1080498811086, 0.9863978034400682, 0.9834382792465353, 0.0012286405048278493,
    171.2667255897307, 0.9807858872435379, 0.0, 0.0, 0.0, 0.0005130064588990679, 0.0, 0.00010854057858411537,
};

/* The Gaussian of σ 1.5, 11 taps, normalised. */
static void wi_s2_kernel(float kernel[2 * WI_S2_RADIUS + 1]) {
    double sum = 0, values[2 * WI_S2_RADIUS + 1];
    for (int k = -WI_S2_RADIUS; k <= WI_S2_RADIUS; k++) {
        values[k + WI_S2_RADIUS] = exp(-(double)(k * k) / (2.0 * 1.5 * 1.5));
        sum += values[k + WI_S2_RADIUS];
    }
    for (int k = 0; k < 2 * WI_S2_RADIUS + 1; k++) kernel[k] = (float)(values[k] / sum);
}

/* Blurs `plane` in place (`scratch`: the plane's size plus a row and 2 × WI_S2_RADIUS floats):
   zeros beyond the left and right ends of a row, columns mirrored at the top and bottom (…c b a | a b
   c…). (The Python port the benchmark scores with works on the transposed picture, zero-padding its
   first axis; these edges are its.) Needs height ≥ 6. Each output is written once from its eleven
   taps, the kernel's symmetry halving the products. */
WI_INLINE void wi_s2_blur_body(float *plane, float *scratch, size_t width, size_t height) {
    float kernel[2 * WI_S2_RADIUS + 1];
    wi_s2_kernel(kernel);
    const float k0 = kernel[5], k1 = kernel[6], k2 = kernel[7], k3 = kernel[8], k4 = kernel[9], k5 = kernel[10];
    const long h = (long)height;
    float *padded = scratch + width * height;   /* a row with WI_S2_RADIUS zeros each side */
    for (size_t y = 0; y < height; y++) {
        memset(padded, 0, WI_S2_RADIUS * sizeof(float));
        memcpy(padded + WI_S2_RADIUS, plane + y * width, width * sizeof(float));
        memset(padded + WI_S2_RADIUS + width, 0, WI_S2_RADIUS * sizeof(float));
        const float *p = padded + WI_S2_RADIUS;
        float *out = scratch + y * width;
        for (size_t x = 0; x < width; x++)
            out[x] = k0 * p[x] + k1 * (p[x - 1] + p[x + 1]) + k2 * (p[x - 2] + p[x + 2])
                   + k3 * (p[x - 3] + p[x + 3]) + k4 * (p[x - 4] + p[x + 4]) + k5 * (p[x - 5] + p[x + 5]);
    }
    for (long y = 0; y < h; y++) {
        const float *r[2 * WI_S2_RADIUS + 1];
        for (int k = 0; k <= 2 * WI_S2_RADIUS; k++) {
            long source = y + k - WI_S2_RADIUS;
            if (source < 0) source = -source - 1;
            if (source >= h) source = 2 * h - source - 1;
            r[k] = scratch + (size_t)source * width;
        }
        float *out = plane + (size_t)y * width;
        for (size_t x = 0; x < width; x++)
            out[x] = k0 * r[5][x] + k1 * (r[4][x] + r[6][x]) + k2 * (r[3][x] + r[7][x])
                   + k3 * (r[2][x] + r[8][x]) + k4 * (r[1][x] + r[9][x]) + k5 * (r[0][x] + r[10][x]);
        wi_yield_point();
    }
}

WI_WITH_AVX2(wi_s2_blur, wi_s2_blur_body, (float *plane, float *scratch, size_t width, size_t height),
             (plane, scratch, width, height))

enum { WI_S2_LANES = 8 };

/* One channel of one scale compared: the SSIM map (without the luminance term), the ringing
   ("artifact": edges the original lacks) and blurring ("lost": edges the distortion lost) maps,
   summed into `sums` as mean and fourth power of each (d, d⁴, artifact, artifact⁴, lost, lost⁴),
   `product` being the blurred product of the two planes. Each row is summed in WI_S2_LANES float
   lanes, a loop the compiler vectorises, then in double. */
WI_INLINE void wi_s2_pool_body(const float *x1, const float *x2, const float *mu1, const float *mu2, const float *s11,
                               const float *s22, const float *product, size_t w, size_t h, double sums[6]) {
    const float c2 = 0.0009f;
    for (int k = 0; k < 6; k++) sums[k] = 0;
    for (size_t y = 0; y < h; y++) {
        float lane[6][WI_S2_LANES];
        memset(lane, 0, sizeof lane);
        const size_t row = y * w;
        for (size_t x0 = 0; x0 < w; x0 += WI_S2_LANES) {
            const size_t n = w - x0 < WI_S2_LANES ? w - x0 : WI_S2_LANES;
            for (size_t l = 0; l < WI_S2_LANES; l++) {
                /* Lanes past the row's end read its first pixel and add nothing. */
                const size_t i = row + x0 + (l < n ? l : 0);
                const float keep = l < n ? 1.0f : 0.0f;
                float m1 = mu1[i], m2 = mu2[i], m12 = m1 * m2;
                float num_m = 1.0f - (m1 - m2) * (m1 - m2);
                float num_s = 2.0f * (product[i] - m12) + c2;
                float den_s = (s11[i] - m1 * m1) + (s22[i] - m2 * m2) + c2;
                float d = fmaxf(1.0f - num_m * num_s / den_s, 0.0f) * keep;
                float d2 = d * d;
                float ratio = ((1.0f + fabsf(x2[i] - m2)) / (1.0f + fabsf(x1[i] - m1)) - 1.0f) * keep;
                float artifact = fmaxf(ratio, 0.0f), lost = fmaxf(-ratio, 0.0f);
                float a2 = artifact * artifact, l2 = lost * lost;
                lane[0][l] += d;
                lane[1][l] += d2 * d2;
                lane[2][l] += artifact;
                lane[3][l] += a2 * a2;
                lane[4][l] += lost;
                lane[5][l] += l2 * l2;
            }
        }
        for (int k = 0; k < 6; k++)
            for (size_t l = 0; l < WI_S2_LANES; l++) sums[k] += lane[k][l];
    }
}

WI_WITH_AVX2(wi_s2_pool, wi_s2_pool_body,
             (const float *x1, const float *x2, const float *mu1, const float *mu2, const float *s11, const float *s22,
              const float *product, size_t w, size_t h, double sums[6]),
             (x1, x2, mu1, mu2, s11, s22, product, w, h, sums))

/* Linear RGB (3 floats a pixel) to the metric's positive XYB planes. */
static void wi_s2_to_xyb(const float *linear, size_t count, float *x, float *y, float *b) {
    const float m00 = 0.30f, m02 = 0.078f, m01 = 1.0f - m02 - m00;
    const float m10 = 0.23f, m12 = 0.078f, m11 = 1.0f - m12 - m10;
    const float m20 = 0.24342268924547819f, m21 = 0.20476744424496821f, m22 = 1.0f - m20 - m21;
    const float bias = 0.0037930732552754493f, bias_root = cbrtf(bias);
    for (size_t i = 0; i < count; i++) {
        float r = linear[i * 3], g = linear[i * 3 + 1], bl = linear[i * 3 + 2];
        float mixed0 = fmaxf(m00 * r + m01 * g + m02 * bl + bias, 0.0f);
        float mixed1 = fmaxf(m10 * r + m11 * g + m12 * bl + bias, 0.0f);
        float mixed2 = fmaxf(m20 * r + m21 * g + m22 * bl + bias, 0.0f);
        mixed0 = wi_fast_cbrtf(mixed0) - bias_root;
        mixed1 = wi_fast_cbrtf(mixed1) - bias_root;
        mixed2 = wi_fast_cbrtf(mixed2) - bias_root;
        float xx = 0.5f * (mixed0 - mixed1), yy = 0.5f * (mixed0 + mixed1);
        x[i] = xx * 14.0f + 0.42f;
        y[i] = yy + 0.01f;
        b[i] = (mixed2 - yy) + 0.55f;
    }
}

/* Frees a picture's work buffers (an original's, once prepared, or all of a picture's when it is freed). */
static void wi_s2_free_work(wi_ssimulacra2_image *image) {
    free(image->linear);
    free(image->product);
    free(image->scratch);
    image->linear = image->product = image->scratch = NULL;
}

void wi_ssimulacra2_free(wi_ssimulacra2_image *image) {
    if (!image) return;
    wi_ssimulacra2_free(wi_spare_take(&image->spare));
    for (int s = 0; s < image->scale_count; s++) wi_metric_scale_free(&image->scales[s]);
    wi_s2_free_work(image);
    free(image);
}

/* A picture of `width`×`height` with its planes and work buffers allocated, not filled; NULL for a
   size under 8×8 or when memory runs out. The scales halve (rounding up) while both sides are 8 or
   more, six at most. */
static wi_ssimulacra2_image *wi_s2_allocate(size_t width, size_t height) {
    if (width < 8 || height < 8 || width > (SIZE_MAX / 16) / height) return NULL;
    wi_ssimulacra2_image *image = calloc(1, sizeof(wi_ssimulacra2_image));
    if (!image) return NULL;
    image->width = width;
    image->height = height;
    const size_t count = width * height;
    image->linear = malloc(count * 3 * sizeof(float));
    image->product = malloc(count * sizeof(float));
    image->scratch = malloc((count + width + 2 * WI_S2_RADIUS) * sizeof(float));
    int ok = image->linear && image->product && image->scratch;
    size_t w = width, h = height;
    for (int s = 0; s < WI_S2_SCALES && ok && w >= 8 && h >= 8; s++) {
        image->scale_count = s + 1;
        ok = wi_metric_scale_allocate(&image->scales[s], w, h);
        w = (w + 1) / 2;
        h = (h + 1) / 2;
    }
    if (!ok) {
        wi_ssimulacra2_free(image);
        return NULL;
    }
    return image;
}

/* Fills an allocated picture from its pixels (see wi_ssimulacra2_prepare) with the buffers it holds. */
static void wi_s2_fill(wi_ssimulacra2_image *image, const uint8_t *pixels, size_t stride, size_t channels) {
    wi_linear_pixels(pixels, image->width, image->height, stride, channels, 0, image->linear);   /* alpha ignored */
    size_t w = image->width, h = image->height;
    for (int s = 0; s < image->scale_count; s++) {
        wi_s2_scale *scale = &image->scales[s];
        const size_t count = w * h;
        wi_s2_to_xyb(image->linear, count, scale->plane[0], scale->plane[1], scale->plane[2]);
        for (int c = 0; c < 3; c++) {
            memcpy(scale->mu[c], scale->plane[c], count * sizeof(float));
            for (size_t i = 0; i < count; i++) scale->sq[c][i] = scale->plane[c][i] * scale->plane[c][i];
            wi_s2_blur(scale->mu[c], image->scratch, w, h);
            wi_s2_blur(scale->sq[c], image->scratch, w, h);
        }
        /* The next scale: 2×2 averages in linear RGB, a last odd row or column averaged over what it has. */
        wi_halve_in_place(image->linear, &w, &h, 3, 1);
    }
}

wi_ssimulacra2_image *wi_ssimulacra2_prepare(const uint8_t *pixels, size_t width, size_t height, size_t stride, size_t channels) {
    if (!pixels || (channels != 3 && channels != 4)) return NULL;
    wi_ssimulacra2_image *image = wi_s2_allocate(width, height);
    if (!image) return NULL;
    wi_s2_fill(image, pixels, stride, channels);
    wi_s2_free_work(image);   /* an original needs them no more; its first candidate allocates its own */
    return image;
}

/* The score of a filled candidate (its work buffers used) against `original` of the same size. */
static double wi_s2_score(const wi_ssimulacra2_image *original, wi_ssimulacra2_image *candidate) {
    /* Per scale: per channel the SSIM map's mean and 4-norm, and the ringing and blurring maps' mean and 4-norm. */
    double ssim[WI_S2_SCALES][6], edges[WI_S2_SCALES][12];
    const int scales = original->scale_count;
    for (int s = 0; s < scales; s++) {
        const wi_s2_scale *one = &original->scales[s], *two = &candidate->scales[s];
        const size_t w = one->width, h = one->height, count = w * h;
        for (int c = 0; c < 3; c++) {
            const float *x1 = one->plane[c], *x2 = two->plane[c];
            for (size_t i = 0; i < count; i++) candidate->product[i] = x1[i] * x2[i];
            wi_s2_blur(candidate->product, candidate->scratch, w, h);
            double sums[6];
            wi_s2_pool(x1, x2, one->mu[c], two->mu[c], one->sq[c], two->sq[c], candidate->product, w, h, sums);
            const double n = (double)count;
            ssim[s][c * 2] = sums[0] / n;
            ssim[s][c * 2 + 1] = pow(sums[1] / n, 0.25);
            edges[s][c * 4] = sums[2] / n;
            edges[s][c * 4 + 1] = pow(sums[3] / n, 0.25);
            edges[s][c * 4 + 2] = sums[4] / n;
            edges[s][c * 4 + 3] = pow(sums[5] / n, 0.25);
        }
    }
    double total = 0;
    int i = 0;
    for (int c = 0; c < 3; c++) {
        for (int s = 0; s < scales; s++) {
            for (int n = 0; n < 2; n++) {
                total += wi_s2_weights[i++] * fabs(ssim[s][c * 2 + n]);
                total += wi_s2_weights[i++] * fabs(edges[s][c * 4 + n]);
                total += wi_s2_weights[i++] * fabs(edges[s][c * 4 + n + 2]);
            }
        }
    }
    total *= 0.9562382616834844;
    total = 2.326765642916932 * total - 0.020884521182843837 * total * total + 6.248496625763138e-05 * total * total * total;
    return total > 0 ? 100.0 - 10.0 * pow(total, 0.6276336467831387) : 100.0;
}

double wi_ssimulacra2_score_pixels(wi_ssimulacra2_image *original, const uint8_t *pixels, size_t width, size_t height,
                                   size_t stride, size_t channels) {
    if (!original || !pixels || width != original->width || height != original->height || (channels != 3 && channels != 4)) return NAN;
    wi_ssimulacra2_image *candidate = wi_spare_take(&original->spare);
    if (!candidate) candidate = wi_s2_allocate(width, height);
    if (!candidate) return NAN;
    wi_s2_fill(candidate, pixels, stride, channels);
    const double score = wi_s2_score(original, candidate);
    if (!wi_spare_return(&original->spare, candidate)) wi_ssimulacra2_free(candidate);
    return score;
}
