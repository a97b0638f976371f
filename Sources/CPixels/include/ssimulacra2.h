#pragma once
#include <stddef.h>
#include <stdint.h>

/// SSIMULACRA2 (Jon Sneyers, Cloudinary; the tool in libjxl's `tools/ssimulacra2.cc`): a perceptual
/// score of a distorted picture against its original, 100 for identical, 90 visually lossless, 70
/// high quality, 50 medium, 30 low, below 0 very low. Written here from its definition: the pictures
/// in linear RGB, then XYB (JPEG XL's colour space, made positive), at up to six scales (2×2 box
/// averages in linear RGB), a Gaussian blur of σ 1.5 (11 taps; zero beyond the left and right
/// edges, mirrored at the top and bottom, as the Python port the benchmark scores with), per channel
/// an SSIM map without the luminance term of classic SSIM and two edge maps (ringing: edges the
/// original lacks; blurring: edges the distortion lost), each pooled as a mean and a 4-norm; the 108
/// features weighted by the metric's published weights and mapped to the score.
///
/// Prepare the original once, then score any number of candidates of the same size against it. Every
/// allocation is checked; nothing is global; any thread may call them, on one original at once too.

/// A picture made ready for scoring: its XYB planes at every scale, their blurred means and blurred
/// squares; an original also keeps one candidate's planes and work buffers between scorings (a
/// candidate's megabytes allocated afresh each time cost more in page faults than the arithmetic).
typedef struct wi_ssimulacra2_image wi_ssimulacra2_image;

/// Prepares `width`×`height` sRGB pixels of `channels` bytes (3: RGB; 4: RGBA, alpha ignored as the
/// benchmark's scorer ignores it), rows `stride` bytes apart. NULL for a size under 8×8 or when
/// memory runs out.
wi_ssimulacra2_image *wi_ssimulacra2_prepare(const uint8_t *pixels, size_t width, size_t height, size_t stride, size_t channels);

/// Frees a prepared picture (NULL is ignored).
void wi_ssimulacra2_free(wi_ssimulacra2_image *image);

/// The score of `width`×`height` sRGB pixels (as `wi_ssimulacra2_prepare` takes them) against
/// `original` (100: identical). The candidate is prepared in the buffers `original` keeps for it
/// (allocated by the first call; a call that finds them in use by another thread allocates its own).
/// NAN when the sizes differ or memory runs out.
double wi_ssimulacra2_score_pixels(wi_ssimulacra2_image *original, const uint8_t *pixels, size_t width, size_t height,
                                   size_t stride, size_t channels);
