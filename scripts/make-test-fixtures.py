#!/usr/bin/env python3
"""Copies the small part of the team's corpus that `swift test` reads into the repository.

The package's own tests must pass on a clone alone, so the files they read are tracked under
Tests/WebImageTests/Fixtures/Corpus/ with the corpus's own layout, the MANIFEST.tsv and FRAMES.tsv
rows of exactly those files, and the licence texts of their sources. The whole corpus is checked by
scripts/corpus-check.py instead. The selection is deterministic:

  - every file a test names (NAMED below);
  - every PngSuite file (a few hundred bytes each: every colour type, depth and broken chunk);
  - per (format, validity, mode) row group of the manifest, its smallest file when it is at most
    CAP bytes, so each colour mode, subsampling and bit depth the corpus has is represented;
  - every invalid file of at most CAP bytes (refusal without a crash is cheap to prove on all);
  - per format, its SMALLEST files of at most TINY bytes (WebP's lossless test vectors are a few hundred bytes each).

    scripts/make-test-fixtures.py [CORPUS]        (default ../shared/corpus)
"""
import csv
import os
import shutil
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests/WebImageTests/Fixtures/Corpus")
CAP = 16_000
SMALLEST = 30
TINY = 4_000
BUDGET = 3_500_000   # picked image bytes: with the manifests, licences and test code, Tests/ stays under 5 MB (issues 25, 43)

NAMED = """
avif/valid/av1-avif/Link-U/fox.profile0.8bpc.yuv420.avif
avif/valid/av1-avif/Link-U/kimono.avif
avif/valid/pillow/avif/star.avifs
gif/valid/pillow/chi.gif
gif/valid/pillow/comment_after_last_frame.gif
gif/valid/pillow/decompression_bomb_extents.gif
gif/valid/wuffs/animated-red-blue.gif
gif/valid/wuffs/artificial-gif/frame-out-of-bounds.gif
gif/valid/wuffs/hat.gif
heif/valid/pillow/avif/hopper.heif
jpeg/invalid/pillow/jpeg_ff00_header.jpg
jpeg/valid/exif-orientation-examples/Landscape_6.jpg
jpeg/valid/pillow/hopper_orientation_5.jpg
jpeg/valid/libjpeg-turbo/monkey12.jpg
jpeg/valid/libjpeg-turbo/testimgari.jpg
jpeg/valid/pillow/broken_exif_dpi.jpg
jpeg/valid/pillow/empty_gps_ifd.jpg
jpeg/valid/pillow/flower.jpg
jpeg/valid/pillow/hopper_orientation_6.jpg
jpeg/valid/pillow/icc-after-SOF.jpg
jpeg/valid/pillow/icc_profile_big.jpg
jpeg/valid/pillow/pil_sample_cmyk.jpg
jpeg/valid/wuffs/bricks-color.jpeg
jpeg/valid/wuffs/bricks-gray.jpeg
jpeg/valid/wuffs/harvesters.jpeg
jpeg/valid/wuffs/hat.jpeg
jpeg/valid/wuffs/hibiscus.primitive.jpeg
jpeg/valid/wuffs/peacock.default.jpeg
jpeg/valid/wuffs/peacock.progressive.jpeg
jpeg/valid/wuffs/peacock.q99.jpeg
jpeg/valid/wuffs/pjw-thumbnail.jpeg
png/invalid/pillow/apng/chunk_repeat_fctl.png
png/valid/image-png/bugfixes/F-exif-chunk-early.png
png/valid/pillow/apng/chunk_actl_after_idat.png
png/valid/pillow/apng/chunk_multi_actl.png
png/valid/pillow/apng/chunk_no_fdat.png
png/valid/pillow/apng/delay_zero_denom.png
png/valid/pillow/apng/dispose_op_previous.png
png/valid/pillow/apng/dispose_op_previous_frame.png
png/valid/pillow/apng/single_frame_default.png
png/valid/pillow/apng/syntax_num_frames_zero_default.png
png/valid/pillow/icc_profile.png
png/valid/pillow/pil123rgba.png
png/valid/pillow/png_decompression_dos.png
png/valid/pillow/xmp_tags_orientation_exiftool.png
png/valid/wuffs/animated-red-blue.apng
png/valid/wuffs/muybridge.apng
webp/valid/libwebp-test-data/lossless_vec_1_0.webp
webp/valid/libwebp-test-data/lossy_alpha1.webp
webp/valid/libwebp-test-data/lossless2.webp
webp/valid/libwebp-test-data/test.webp
webp/valid/libwebp-test-data/vp80-00-comprehensive-008.webp
webp/valid/pillow/iss634.webp
""".split()

