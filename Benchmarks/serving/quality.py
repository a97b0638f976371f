#!/usr/bin/env python3
"""PSNR of resized outputs against a full-quality resize of their sources.

    $WEBIMAGE_BENCH_VENV/bin/python Benchmarks/serving/quality.py --sources SRC --outputs DIR

Every file <i>.<ext> in --outputs (jpg, jpeg, png, webp or avif) is compared with source i: a directory
holding <i>.<anything>, or an http:// prefix to which <i>.<source-ext> is appended (--source-ext, by default
the output's own extension). --modulo N compares output i with source i mod N (vips_reference.py cycles
over 20 sources). The reference is source i decoded at full size (no shrink-on-load), converted to sRGB,
flattened on white if it has alpha, and resized with libvips' Lanczos-3 reduce in one step (gap 0: no
box pre-shrink) to exactly the output's width and height, rounded to 8 bits. The PSNR is over the R, G
and B samples (peak 255); files equal to their reference count as 100 dB. Everything is decoded with
libvips, AVIF included. Prints one JSON line:
{"mean_psnr_db", "mean_bytes", "files", "min_psnr_db", "mean_pixels"}.
"""
import argparse
import glob
import json
import math
import os
import re
import sys
import urllib.error
import urllib.request

import numpy as np
import pyvips

OUTPUT_EXTS = ("jpg", "jpeg", "png", "webp", "avif")
PSNR_CAP = 100.0


def to_rgb8(image):
    if image.interpretation not in ("srgb", "b-w") or image.format != "uchar":
        image = image.colourspace("srgb")
    if image.hasalpha():
        image = image.flatten(background=[255, 255, 255] if image.bands > 2 else [255])
    if image.bands == 1:
        image = image.bandjoin([image, image])
    if image.format != "uchar":
        image = image.cast("uchar")
    return image


def pixels(image):
    array = np.ndarray(buffer=image.write_to_memory(), dtype=np.uint8,
                       shape=(image.height, image.width, image.bands))
    return array.astype(np.float64)


def load_source(sources, index, ext, source_ext):
    if re.match(r"https?://", sources):
        prefix = sources if sources.endswith("/") else sources + "/"
        url = f"{prefix}{index}.{source_ext or ext}"
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                return response.read(), url
        except urllib.error.URLError as error:
            raise SystemExit(f"{url}: {error}")
    pattern = os.path.join(sources, f"{index}.{source_ext}" if source_ext else f"{index}.*")
    matches = [m for m in glob.glob(pattern) if not m.endswith(".tmp")]
    if len(matches) != 1:
        raise SystemExit(f"source {index}: {len(matches)} files match {pattern} (--source-ext picks one)")
    with open(matches[0], "rb") as f:
        return f.read(), matches[0]


def reference(source_bytes, width, height):
    # Full decode ("" options: no shrink-on-load), then one Lanczos-3 reduce to exactly width×height.
    image = to_rgb8(pyvips.Image.new_from_buffer(source_bytes, "", access="sequential").autorot())
    if (image.width, image.height) != (width, height):
        image = image.resize(width / image.width, vscale=height / image.height, kernel="lanczos3", gap=0)
        if (image.width, image.height) != (width, height):  # a rounding pixel
            image = image.gravity("centre", width, height, extend="copy")
    return image


def psnr(a, b):
    mse = float(np.mean((a - b) ** 2))
    return PSNR_CAP if mse == 0 else min(PSNR_CAP, 10 * math.log10(255.0 ** 2 / mse))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sources", required=True, help="a directory of <i>.<ext> or an http:// URL prefix")
    ap.add_argument("--outputs", required=True, help="a directory of <i>.<ext> outputs")
    ap.add_argument("--source-ext", help="the sources' extension (default: any in a directory; the output's "
                                         "extension for a URL prefix)")
    ap.add_argument("--modulo", type=int, help="output i is compared with source i mod N")
    ap.add_argument("--limit", type=int, help="only the first N outputs (by index)")
    ap.add_argument("--per-file", action="store_true", help="also print one line per file on stderr")
    args = ap.parse_args()

    outputs = []
    for path in glob.glob(os.path.join(args.outputs, "*")):
        m = re.fullmatch(r"(\d+)\.([a-z]+)", os.path.basename(path))
        if m and m.group(2) in OUTPUT_EXTS:
            outputs.append((int(m.group(1)), m.group(2), path))
    outputs.sort()
    if args.limit:
        outputs = outputs[:args.limit]
    if not outputs:
        raise SystemExit(f"no <i>.<{'|'.join(OUTPUT_EXTS)}> files in {args.outputs}")

    scores, sizes, areas = [], [], []
    for index, ext, path in outputs:
        with open(path, "rb") as f:
            data = f.read()
        out = to_rgb8(pyvips.Image.new_from_buffer(data, ""))
        source_index = index % args.modulo if args.modulo else index
        source_bytes, source_name = load_source(args.sources, source_index, ext, args.source_ext)
        ref = reference(source_bytes, out.width, out.height)
        score = psnr(pixels(out), pixels(ref))
        scores.append(score)
        sizes.append(len(data))
        areas.append(out.width * out.height)
        if args.per_file:
            print(f"{path}: {out.width}x{out.height} {len(data)} B {score:.3f} dB vs {source_name}",
                  file=sys.stderr)

    print(json.dumps({
        "mean_psnr_db": round(sum(scores) / len(scores), 4),
        "mean_bytes": round(sum(sizes) / len(sizes), 1),
        "files": len(scores),
        "min_psnr_db": round(min(scores), 4),
        "mean_pixels": round(sum(areas) / len(areas)),
    }), flush=True)


if __name__ == "__main__":
    main()
