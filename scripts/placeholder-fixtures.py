#!/usr/bin/env python3
"""Prints the reference BlurHash and ThumbHash values of the placeholder tests' generated edge-case images.

    PY=$(scripts/placeholder-venv.sh | tail -n 1)
    THUMBHASH_JS=/path/to/evanw/thumbhash/js/thumbhash.js "$PY" scripts/placeholder-fixtures.py [--json]

Pixels are straight-alpha RGBA8, rows top to bottom; x is the column, y the row. For each image:

  - BlurHash with 4x3, 1x1, 9x9 and 5x2 components (x by y), from woltapp's C encoder (blurhash-python) given
    the image flattened over white, per channel out = (c*a + 255*(255-a) + 127) // 255;
  - the 4x3 hash decoded by woltapp's C decoder at 32x32, punch 1, 3 channels: the SHA-256 of its RGB bytes;
  - ThumbHash: evanw's rgbaToThumbHash(w, h, rgba) on the straight RGBA (no resizing), as standard base64 and
    hex; its thumbHashToAverageRGBA, thumbHashToApproximateAspectRatio, and thumbHashToRGBA (w, h, SHA-256 of
    the RGBA bytes), all from evanw's js/thumbhash.js run with node ($THUMBHASH_JS; see placeholder_ref.py).

Output: one Swift-literal-shaped block per image; --json prints the same as one JSON object.
"""
import argparse
import base64
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import placeholder_ref as ref  # noqa: E402

BLURHASH_COMPONENTS = [(4, 3), (1, 1), (9, 9), (5, 2)]


def image(width, height, pixel):
    data = bytearray()
    for y in range(height):
        for x in range(width):
            data += bytes(pixel(x, y))
    return width, height, bytes(data)


def fixtures():
    """(letter, name, width, height, rgba) of the eight edge cases."""
    return [
        ("A", "one", *image(1, 1, lambda x, y: (200, 100, 50, 255))),
        ("B", "column", *image(1, 7, lambda x, y: (y * 36, 255 - y * 36, 128, 255))),
        ("C", "row", *image(7, 1, lambda x, y: (x * 36, 255 - x * 36, 128, 255))),
        ("D", "transparent", *image(32, 32, lambda x, y: (0, 0, 0, 0))),
        ("E", "alphaGradient", *image(16, 16, lambda x, y: (255, y * 17, 0, x * 17))),
        ("F", "gray", *image(20, 10, lambda x, y: ((x * 13 + y * 7) % 256,) * 3 + (255,))),
        ("G", "colourful", *image(64, 48, lambda x, y: (x * 4, y * 5, ((x + y) * 2) % 256, 255))),
        ("H", "tall", *image(3, 100, lambda x, y: ((y * 5) % 256, 40, (x * 100) % 256, 255 if y < 50 else 128))),
    ]


def expected(width, height, rgba, thumbhash):
    rgb = ref.flatten_over_white(rgba)
    result = {
        "width": width, "height": height,
        "rgba_sha256": ref.sha256(rgba),
        "flattened_rgb_sha256": ref.sha256(rgb),
        "blurhash": {f"{x}x{y}": ref.blurhash_encode(width, height, rgb, x, y) for x, y in BLURHASH_COMPONENTS},
    }
    result["blurhash_4x3_decoded_32x32_punch1_rgb_sha256"] = ref.sha256(ref.blurhash_decode_rgb(result["blurhash"]["4x3"]))
    hash_bytes = thumbhash.encode(width, height, rgba)
    decoded = thumbhash.decode(hash_bytes)
    result["thumbhash_base64"] = base64.b64encode(hash_bytes).decode()
    result["thumbhash_hex"] = hash_bytes.hex()
    result["thumbhash_average_rgba"] = list(decoded["average"])
    result["thumbhash_approximate_aspect_ratio"] = decoded["ratio"]
    result["thumbhash_decoded"] = {"width": decoded["w"], "height": decoded["h"], "rgba_sha256": ref.sha256(decoded["rgba"])}
    # Diagnostic only: the PyPI port, which is not the reference (installed by placeholder-venv.sh
    # --with-thumbhash-python only).
    try:
        python_port = ref.ThumbHashPython().encode(width, height, rgba)
        result["thumbhash_python_port_base64"] = base64.b64encode(python_port).decode()
    except Exception as error:  # noqa: BLE001
        result["thumbhash_python_port_base64"] = f"error: {error}"
    return result


def swift_double(value):
    text = repr(float(value))
    return text if ("." in text or "e" in text or "inf" in text or "nan" in text) else text + ".0"


def print_block(letter, name, r):
    print(f"// {letter} \"{name}\": {r['width']}x{r['height']}")
    print("PlaceholderFixture(")
    print(f"    name: \"{name}\", width: {r['width']}, height: {r['height']},")
    print(f"    rgbaSHA256: \"{r['rgba_sha256']}\",")
    print(f"    flattenedRGBSHA256: \"{r['flattened_rgb_sha256']}\",")
    for key in ("4x3", "1x1", "9x9", "5x2"):
        print(f"    blurHash{key}: \"{r['blurhash'][key]}\",")
    print(f"    blurHash4x3Decoded32x32RGBSHA256: \"{r['blurhash_4x3_decoded_32x32_punch1_rgb_sha256']}\",")
    print(f"    thumbHashBase64: \"{r['thumbhash_base64']}\",")
    print(f"    thumbHashHex: \"{r['thumbhash_hex']}\",")
    red, green, blue, alpha = (swift_double(v) for v in r["thumbhash_average_rgba"])
    print(f"    thumbHashAverageRGBA: (r: {red}, g: {green}, b: {blue}, a: {alpha}),")
    print(f"    thumbHashApproximateAspectRatio: {swift_double(r['thumbhash_approximate_aspect_ratio'])},")
    d = r["thumbhash_decoded"]
    print(f"    thumbHashDecoded: (width: {d['width']}, height: {d['height']}, rgbaSHA256: \"{d['rgba_sha256']}\")")
    print(")")
    port = r["thumbhash_python_port_base64"]
    if port.startswith("error: "):   # not installed unless the venv was made with --with-thumbhash-python
        print(f"// thumbhash-python (not the reference): not run ({port[len('error: '):]})")
    else:
        same = "same" if port == r["thumbhash_base64"] else "DIFFERS"
        print(f"// thumbhash-python (not the reference): {port} ({same})")
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    options = parser.parse_args()
    try:
        thumbhash = ref.ThumbHashJS()
    except FileNotFoundError as error:
        sys.exit(f"placeholder-fixtures: {error}")
    with thumbhash:
        results = [(letter, name, expected(w, h, rgba, thumbhash)) for letter, name, w, h, rgba in fixtures()]
    if options.json:
        print(json.dumps({name: r for _, name, r in results}, indent=2))
        return
    print("// Generated by scripts/placeholder-fixtures.py. References: BlurHash = woltapp's C encoder/decoder")
    print("// (blurhash-python), on the pixels flattened over white, (c*a + 255*(255-a) + 127) / 255;")
    print(f"// ThumbHash = evanw's js/thumbhash.js under node ({os.path.basename(thumbhash.path)}), on the straight RGBA.")
    print()
    for letter, name, r in results:
        print_block(letter, name, r)


if __name__ == "__main__":
    main()