# Which licence files of corpus/licenses/ cover a path, by the path's source folder.
LICENSES = {
    "av1-avif": ["av1-avif_LICENSE", "av1-avif_testFiles_Link-U_LICENSE.txt", "av1-avif_testFiles_Link-U_README.md",
                 "av1-avif_testFiles_Microsoft_ReadMe.md", "av1-avif_testFiles_Netflix_license.txt",
                 "av1-avif_testFiles_Xiph_COPYING"],
    "pillow": ["pillow_LICENSE"],
    "wuffs": ["wuffs_LICENSE", "wuffs_test_data_README.md"],
    "exif-orientation-examples": ["exif-orientation-examples_LICENSE"],
    "libjpeg-turbo": ["libjpeg-turbo_LICENSE.md", "libjpeg-turbo_README.ijg", "libjpeg-turbo_testimages_LICENSE.txt"],
    "image-png": ["image-png_LICENSE-MIT", "image-png_tests_bugfixes_License.toml"],
    "libpng-testpngs": ["libpng_LICENSE.md"],
    "libpng-pngsuite": ["libpng_LICENSE.md", "libpng_contrib_pngsuite_README"],
    "pngsuite": ["pngsuite_PngSuite.LICENSE", "pngsuite_PngSuite.README"],
    "libwebp-test-data": ["libwebp-test-data_libwebp_tests.md5"],
    "libheif": ["libheif_COPYING"],
    "libheif-fuzzing": ["libheif_COPYING"],
    "nokiatech-heif": ["nokiatech-heif_gh-pages_LICENSE.TXT"],
    "pillow-heif": ["pillow-heif_LICENSE.txt"],
    "bmpsuite": ["bmpsuite_readme.txt"],
    "libtiff": ["libtiff_LICENSE.md"],
    "image-rs": ["image-rs_image_LICENSE-MIT", "image-rs_image_LICENSE-APACHE"],
    "icojs": ["icojs_LICENSE"],
    "rust-ico": ["rust-ico_LICENSE"],
    "jxl-rs": ["jxl-rs_LICENSE"],
    "conformance": ["jxl-conformance_LICENSE", "jxl-conformance_testcases_README.md"],
}
# Sources whose files may be used for tests but not shipped in the repository (GPL, LGPL, share-alike).
NOT_SHIPPED = ["/qt/", "/gdk-pixbuf/", "/libjxl-testdata/"]


def main():
    corpus = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "../shared/corpus"))
    with open(os.path.join(corpus, "MANIFEST.tsv"), newline="") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header, *rows = list(reader)
    size = lambda path: os.path.getsize(os.path.join(corpus, path))
    rows = [r for r in rows if not r[0].startswith("large/") and not any(folder in r[0] for folder in NOT_SHIPPED)
            and not (r[0].startswith("jxl/") and ("CC-BY-SA" in r[13] or "CC-BY-3.0" in r[13]))]
    picked = set(NAMED)
    picked |= {r[0] for r in rows if "/pngsuite/" in r[0]}
    groups = defaultdict(list)
    for r in rows:
        groups[(r[1], r[5], r[4])].append((size(r[0]), r[0]))
    for members in groups.values():
        if not any(path in picked for _, path in members):
            smallest = min(members)
            if smallest[0] <= CAP:
                picked.add(smallest[1])
    picked |= {r[0] for r in rows if r[5] == "no" and size(r[0]) <= CAP}
    for format in {r[1] for r in rows}:
        picked |= {path for _, path in sorted((size(r[0]), r[0]) for r in rows if r[1] == format and size(r[0]) <= TINY)[:SMALLEST]}
    total = sum(size(p) for p in picked)
    if total > BUDGET:
        sys.exit(f"make-test-fixtures: {total} bytes picked, over the {BUDGET}-byte budget")

    shutil.rmtree(OUT, ignore_errors=True)
    for path in sorted(picked):
        os.makedirs(os.path.dirname(os.path.join(OUT, path)), exist_ok=True)
        shutil.copyfile(os.path.join(corpus, path), os.path.join(OUT, path))
    with open(os.path.join(OUT, "MANIFEST.tsv"), "w", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_NONE, escapechar="\\")
        writer.writerow(header)
        writer.writerows(r for r in rows if r[0] in picked)
    with open(os.path.join(corpus, "FRAMES.tsv"), newline="") as f:
        frames_header, *frames = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    with open(os.path.join(OUT, "FRAMES.tsv"), "w", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_NONE, escapechar="\\")
        writer.writerow(frames_header)
        writer.writerows(r for r in frames if r[0] in picked)
    needed = sorted({name for p in picked for folder, names in LICENSES.items() if f"/{folder}/" in p for name in names})
    os.makedirs(os.path.join(OUT, "licenses"))
    for name in needed:
        shutil.copyfile(os.path.join(corpus, "licenses", name), os.path.join(OUT, "licenses", name))
    sources = sorted({p.split("/")[2] for p in picked})
    unlicensed = [s for s in sources if s not in LICENSES]
    if unlicensed:
        sys.exit(f"make-test-fixtures: no licence listed for {unlicensed}")
    print(f"make-test-fixtures: {len(picked)} files, {total} bytes, {len(needed)} licence files, sources {sources}")


if __name__ == "__main__":
    main()
