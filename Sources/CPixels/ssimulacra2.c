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

typedef struct {
    size_t width, height;
    float *plane[3];   /* positive XYB */
    float *mu[3];      /* blurred planes */
    float *sq[3];      /* blurred squares */
} wi_s2_scale;

struct wi_ssimulacra2_image {
    size_t width, height;
    int scale_count;
    wi_s2_scale scales[WI_S2_SCALES];
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

/* Blurs `plane` in place (`scratch`: the same size): zeros beyond the left and right ends of a row,
   columns mirrored at the top and bottom (…c b a | a b c…). (The Python port the benchmark scores
   with works on the transposed picture, zero-padding its first axis; these edges are its.) Needs
   height ≥ 6. */
static void wi_s2_blur(float *plane, float *scratch, size_t width, size_t height) {
    float kernel[2 * WI_S2_RADIUS + 1];
    wi_s2_kernel(kernel);
    const long w = (long)width, h = (long)height;
    for (size_t y = 0; y < height; y++) {
        const float *row = plane + y * width;
        float *out = scratch + y * width;
        memset(out, 0, width * sizeof(float));
        /* One tap at a time over the whole row (a loop clang vectorises); a tap reaching past an end adds nothing. */
        for (long k = 0; k <= 2 * WI_S2_RADIUS; k++) {
            const long offset = k - WI_S2_RADIUS;
            const long first = offset < 0 ? -offset : 0, end = offset > 0 ? w - offset : w;
            const float weight = kernel[k];
            const float *shifted = row + offset;
            for (long x = first; x < end; x++) out[x] += weight * shifted[x];
        }
    }
    for (long y = 0; y < h; y++) {
        float *out = plane + (size_t)y * width;
        memset(out, 0, width * sizeof(float));
        for (int k = 0; k <= 2 * WI_S2_RADIUS; k++) {
            long source = y + k - WI_S2_RADIUS;
            if (source < 0) source = -source - 1;
            if (source >= h) source = 2 * h - source - 1;
            const float *row = scratch + (size_t)source * width;
            const float weight = kernel[k];
            for (size_t x = 0; x < width; x++) out[x] += weight * row[x];
        }
        wi_yield_point();
    }
}

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

void wi_ssimulacra2_free(wi_ssimulacra2_image *image) {
    if (!image) return;
    for (int s = 0; s < image->scale_count; s++) {
        for (int c = 0; c < 3; c++) {
            free(image->scales[s].plane[c]);
            free(image->scales[s].mu[c]);
            free(image->scales[s].sq[c]);
        }
    }
    free(image);
}

wi_ssimulacra2_image *wi_ssimulacra2_prepare(const uint8_t *pixels, size_t width, size_t height, size_t stride, size_t channels) {
    if (!pixels || width < 8 || height < 8 || (channels != 3 && channels != 4) || width > (SIZE_MAX / 16) / height) return NULL;
    wi_ssimulacra2_image *image = calloc(1, sizeof(wi_ssimulacra2_image));
    float *linear = wi_linear_pixels(pixels, width, height, stride, channels, 0);   /* alpha ignored */
    float *scratch = malloc(width * height * sizeof(float));
    if (!image || !linear || !scratch) {
        free(image); free(linear); free(scratch);
        return NULL;
    }
    image->width = width;
    image->height = height;
    size_t w = width, h = height;
    int ok = 1;
    for (int s = 0; s < WI_S2_SCALES && ok && w >= 8 && h >= 8; s++) {
        wi_s2_scale *scale = &image->scales[s];
        scale->width = w;
        scale->height = h;
        image->scale_count = s + 1;
        size_t count = w * h;
        for (int c = 0; c < 3 && ok; c++) {
            scale->plane[c] = malloc(count * sizeof(float));
            scale->mu[c] = malloc(count * sizeof(float));
            scale->sq[c] = malloc(count * sizeof(float));
            ok = scale->plane[c] && scale->mu[c] && scale->sq[c];
        }
        if (!ok) break;
        wi_s2_to_xyb(linear, count, scale->plane[0], scale->plane[1], scale->plane[2]);
        for (int c = 0; c < 3; c++) {
            memcpy(scale->mu[c], scale->plane[c], count * sizeof(float));
            for (size_t i = 0; i < count; i++) scale->sq[c][i] = scale->plane[c][i] * scale->plane[c][i];
            wi_s2_blur(scale->mu[c], scratch, w, h);
            wi_s2_blur(scale->sq[c], scratch, w, h);
        }
        /* The next scale: 2×2 averages in linear RGB, a last odd row or column averaged over what it has. */
        wi_halve_in_place(linear, &w, &h, 3, 1);
    }
    free(linear);
    free(scratch);
    if (!ok || image->scale_count == 0) {
        wi_ssimulacra2_free(image);
        return NULL;
    }
    return image;
}

double wi_ssimulacra2_score(const wi_ssimulacra2_image *original, const wi_ssimulacra2_image *distorted) {
    if (!original || !distorted || original->width != distorted->width || original->height != distorted->height) return NAN;
    int scales = original->scale_count < distorted->scale_count ? original->scale_count : distorted->scale_count;
    /* Per scale: per channel the SSIM map's mean and 4-norm, and the ringing and blurring maps' mean and 4-norm. */
    double ssim[WI_S2_SCALES][6], edges[WI_S2_SCALES][12];
    for (int s = 0; s < scales; s++) {
        const wi_s2_scale *one = &original->scales[s], *two = &distorted->scales[s];
        size_t w = one->width, h = one->height, count = w * h;
        float *product = malloc(count * sizeof(float)), *scratch = malloc(count * sizeof(float));
        if (!product || !scratch) {
            free(product); free(scratch);
            return NAN;
        }
        for (int c = 0; c < 3; c++) {
            const float *x1 = one->plane[c], *x2 = two->plane[c], *mu1 = one->mu[c], *mu2 = two->mu[c];
            const float *s11 = one->sq[c], *s22 = two->sq[c];
            for (size_t i = 0; i < count; i++) product[i] = x1[i] * x2[i];
            wi_s2_blur(product, scratch, w, h);
            double sum_d = 0, sum_d4 = 0, sum_art = 0, sum_art4 = 0, sum_det = 0, sum_det4 = 0;
            const float c2 = 0.0009f;
            for (size_t y = 0; y < h; y++) {
                float row_d = 0, row_d4 = 0, row_art = 0, row_art4 = 0, row_det = 0, row_det4 = 0;
                for (size_t x = 0; x < w; x++) {
                    size_t i = y * w + x;
                    float m1 = mu1[i], m2 = mu2[i], m12 = m1 * m2;
                    float num_m = 1.0f - (m1 - m2) * (m1 - m2);
                    float num_s = 2.0f * (product[i] - m12) + c2;
                    float den_s = (s11[i] - m1 * m1) + (s22[i] - m2 * m2) + c2;
                    float d = fmaxf(1.0f - num_m * num_s / den_s, 0.0f);
                    float d2 = d * d;
                    row_d += d;
                    row_d4 += d2 * d2;
                    float ratio = (1.0f + fabsf(x2[i] - m2)) / (1.0f + fabsf(x1[i] - m1)) - 1.0f;
                    float artifact = fmaxf(ratio, 0.0f), lost = fmaxf(-ratio, 0.0f);
                    float a2 = artifact * artifact, l2 = lost * lost;
                    row_art += artifact;
                    row_art4 += a2 * a2;
                    row_det += lost;
                    row_det4 += l2 * l2;
                }
                sum_d += row_d; sum_d4 += row_d4; sum_art += row_art; sum_art4 += row_art4; sum_det += row_det; sum_det4 += row_det4;
            }
            double n = (double)count;
            ssim[s][c * 2] = sum_d / n;
            ssim[s][c * 2 + 1] = pow(sum_d4 / n, 0.25);
            edges[s][c * 4] = sum_art / n;
            edges[s][c * 4 + 1] = pow(sum_art4 / n, 0.25);
            edges[s][c * 4 + 2] = sum_det / n;
            edges[s][c * 4 + 3] = pow(sum_det4 / n, 0.25);
        }
        free(product);
        free(scratch);
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
