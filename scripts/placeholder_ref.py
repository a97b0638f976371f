"""The reference BlurHash and ThumbHash encoders, as used by placeholder-fixtures.py and placeholder-check.py.

Run inside the virtual environment that scripts/placeholder-venv.sh makes (blurhash-python and Pillow, pinned;
thumbhash-python only with --with-thumbhash-python). What each reference is:

  BlurHash   blurhash-python (PyPI), whose C extension is woltapp/blurhash's C encoder and decoder
             (`blurHashForPixels`, `decodeToArray`), built with cffi and linked against the system libm
             (cosf, powf). Its `encode` takes a PIL image and converts it with `Image.convert("RGB")`, which
             DROPS alpha rather than flattening it: so the flattening over white is done here, before.
  ThumbHash  evanw/thumbhash's JavaScript (`js/thumbhash.js`), run with node. It is not in this repository:
             the path comes from $THUMBHASH_JS (default: $TMPDIR/evanw-thumbhash/thumbhash.js, where a
             session put the copy it fetched). thumbhash-python (PyPI) is NOT byte-identical to it: Python's
             round() rounds halves to even where Math.round rounds them up, and glibc's cos differs from
             V8's Math.cos (fdlibm) in the last bit for about 3 % of the DCT arguments. It stays available as
             `ThumbHashPython` (placeholder-check.py --thumbhash-ref python, and placeholder-fixtures.py's
             diagnostic line), with that caveat, when the venv was made with --with-thumbhash-python. A
             machine without the JavaScript (CI) uses instead the values the JavaScript computed, stored in
             scripts/placeholder-expected.tsv with the SHA-256 of the pixels they were computed from
             (placeholder-check.py --write-expected / --expected).

Each reference has a `name` that says which one it is and which version: placeholder-check.py prints it
in its summary and stores it beside the values it writes.
"""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import tempfile

from PIL import Image

import blurhash

# The git blob id of evanw/thumbhash's js/thumbhash.js -> the newest commit of that repository with that content, so
# that a reference name says which version ran. (The file has not changed since the repository's first commit,
# d2e50a7; a652ce6 was its newest commit when the copy in use was fetched.) Another content is named by its blob id.
KNOWN_THUMBHASH_JS = {
    "369b118ec2299b51af01541e141635e02579edaa": "a652ce6",
}


def package_version(name):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:  # noqa: BLE001
        return "unknown version"


def blurhash_reference_name():
    return f"woltapp/blurhash C via blurhash-python {package_version('blurhash-python')}"


