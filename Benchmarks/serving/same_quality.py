#!/usr/bin/env python3
"""Bytes and SSIM at the same quality number: `webimage serve` against libvips saving as imgproxy saves.

    $WEBIMAGE_BENCH_VENV/bin/python Benchmarks/serving/same_quality.py --webimage .build/release/webimage \
        --sources /tmp/webimage-bench-nginx/serving/div2k/png --count 10

Two runs per format. `encoder`: each source (a DIV2K-sized PNG) is fitted into 512×512 by libvips
(thumbnail, never enlarged) and written as a PNG, so both encoders get exactly those pixels and only
the encoders differ; `webimage serve` (started here, with imgproxy's defaults and
IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES=1, the PNGs served over loopback) answers
`/insecure/q:<Q>/plain/<png>@<format>`. `resize+encoder`: the full-size source is asked for with
`rs:fit:512:512`, against libvips' `thumbnail` of it (imgproxy's resize), each compared with a
Lanczos-3 resize of the source (no pre-shrink) to the output's size. libvips encodes with imgproxy's
save settings (vips/vips.c): JPEG Q (baseline,
optimize_coding off: imgproxy's defaults), WebP Q effort 4, AVIF Q through libheif/aom with effort
9 − IMGPROXY_AVIF_SPEED (9: effort 0). Q is imgproxy's per-format default: JPEG 80, WebP 79, AVIF 63.

SSIM is Wang et al.'s (11×11 Gaussian window, σ 1.5, K1 0.01, K2 0.03) on BT.601 luma of the decoded
output against the unencoded pixels (everything decoded with libvips). Prints a table and one JSON
line per format: bytes of each (mean), their ratio, mean SSIM of each and the difference.
"""
import argparse
import glob
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import urllib.request

import numpy as np
import pyvips

QUALITY = {"jpeg": 80, "webp": 79, "avif": 63}


def vips_save(image, fmt, quality):
    if fmt == "jpeg":
        return image.jpegsave_buffer(Q=quality, keep="none")
    if fmt == "webp":
        return image.webpsave_buffer(Q=quality, effort=4, keep="none")
    return image.heifsave_buffer(Q=quality, compression="av1", effort=0, keep="none")


def luma(data):
    image = pyvips.Image.new_from_buffer(data, "")
    if image.hasalpha():
        image = image.flatten(background=[255, 255, 255])
    if image.interpretation != "srgb":
        image = image.colourspace("srgb")
    array = np.ndarray(buffer=image.write_to_memory(), dtype=np.uint8, shape=(image.height, image.width, image.bands))
    rgb = array[:, :, :3].astype(np.float64)
    return 0.299 * rgb[:, :, 0] + 0.587 * rgb[:, :, 1] + 0.114 * rgb[:, :, 2]


