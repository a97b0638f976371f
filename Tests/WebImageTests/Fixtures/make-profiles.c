/* WebImage's colour test fixtures: writes two small ICC profiles of our own making.
 *   cc -O2 make-profiles.c -o make-profiles -llcms2 -lm && ./make-profiles test-cmyk.icc test-gray-linear.icc
 * 1. A CMYK profile (CMYK -> Lab, perceptual AToB0, a 7-point CLUT): ink is modelled as (1 - c)(1 - k) with a gamma of 1.3 per channel and a slight
 * red cast in the cyan ink, so a naive CMYK-to-RGB conversion gives visibly different pixels. */
#include <lcms2.h>
#include <math.h>
#include <stdio.h>

static cmsHTRANSFORM to_lab;

static int sample(const cmsUInt16Number in[], cmsUInt16Number out[], void *cargo) {
    (void)cargo;
    double c = in[0] / 65535.0, m = in[1] / 65535.0, y = in[2] / 65535.0, k = in[3] / 65535.0;
    double rgb[3] = { pow((1 - c * 0.92) * (1 - k), 1.3), pow((1 - m) * (1 - k), 1.3), pow((1 - y) * (1 - k), 1.3) };
    cmsCIELab lab;
    cmsDoTransform(to_lab, rgb, &lab, 1);
    cmsFloat2LabEncoded(out, &lab);
    return 1;
}

static void log_error(cmsContext c, cmsUInt32Number code, const char *text) { (void)c; fprintf(stderr, "lcms %u: %s\n", code, text); }
int main(int argc, char **argv) {
    cmsSetLogErrorHandler(log_error);
    cmsHPROFILE srgb = cmsCreate_sRGBProfile(), labp = cmsCreateLab4Profile(NULL);
    to_lab = cmsCreateTransform(srgb, TYPE_RGB_DBL, labp, TYPE_Lab_DBL, INTENT_PERCEPTUAL, 0);
    cmsHPROFILE p = cmsCreateProfilePlaceholder(NULL);
    cmsSetProfileVersion(p, 4.3);
    cmsSetDeviceClass(p, cmsSigOutputClass);
    cmsSetColorSpace(p, cmsSigCmykData);
    cmsSetPCS(p, cmsSigLabData);
    cmsMLU *desc = cmsMLUalloc(NULL, 1);
    cmsMLUsetASCII(desc, "en", "US", "WebImage test CMYK");
    cmsWriteTag(p, cmsSigProfileDescriptionTag, desc);
    cmsWriteTag(p, cmsSigCopyrightTag, desc);
    cmsWriteTag(p, cmsSigMediaWhitePointTag, cmsD50_XYZ());
    cmsPipeline *pipe = cmsPipelineAlloc(NULL, 4, 3);
    cmsStage *clut = cmsStageAllocCLut16bit(NULL, 7, 4, 3, NULL);
    cmsStageSampleCLut16bit(clut, sample, NULL, 0);
    cmsPipelineInsertStage(pipe, cmsAT_BEGIN, cmsStageAllocToneCurves(NULL, 4, NULL));   /* A curves: identity */
    cmsPipelineInsertStage(pipe, cmsAT_END, clut);
    cmsPipelineInsertStage(pipe, cmsAT_END, cmsStageAllocToneCurves(NULL, 3, NULL));     /* B curves: identity */
    cmsWriteTag(p, cmsSigAToB0Tag, pipe);
    if (argc < 3 || !cmsSaveProfileToFile(p, argv[1])) { fprintf(stderr, "usage: make-profiles CMYK.icc GRAY.icc\n"); return 1; }
    /* 2. A gray profile with a linear tone curve (gamma 1.0, D50): sRGB's curve is about 2.2, so
     *    every mid-tone moves when it is converted. */
    cmsToneCurve *linear = cmsBuildGamma(NULL, 1.0);
    cmsHPROFILE gray = cmsCreateGrayProfile(cmsD50_xyY(), linear);
    cmsMLU *grayDesc = cmsMLUalloc(NULL, 1);
    cmsMLUsetASCII(grayDesc, "en", "US", "WebImage test linear gray");
    cmsWriteTag(gray, cmsSigProfileDescriptionTag, grayDesc);
    if (!cmsSaveProfileToFile(gray, argv[2])) { fprintf(stderr, "cannot write %s\n", argv[2]); return 1; }
    return 0;
}
