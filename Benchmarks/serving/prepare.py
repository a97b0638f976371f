#!/usr/bin/env python3
"""Writes the serving benchmark's sources into the nginx runtime directory (run with the venv's python).

    $WEBIMAGE_BENCH_VENV/bin/python Benchmarks/serving/prepare.py [--photos 300] [--div2k 20]

Into ${WEBIMAGE_NGINX_RUNTIME:-/tmp/webimage-bench-nginx}/serving/ (nginx serves it as /serving/):

  photos/0.jpg … photos/<photos-1>.jpg
      distinct 1600×1200 JPEGs (Q90, 4:2:0, baseline, no metadata), each a crop of one of the corpus's
      large photos at its own offset and scale, resized with Lanczos-3.
  div2k/{jpg,png,webp,avif}/0 … <div2k-1>
      2040×1356 crops (DIV2K's size) made the same way; the same crop i in four files: JPEG Q90 4:2:0,
      PNG (compression 6), WebP Q90, AVIF Q80 (AV1, 8 bit, 4:2:0, effort 4).

Crop i depends only on i (seeded), so a later run with a larger count adds files and keeps the old ones;
a file already present is skipped (files are written to a temporary name and renamed).
"""
import argparse
import os
import random
import sys
import time

import pyvips

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CORPUS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "corpus"))

# The corpus's large photos: index i uses SOURCES[i % len(SOURCES)].
SOURCES = [
    "large/lomiri/Kleiber_by_Lukas_Baubkus.jpg",          # 6028×3391 photo, JPEG 4:2:2
    "large/plasma/Flow/contents/images_dark/5120x2880.jpg",  # 5120×2880 JPEG 4:2:0
    "large/plasma/Volna/contents/images/5120x2880.jpg",    # 5120×2880 progressive JPEG 4:4:4
    "large/plasma/MilkyWay/contents/images/5120x2880.png",  # 5120×2880 PNG
    "large/libwebp-test-data/bryce.webp",                  # 11158×2156 WebP photo
]

FORMATS = {
    # extension: saver keyword arguments (metadata dropped everywhere: keep="none")
    "jpg": dict(Q=90, subsample_mode="on", keep="none"),   # libvips would keep 4:4:4 at Q ≥ 90 unless told
    "png": dict(compression=6, keep="none"),
    "webp": dict(Q=90, keep="none"),
    "avif": dict(Q=80, compression="av1", keep="none"),
}


def crop_box(tag, index, width, height, src_w, src_h):
    """A seeded crop of src with the aspect of width×height, 1× to the largest scale the source allows."""
    rng = random.Random(f"{tag}-{index}")
    k_max = min(src_w / width, src_h / height)
    k = 1.0 + (k_max - 1.0) * rng.random()
    cw, ch = min(src_w, round(width * k)), min(src_h, round(height * k))
    left = rng.randint(0, src_w - cw)
    top = rng.randint(0, src_h - ch)
    return left, top, cw, ch


def render(src, box, width, height):
    left, top, cw, ch = box
    region = src.crop(left, top, cw, ch)
    if (cw, ch) != (width, height):
        region = region.resize(width / cw, vscale=height / ch, kernel="lanczos3")
    if (region.width, region.height) != (width, height):  # a rounding pixel
        region = region.gravity("centre", width, height, extend="copy")
    if region.bands > 3:
        region = region.flatten(background=[255, 255, 255])
    return region.cast("uchar").copy_memory()


def save(image, path, ext):
    tmp = f"{path}.tmp{os.getpid()}"
    data = {
        "jpg": lambda: image.jpegsave_buffer(**FORMATS["jpg"]),
        "png": lambda: image.pngsave_buffer(**FORMATS["png"]),
        "webp": lambda: image.webpsave_buffer(**FORMATS["webp"]),
        "avif": lambda: image.heifsave_buffer(**FORMATS["avif"]),
    }[ext]()
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return len(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--photos", type=int, default=300, help="count of 1600×1200 JPEGs (default 300)")
    ap.add_argument("--div2k", type=int, default=20, help="count of 2040×1356 crops per format (default 20)")
    ap.add_argument("--runtime", default=os.environ.get("WEBIMAGE_NGINX_RUNTIME", "/tmp/webimage-bench-nginx"))
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    args = ap.parse_args()

    root = os.path.join(args.runtime, "serving")
    jobs = []  # (source index, tag, index, width, height, [(ext, path)])
    photos = os.path.join(root, "photos")
    os.makedirs(photos, exist_ok=True)
    for i in range(args.photos):
        path = os.path.join(photos, f"{i}.jpg")
        if not os.path.exists(path):
            jobs.append((i % len(SOURCES), "photos", i, 1600, 1200, [("jpg", path)]))
    for ext in FORMATS:
        os.makedirs(os.path.join(root, "div2k", ext), exist_ok=True)
    for i in range(args.div2k):
        todo = [(ext, os.path.join(root, "div2k", ext, f"{i}.{ext}")) for ext in FORMATS]
        todo = [(ext, p) for ext, p in todo if not os.path.exists(p)]
        if todo:
            jobs.append((i % len(SOURCES), "div2k", i, 2040, 1356, todo))

    start = time.monotonic()
    written = 0
    # Source by source, so one decoded source (up to 72 MB) is in memory at a time.
    for s, rel in enumerate(SOURCES):
        mine = [j for j in jobs if j[0] == s]
        if not mine:
            continue
        path = os.path.join(args.corpus, rel)
        if not os.path.exists(path):
            sys.exit(f"missing corpus file {path} (is the corpus at {args.corpus}? --corpus DIR)")
        src = pyvips.Image.new_from_file(path, access="random").autorot().colourspace("srgb").copy_memory()
        for _, tag, i, w, h, outputs in mine:
            image = render(src, crop_box(tag, i, w, h, src.width, src.height), w, h)
            for ext, out in outputs:
                save(image, out, ext)
                written += 1
        del src
    total = args.photos + 4 * args.div2k
    print(f"{root}: wrote {written} files, {total - written} already present, "
          f"{time.monotonic() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