def gaussian_filter(plane, kernel):
    padded = np.pad(plane, len(kernel) // 2, mode="reflect")
    rows = np.apply_along_axis(lambda r: np.convolve(r, kernel, mode="valid"), 1, padded)
    return np.apply_along_axis(lambda c: np.convolve(c, kernel, mode="valid"), 0, rows)


def ssim(a, b):
    x = np.arange(11) - 5
    kernel = np.exp(-(x ** 2) / (2 * 1.5 ** 2))
    kernel /= kernel.sum()
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    mu_a, mu_b = gaussian_filter(a, kernel), gaussian_filter(b, kernel)
    var_a = gaussian_filter(a * a, kernel) - mu_a ** 2
    var_b = gaussian_filter(b * b, kernel) - mu_b ** 2
    cov = gaussian_filter(a * b, kernel) - mu_a * mu_b
    value = ((2 * mu_a * mu_b + c1) * (2 * cov + c2)) / ((mu_a ** 2 + mu_b ** 2 + c1) * (var_a + var_b + c2))
    return float(value.mean())


def serve_directory(directory):
    handler = lambda *args: http.server.SimpleHTTPRequestHandler(*args, directory=directory)  # noqa: E731
    http.server.SimpleHTTPRequestHandler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_webimage(binary, cache):
    environment = dict(os.environ, IMGPROXY_BIND="127.0.0.1:0", IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES="1")
    process = subprocess.Popen([binary, "serve", "--cache-dir", cache], env=environment,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in process.stdout:
        match = re.match(r"listening on (http://\S+)", line)
        if match:
            return process, match.group(1)
    raise SystemExit("webimage serve did not start")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webimage", required=True)
    ap.add_argument("--sources", required=True, help="a directory of PNG sources")
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--formats", default="jpeg,webp,avif")
    args = ap.parse_args()
    sources = sorted(glob.glob(os.path.join(args.sources, "*.png")))[: args.count]
    if not sources:
        raise SystemExit(f"no PNG in {args.sources}")
    work = tempfile.mkdtemp(prefix="same-quality-")
    os.makedirs(os.path.join(work, "full"))
    for index, path in enumerate(sources):
        pyvips.Image.thumbnail(path, 512, height=512).pngsave(os.path.join(work, f"{index}.png"), compression=1)
        os.symlink(os.path.abspath(path), os.path.join(work, "full", f"{index}.png"))
    files = serve_directory(work)
    origin = f"http://127.0.0.1:{files.server_address[1]}"
    process, base = start_webimage(args.webimage, os.path.join(work, "cache"))
    print(f"libvips {pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)}, {len(sources)} sources fitted into 512x512", file=sys.stderr)
    print(f"{'format':6} {'what differs':15} {'Q':>3} {'webimage B':>11} {'libvips B':>10} {'ratio':>6} {'SSIM ours':>10} {'SSIM vips':>10} {'diff':>8}")
    try:
        for fmt in args.formats.split(","):
            quality = QUALITY[fmt]
            for mode in ("encoder", "resize+encoder"):
                ours_bytes, vips_bytes, ours_ssim, vips_ssim = [], [], [], []
                for index in range(len(sources)):
                    if mode == "encoder":
                        reference_png = open(os.path.join(work, f"{index}.png"), "rb").read()
                        url = f"{base}/insecure/q:{quality}/plain/{origin}/{index}.png@{fmt}"
                        fitted = pyvips.Image.new_from_buffer(reference_png, "")
                    else:
                        url = f"{base}/insecure/rs:fit:512:512/q:{quality}/plain/{origin}/full/{index}.png@{fmt}"
                        fitted = pyvips.Image.thumbnail(sources[index], 512, height=512)
                    with urllib.request.urlopen(url, timeout=120) as response:
                        ours = response.read()
                    theirs = vips_save(fitted, fmt, quality)
                    if mode == "encoder":
                        reference = luma(reference_png)
                    else:
                        full = pyvips.Image.new_from_file(sources[index])
                        scale = fitted.width / full.width
                        exact = full.resize(scale, vscale=fitted.height / full.height, kernel="lanczos3", gap=0)
                        reference = luma(exact.pngsave_buffer(compression=1))
                    ours_bytes.append(len(ours))
                    vips_bytes.append(len(theirs))
                    ours_ssim.append(ssim(reference, luma(ours)))
                    vips_ssim.append(ssim(reference, luma(theirs)))
                row = {
                    "format": fmt, "mode": mode, "quality": quality, "files": len(sources),
                    "webimage_mean_bytes": round(float(np.mean(ours_bytes))), "libvips_mean_bytes": round(float(np.mean(vips_bytes))),
                    "bytes_ratio": round(float(np.sum(ours_bytes) / np.sum(vips_bytes)), 3),
                    "webimage_ssim": round(float(np.mean(ours_ssim)), 4), "libvips_ssim": round(float(np.mean(vips_ssim)), 4),
                }
                row["ssim_diff"] = round(row["webimage_ssim"] - row["libvips_ssim"], 4)
                print(f"{fmt:6} {mode:15} {quality:>3} {row['webimage_mean_bytes']:>11} {row['libvips_mean_bytes']:>10} {row['bytes_ratio']:>6} "
                      f"{row['webimage_ssim']:>10} {row['libvips_ssim']:>10} {row['ssim_diff']:>8}")
                print(json.dumps(row), file=sys.stderr)
    finally:
        process.terminate()
        process.wait()
        files.shutdown()


if __name__ == "__main__":
    main()
