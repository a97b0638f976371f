#!/usr/bin/env python3
"""The references of `bench placeholders`: BlurHash and ThumbHash of one photo, decode included, the way a
team computes them today, timed in one process (median of --iterations runs after one warm-up).

  blurhash_with_decode   Pillow opens the JPEG, Image.thumbnail((100, 100)) (DCT-scaled decode, then a
                         resample), then woltapp's C encoder (blurhash-python) with 4x3 components
  thumbhash_with_decode  the same decode, then thumbhash-python's rgba_to_thumbhash (the Python port of evanw's
                         reference; evanw's own JavaScript has no decoder to pair with)
  blurhash_encode_only   woltapp's C encoder on the 100-pixel RGB image alone
  thumbhash_js_encode_only  evanw's JavaScript rgbaToThumbHash on the 100-pixel RGBA image alone, timed inside
                         node (only when $THUMBHASH_JS names a copy of js/thumbhash.js; not in this repository)

Prints one JSON object of medians in milliseconds. Run in the venv of scripts/placeholder-venv.sh:
  $PY Benchmarks/placeholders/reference_bench.py --photo PHOTO.jpg [--iterations 15]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from PIL import Image
import blurhash
from thumbhash.encode import rgba_to_thumbhash


def median_ms(fn, iterations):
    fn()
    samples = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def small(photo):
    image = Image.open(photo)
    image.thumbnail((100, 100))
    return image


NODE_TIMER = r"""
import { readFileSync } from 'node:fs'
const source = readFileSync(process.env.THUMBHASH_JS, 'utf8')
const th = await import('data:text/javascript;base64,' + Buffer.from(source).toString('base64'))
const { w, h, file, iterations } = JSON.parse(process.argv[2])
const rgba = new Uint8Array(readFileSync(file))
th.rgbaToThumbHash(w, h, rgba)
const samples = []
for (let i = 0; i < iterations; i++) {
  const start = process.hrtime.bigint()
  th.rgbaToThumbHash(w, h, rgba)
  samples.push(Number(process.hrtime.bigint() - start) / 1e6)
}
samples.sort((a, b) => a - b)
console.log(JSON.stringify({ median: samples[Math.floor(samples.length / 2)] }))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--photo", required=True)
    parser.add_argument("--iterations", type=int, default=15)
    args = parser.parse_args()

    result = {
        "blurhash_with_decode": median_ms(lambda: blurhash.encode(small(args.photo).convert("RGB"), 4, 3), args.iterations),
        "thumbhash_with_decode": median_ms(
            lambda: (lambda im: rgba_to_thumbhash(im.width, im.height, im.tobytes()))(small(args.photo).convert("RGBA")),
            args.iterations),
    }
    rgb = small(args.photo).convert("RGB")
    result["small_size"] = [rgb.width, rgb.height]
    result["blurhash_encode_only"] = median_ms(lambda: blurhash.encode(rgb.copy(), 4, 3), args.iterations)
    script = os.environ.get("THUMBHASH_JS")
    node = shutil.which("node")
    if script and os.path.exists(script) and node:
        rgba = small(args.photo).convert("RGBA")
        with tempfile.TemporaryDirectory() as folder:
            pixels = os.path.join(folder, "rgba")
            with open(pixels, "wb") as f:
                f.write(rgba.tobytes())
            timer = os.path.join(folder, "timer.mjs")
            with open(timer, "w") as f:
                f.write(NODE_TIMER)
            out = subprocess.run([node, timer, json.dumps({"w": rgba.width, "h": rgba.height, "file": pixels,
                                                           "iterations": args.iterations})],
                                 capture_output=True, text=True, check=True, env=dict(os.environ))
            result["thumbhash_js_encode_only"] = json.loads(out.stdout)["median"]
    print(json.dumps(result))


if __name__ == "__main__":
    sys.exit(main())