def git_blob_id(data):
    """What `git hash-object` prints for a file with these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def default_thumbhash_js():
    return os.environ.get("THUMBHASH_JS") or os.path.join(tempfile.gettempdir(), "evanw-thumbhash", "thumbhash.js")


def flatten_over_white(rgba):
    """Straight-alpha RGBA8 bytes -> RGB8 bytes over white: (c*a + 255*(255-a) + 127) // 255 per channel."""
    out = bytearray(len(rgba) // 4 * 3)
    j = 0
    for i in range(0, len(rgba), 4):
        a = rgba[i + 3]
        if a == 255:
            out[j:j + 3] = rgba[i:i + 3]
        else:
            back = 255 * (255 - a) + 127
            out[j] = (rgba[i] * a + back) // 255
            out[j + 1] = (rgba[i + 1] * a + back) // 255
            out[j + 2] = (rgba[i + 2] * a + back) // 255
        j += 3
    return bytes(out)


def blurhash_encode(width, height, rgb, x_components, y_components):
    """woltapp's blurHashForPixels on tightly packed RGB8 rows (top row first)."""
    if len(rgb) != width * height * 3:
        raise ValueError(f"{len(rgb)} bytes for {width}x{height} RGB")
    image = Image.frombytes("RGB", (width, height), bytes(rgb))
    return blurhash.encode(image, x_components=x_components, y_components=y_components)


def blurhash_decode_rgb(hash_string, width=32, height=32, punch=1):
    """woltapp's decodeToArray with 3 channels: the RGB8 bytes."""
    return blurhash.decode(hash_string, width, height, punch=punch, mode=blurhash.PixelMode.RGB).tobytes()


def sha256(data):
    return hashlib.sha256(bytes(data)).hexdigest()


# The node side of ThumbHashJS: one JSON request per line on stdin, one JSON answer per line on stdout.
_NODE_DRIVER = r"""
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
const source = readFileSync(process.env.THUMBHASH_JS, 'utf8')
const th = await import('data:text/javascript;base64,' + Buffer.from(source).toString('base64'))
const b64 = bytes => Buffer.from(bytes).toString('base64')
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (!line) continue
  let answer
  try {
    const request = JSON.parse(line)
    if (request.op === 'encode') {
      answer = { hash: b64(th.rgbaToThumbHash(request.w, request.h, Buffer.from(request.rgba, 'base64'))) }
    } else if (request.op === 'decode') {
      const hash = Buffer.from(request.hash, 'base64')
      const image = th.thumbHashToRGBA(hash)
      answer = { average: th.thumbHashToAverageRGBA(hash), ratio: th.thumbHashToApproximateAspectRatio(hash),
                 w: image.w, h: image.h, rgba: b64(image.rgba) }
    } else {
      answer = { error: 'unknown op ' + request.op }
    }
  } catch (e) {
    answer = { error: String(e && e.message || e) }
  }
  process.stdout.write(JSON.stringify(answer) + '\n')
}
"""


class ThumbHashJS:
    """evanw's js/thumbhash.js in one long-lived node process.

    Its name says which js/thumbhash.js (the evanw/thumbhash commit, or the git blob id of an unknown
    content) under which node, e.g. "evanw/thumbhash js/thumbhash.js a652ce6 (node 20.20.2)"."""

    def __init__(self, path=None, node=None):
        self.path = os.path.abspath(path or default_thumbhash_js())
        if not os.path.isfile(self.path):
            raise FileNotFoundError(
                f"no ThumbHash reference at {self.path}: set THUMBHASH_JS to a copy of evanw/thumbhash's "
                "js/thumbhash.js (it is not part of this repository)")
        node = node or shutil.which("node") or shutil.which("nodejs")
        if not node:
            raise FileNotFoundError("node is not installed (apt-get install nodejs)")
        with open(self.path, "rb") as f:
            blob = git_blob_id(f.read())
        version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip().lstrip("v")
        self.name = (f"evanw/thumbhash js/thumbhash.js {KNOWN_THUMBHASH_JS.get(blob, 'blob ' + blob[:12])} "
                     f"(node {version or 'unknown version'})")
        self.process = subprocess.Popen(
            [node, "--input-type=module", "-e", _NODE_DRIVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, bufsize=1, env=dict(os.environ, THUMBHASH_JS=self.path))

    def _ask(self, request):
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"node ended (exit status {self.process.wait()})")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError("thumbhash.js: " + answer["error"])
        return answer

    def encode(self, width, height, rgba):
        """rgbaToThumbHash(w, h, rgba) on straight RGBA8, no resizing: the hash bytes."""
        if len(rgba) != width * height * 4:
            raise ValueError(f"{len(rgba)} bytes for {width}x{height} RGBA")
        answer = self._ask({"op": "encode", "w": width, "h": height, "rgba": base64.b64encode(bytes(rgba)).decode()})
        return base64.b64decode(answer["hash"])

    def decode(self, hash_bytes):
        """thumbHashToAverageRGBA, thumbHashToApproximateAspectRatio and thumbHashToRGBA of one hash."""
        answer = self._ask({"op": "decode", "hash": base64.b64encode(bytes(hash_bytes)).decode()})
        average = answer["average"]
        return {
            "average": (float(average["r"]), float(average["g"]), float(average["b"]), float(average["a"])),
            "ratio": float(answer["ratio"]),
            "w": answer["w"], "h": answer["h"], "rgba": base64.b64decode(answer["rgba"]),
        }

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class ThumbHashPython:
    """thumbhash-python's rgba_to_thumbhash (the low-level call: no EXIF transpose, no thumbnail()).

    Not byte-identical to evanw's JavaScript (see the module docstring); only a fallback."""

    def __init__(self):
        try:
            from thumbhash.encode import rgba_to_thumbhash
        except ImportError as error:
            raise FileNotFoundError(f"thumbhash-python is not installed ({error}): make the venv with "
                                    "scripts/placeholder-venv.sh --with-thumbhash-python") from None
        self._encode = rgba_to_thumbhash
        self.name = (f"thumbhash-python {package_version('thumbhash-python')} rgba_to_thumbhash "
                     "(NOT identical to evanw's JS)")

    def encode(self, width, height, rgba):
        return bytes(self._encode(width, height, list(bytes(rgba))))

    def decode(self, hash_bytes):
        raise NotImplementedError("use the JavaScript reference for decoding")

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def thumbhash_reference(kind="js"):
    return ThumbHashJS() if kind == "js" else ThumbHashPython()
