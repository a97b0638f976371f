#pragma once
#include <stddef.h>
#include <stdint.h>

/// DSSIM, the perceptual difference of two pictures as Kornel Lesiński's `dssim` tool defines it
/// (written here from its documentation): multi-scale SSIM on L*a*b* planes made from linear-light,
/// premultiplied RGBA (alpha composited over a fixed pattern of colour blocks, so that alpha errors
/// show), the chroma planes blurred first, five scales weighted 0.028, 0.197, 0.322, 0.298, 0.155
/// (full size first), each scale's SSIM map pooled by its mean absolute deviation, and the result
/// given as 1/SSIM − 1: 0 for identical pictures, larger for more different ones, unbounded.
///
/// Prepare the reference once, then compare any number of candidates of the same size against it.
/// Every allocation is checked (NULL / a negative result), nothing is global, any thread may call
/// them, on one original at once too. Loops are plain C over float planes that clang
/// vectorises; the long ones pass `wi_yield_point` once per row.

/// A picture made ready for comparison: its scales, each as L*a*b* planes with their blurred means
/// and blurred squares; an original also keeps one candidate's planes and work buffers between
/// comparisons (allocated afresh each time, they cost more in page faults than the arithmetic).
typedef struct wi_dssim_image wi_dssim_image;

/// Prepares `width`×`height` straight-alpha sRGB RGBA pixels (4 bytes each, rows `stride` bytes
/// apart). NULL for a zero size or when memory runs out.
wi_dssim_image *wi_dssim_prepare(const uint8_t *rgba, size_t width, size_t height, size_t stride);

/// Frees a prepared picture (NULL is ignored).
void wi_dssim_free(wi_dssim_image *image);

/// The DSSIM of `width`×`height` straight-alpha RGBA pixels (as `wi_dssim_prepare` takes them)
/// against `original`: 0 when identical. The candidate is prepared in the buffers `original` keeps
/// for it (allocated by the first call; a call that finds them in use by another thread allocates
/// its own). −1 when the sizes differ or memory runs out.
double wi_dssim_compare_pixels(wi_dssim_image *original, const uint8_t *rgba, size_t width, size_t height, size_t stride);
