#!/usr/bin/env python3
"""Checks WebImage's BlurHash and ThumbHash on the team's image corpus against the reference encoders.

    PY=$(scripts/placeholder-venv.sh | tail -n 1)
    THUMBHASH_JS=/path/to/evanw/thumbhash/js/thumbhash.js \\
        "$PY" scripts/placeholder-check.py [--tool PATH] [--corpus DIR] [--jobs N] [--batch N] [FORMAT ...]
    "$PY" scripts/placeholder-check.py --self-test

--tool defaults to .build/release/webimage and --corpus to ../shared/corpus, both beside the package root;
FORMAT is any of PNG JPEG GIF WEBP AVIF HEIF (default: all). The files: every row of MANIFEST.tsv with
valid = yes in those formats that is a still image, i.e. not listed in FRAMES.tsv (which has a row per frame
of every valid animated file); --include-animated adds the animated ones (their placeholder is whatever the
tool makes of them, its first frame). The big files under large/ are included.

The tool is run as `webimage info --json --placeholder-pixels DIR FILE...`, --batch files (default 50) per
process, --jobs processes at once (default 2), in the corpus folder with the manifest's relative paths. Each
output line is a JSON object with "file" (the input as given), "blurhash" (4x3 components), "thumbhash"
(standard base64 with padding), "blurhash_pixels" and "thumbhash_pixels" (PNG files in DIR: 8-bit RGB,
already flattened, for BlurHash; 8-bit RGBA, straight alpha, for ThumbHash), or "error". For each file:

  - the tool answered, without "error" (files corpus-check.py expects refused, such as the 12-bit JPEG,
    may answer with an error);
  - each PNG is 8-bit RGB / RGBA as said (read from its IHDR), at most 100x100, and its size fits the
    upright image's (MANIFEST.tsv's oriented_width/height where given, else width/height): the long side
    is min(100, long side) and the short side within 1 of the scaled short side;
  - woltapp's C encoder (blurhash-python) on the RGB PNG's pixels gives the tool's "blurhash", and evanw's
    rgbaToThumbHash (js/thumbhash.js under node, $THUMBHASH_JS) on the RGBA PNG's pixels, unresized, gives
    the tool's "thumbhash", exactly.

It also notes (without failing) where the two PNGs have the same size but the RGB one is not the RGBA one
flattened over white with (c*a + 255*(255-a) + 127) // 255. One line per mismatch, then
`placeholder-check: N files, M mismatches` (M counts mismatch lines); exit status 1 on any mismatch or tool
error on a valid file, 2 when the references cannot run, else 0. --thumbhash-ref python uses
thumbhash-python instead of the JavaScript, for a machine without the file: that port is not
byte-identical to evanw's JavaScript (round-half-even and glibc's cos), so expect a few mismatches there.

--self-test makes a small fake corpus (the edge cases of placeholder-fixtures.py and random images), a fake
tool that answers with the reference values and a few planted errors, runs the whole check on it and
verifies that exactly the planted errors are reported.
"""
import argparse
import base64
import csv
import importlib.util
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import placeholder_ref as ref  # noqa: E402

from PIL import Image  # noqa: E402

FORMATS = ["PNG", "JPEG", "GIF", "WEBP", "AVIF", "HEIF"]
MAX_SIDE = 100


def corpus_check_lists():
    """REFUSED_AS_UNSUPPORTED and XMP_ORIENTATION_IGNORED from corpus-check.py (one place for them)."""
    try:
        spec = importlib.util.spec_from_file_location("corpus_check", os.path.join(HERE, "corpus-check.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return dict(module.REFUSED_AS_UNSUPPORTED), set(module.XMP_ORIENTATION_IGNORED)
    except Exception as error:  # noqa: BLE001
        print(f"placeholder-check: note: could not read corpus-check.py's lists ({error})", file=sys.stderr)
        return {}, set()


def read_tsv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def field(value):
    return None if value in (None, "", "-") else value


def upright_size(row, xmp_ignored):
    """The size a viewer shows, from the manifest, or None when it gives none."""
    width, height = field(row.get("oriented_width")), field(row.get("oriented_height"))
    if not (width and height) or row["path"] in xmp_ignored:
        width, height = field(row.get("width")), field(row.get("height"))
    try:
        return int(width), int(height)
    except (TypeError, ValueError):
        return None


def png_header(path):
    """(width, height, bit depth, colour type) from a PNG's IHDR."""
    with open(path, "rb") as f:
        head = f.read(29)
    if len(head) < 29 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    width, height, depth, colour = struct.unpack(">IIBB", head[16:26])
    return width, height, depth, colour


def size_problem(actual, upright):
    """Why a placeholder size does not fit the upright size, or None."""
    width, height = actual
    if width > MAX_SIDE or height > MAX_SIDE or width < 1 or height < 1:
        return f"{width}x{height} is not within 1..{MAX_SIDE}"
    if upright is None:
        return None
    up_w, up_h = upright
    long_side, short_side = max(up_w, up_h), min(up_w, up_h)
    want_long = min(MAX_SIDE, long_side)
    want_short = short_side * want_long / long_side
    got_long, got_short = (width, height) if up_w >= up_h else (height, width)
    if up_w == up_h:
        got_long, got_short = max(width, height), min(width, height)
    if got_long != want_long or abs(got_short - want_short) > 1:
        return (f"{width}x{height} does not fit the upright {up_w}x{up_h} "
                f"(expected long side {want_long}, short side {want_short:.2f} +-1)")
    return None


def resolve(path, pixel_dir, cwd):
    if os.path.isabs(path):
        return path
    for base in (cwd, pixel_dir):
        candidate = os.path.join(base, path)
        if os.path.exists(candidate):
            return candidate
    return os.path.join(pixel_dir, path)


class Verifier:
    def __init__(self, thumbhash):
        self.thumbhash = thumbhash

    def verify(self, entry, upright, pixel_dir, cwd):
        """(problems, notes) for one successful JSON answer of the tool."""
        problems, notes = [], []
        for key in ("blurhash", "thumbhash", "blurhash_pixels", "thumbhash_pixels"):
            if not isinstance(entry.get(key), str):
                problems.append(f"no \"{key}\" string in the tool's answer")
        if problems:
            return problems, notes
        images = {}
        for key, want_colour, mode in (("blurhash_pixels", 2, "RGB"), ("thumbhash_pixels", 6, "RGBA")):
            path = resolve(entry[key], pixel_dir, cwd)
            try:
                width, height, depth, colour = png_header(path)
            except (OSError, ValueError) as error:
                problems.append(f"{key} {entry[key]}: {error}")
                continue
            if depth != 8 or colour != want_colour:
                problems.append(f"{key}: PNG bit depth {depth} colour type {colour}, expected 8-bit {mode} "
                                f"(colour type {want_colour})")
                continue
            why = size_problem((width, height), upright)
            if why:
                problems.append(f"{key}: {why}")
            if width > MAX_SIDE or height > MAX_SIDE:
                continue   # the references take at most 100x100 (rgbaToThumbHash throws)
            with Image.open(path) as image:
                image.load()
                images[key] = (image.size, image.tobytes())
        if "blurhash_pixels" in images:
            (width, height), rgb = images["blurhash_pixels"]
            expected = ref.blurhash_encode(width, height, rgb, 4, 3)
            if entry["blurhash"] != expected:
                problems.append(f"blurhash {entry['blurhash']!r}, reference {expected!r} ({width}x{height} pixels)")
        if "thumbhash_pixels" in images:
            (width, height), rgba = images["thumbhash_pixels"]
            expected = base64.b64encode(self.thumbhash.encode(width, height, rgba)).decode()
            if entry["thumbhash"] != expected:
                problems.append(f"thumbhash {entry['thumbhash']!r}, reference {expected!r} ({width}x{height} pixels)")
        if len(images) == 2 and images["blurhash_pixels"][0] == images["thumbhash_pixels"][0]:
            if ref.flatten_over_white(images["thumbhash_pixels"][1]) != images["blurhash_pixels"][1]:
                notes.append("the BlurHash pixels are not the ThumbHash pixels flattened over white")
        return problems, notes


def run_batch(tool, files, cwd, pixel_root, timeout):
    """(batch dir, answers by file, batch-level problems)."""
    pixel_dir = tempfile.mkdtemp(prefix="batch-", dir=pixel_root)
    command = [tool, "info", "--json", "--placeholder-pixels", pixel_dir, *files]
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return pixel_dir, {}, [f"no answer within {timeout} s (hang?)"]
    except OSError as error:
        return pixel_dir, {}, [f"cannot run {tool}: {error}"]
    problems = []
    if done.returncode not in (0, 1):
        problems.append(f"exit status {done.returncode} (crash?) {done.stderr.strip()[-300:]}")
    answers = {}
    for line in done.stdout.splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            problems.append(f"not a JSON line: {line[:200]!r}")
            continue
        if not isinstance(entry, dict) or "file" not in entry:
            problems.append(f"a JSON line without \"file\": {line[:200]!r}")
            continue
        answers[entry["file"]] = entry
    has_error = any("error" in entry for entry in answers.values())
    if done.returncode == 0 and has_error:
        problems.append("an answer has \"error\" but the tool exited 0")
    if done.returncode == 1 and not has_error and not problems:
        problems.append(f"exit status 1 without an \"error\" answer {done.stderr.strip()[-300:]}")
    return pixel_dir, answers, problems


def check(tool, corpus, rows, uprights, refused, jobs, batch_size, timeout, thumbhash, keep=None):
    """Every problem line and note line over the rows."""
    verifier = Verifier(thumbhash)
    pixel_root = keep or tempfile.mkdtemp(prefix="placeholder-check-")
    os.makedirs(pixel_root, exist_ok=True)
    problems, notes = [], []
    batches = [rows[i:i + batch_size] for i in range(0, len(rows), batch_size)]
    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = {pool.submit(run_batch, tool, [r["path"] for r in batch], corpus, pixel_root, timeout): batch
                       for batch in batches}
            for future in as_completed(futures):
                batch = futures[future]
                pixel_dir, answers, batch_problems = future.result()
                names = " ".join(r["path"] for r in batch[:3]) + (" ..." if len(batch) > 3 else "")
                problems += [f"(batch {names}): {p}" for p in batch_problems]
                for row in batch:
                    path = row["path"]
                    entry = answers.get(path)
                    if entry is None:
                        problems.append(f"{path}: no answer from the tool")
                        continue
                    if "error" in entry:
                        if path in refused:
                            notes.append(f"{path}: refused as expected ({entry['error']})")
                        else:
                            problems.append(f"{path}: the tool failed on a valid file: {entry['error']}")
                        continue
                    try:
                        found, found_notes = verifier.verify(entry, uprights.get(path), pixel_dir, corpus)
                    except Exception as error:  # noqa: BLE001
                        found, found_notes = [f"checking failed: {error!r}"], []
                    problems += [f"{path}: {p}" for p in found]
                    notes += [f"{path}: {n}" for n in found_notes]
                if not keep:
                    shutil.rmtree(pixel_dir, ignore_errors=True)
    finally:
        if not keep:
            shutil.rmtree(pixel_root, ignore_errors=True)
    return problems, notes


def select_rows(corpus, formats, include_animated):
    rows = read_tsv(os.path.join(corpus, "MANIFEST.tsv"))
    animated = {r["path"] for r in read_tsv(os.path.join(corpus, "FRAMES.tsv"))}
    chosen = [r for r in rows if r["valid"] == "yes" and r["format"] in formats
              and (include_animated or r["path"] not in animated)]
    return chosen, animated


def run(options, corpus=None):
    """The check itself: returns (exit status, problems, notes)."""
    corpus = os.path.abspath(corpus or options.corpus)
    for name in ("MANIFEST.tsv", "FRAMES.tsv"):
        if not os.path.isfile(os.path.join(corpus, name)):
            print(f"placeholder-check: {corpus} has no {name}", file=sys.stderr)
            return 2, [], []
    tool = os.path.abspath(options.tool)
    if not os.access(tool, os.X_OK):
        print(f"placeholder-check: no tool at {tool} (swift build -c release --product webimage)", file=sys.stderr)
        return 2, [], []
    refused, xmp_ignored = corpus_check_lists()
    rows, animated = select_rows(corpus, options.formats, options.include_animated)
    missing = [r["path"] for r in rows if not os.path.isfile(os.path.join(corpus, r["path"]))]
    rows = [r for r in rows if r["path"] not in missing]
    uprights = {r["path"]: upright_size(r, xmp_ignored) for r in rows}
    try:
        thumbhash = ref.thumbhash_reference(options.thumbhash_ref)
    except FileNotFoundError as error:
        print(f"placeholder-check: {error}", file=sys.stderr)
        return 2, [], []
    with thumbhash:
        problems, notes = check(tool, corpus, rows, uprights, refused, options.jobs, options.batch,
                                options.timeout, thumbhash, options.keep)
    problems = [f"{path}: missing from the corpus folder" for path in missing] + problems
    for note in notes:
        print("NOTE", note)
    for problem in problems:
        print("MISMATCH", problem)
    without_size = sum(1 for r in rows if uprights[r["path"]] is None)
    print(f"placeholder-check: {len(rows) + len(missing)} files, {len(problems)} mismatches "
          f"({' '.join(options.formats)}; {'with' if options.include_animated else 'without'} the "
          f"{len(animated)} animated; ThumbHash reference: {thumbhash.name}"
          + (f"; {without_size} without a manifest size" if without_size else "") + ")")
    return (1 if problems else 0), problems, notes


# ---------------------------------------------------------------------------------------------- self-test

FAKE_TOOL = r'''
import json, os, shutil, sys
plan = json.load(open(os.environ["PLACEHOLDER_FAKE_PLAN"]))
args = sys.argv[1:]
assert args[:3] == ["info", "--json", "--placeholder-pixels"], args
out_dir, files = args[3], args[4:]
status = 0
for name in files:
    entry = plan.get(name)
    if entry is None or "error" in entry:
        print(json.dumps({"file": name, "error": (entry or {}).get("error", "cannot decode")}))
        status = 1
        continue
    answer = {"file": name, "blurhash": entry["blurhash"], "thumbhash": entry["thumbhash"]}
    for key in ("blurhash_pixels", "thumbhash_pixels"):
        target = os.path.join(out_dir, key + "-" + name.replace("/", "_"))
        shutil.copyfile(entry[key], target)
        answer[key] = target
    print(json.dumps(answer))
sys.exit(status)
'''

MANIFEST_COLUMNS = ["path", "format", "width", "height", "mode", "valid", "expected_rgba_sha256",
                    "exif_orientation", "oriented_width", "oriented_height", "oriented_rgba_sha256",
                    "reference", "source", "license", "notes"]
FRAMES_COLUMNS = ["path", "frame", "frames", "canvas_width", "canvas_height", "duration_ms", "loop",
                  "rgba_sha256", "reference", "second_opinion", "binding"]


def random_image(rng, width, height, kind):
    data = bytearray()
    colour = [rng.randrange(256) for _ in range(4)]
    for y in range(height):
        for x in range(width):
            if kind == "uniform":
                data += bytes(colour[:3] + [255])
            elif kind == "uniform-alpha":
                data += bytes(colour)
            elif kind == "noise":
                data += bytes([rng.randrange(256) for _ in range(3)] + [255])
            elif kind == "binary-alpha":
                data += bytes([rng.randrange(256) for _ in range(3)] + [rng.choice((0, 255))])
            else:  # smooth with partial alpha
                data += bytes(((x * 255) // max(1, width - 1), (y * 255) // max(1, height - 1),
                               (x * y) % 256, (x + 2 * y) * 7 % 256))
    return bytes(data)


def self_test(options):
    sys.path.insert(0, HERE)
    fixtures_spec = importlib.util.spec_from_file_location("placeholder_fixtures",
                                                           os.path.join(HERE, "placeholder-fixtures.py"))
    fixtures = importlib.util.module_from_spec(fixtures_spec)
    fixtures_spec.loader.exec_module(fixtures)
    try:
        thumbhash = ref.thumbhash_reference(options.thumbhash_ref)
    except FileNotFoundError as error:
        print(f"placeholder-check: {error}", file=sys.stderr)
        return 2
    rng = random.Random(20240528)
    work = tempfile.mkdtemp(prefix="placeholder-selftest-")
    corpus = os.path.join(work, "corpus")
    pixels = os.path.join(work, "pixels")
    os.makedirs(os.path.join(corpus, "png"))
    os.makedirs(pixels)
    # (name, upright width, upright height, the pixels the "tool" used: w, h, rgba)
    cases = [(name, w, h, w, h, rgba) for _, name, w, h, rgba in fixtures.fixtures()]
    kinds = ["uniform", "uniform-alpha", "noise", "binary-alpha", "smooth"]
    for i in range(15):
        w, h = rng.randint(1, 100), rng.randint(1, 100)
        cases.append((f"random{i}-{kinds[i % 5]}", w, h, w, h, random_image(rng, w, h, kinds[i % 5])))
    # A big image: the upright image is 1000x250, its placeholder 100x25.
    cases.append(("big", 1000, 250, 100, 25, random_image(rng, 100, 25, "smooth")))
    # A rotated one: stored 40x300, upright (oriented) 300x40, placeholder 100x13.
    cases.append(("rotated", 300, 40, 100, 13, random_image(rng, 100, 13, "noise")))
    planted = {
        "wrong-blurhash": "blurhash",       # the tool's BlurHash string is off by one character
        "wrong-thumbhash": "thumbhash",     # one ThumbHash byte flipped
        "too-big": "not within 1..100",      # placeholder 101 px wide
        "bad-aspect": "does not fit",       # 100x40 for a square image
        "rgb-for-thumbhash": "colour type",  # an RGB PNG where RGBA is due
        "tool-error": "failed on a valid file",
    }
    cases.append(("wrong-blurhash", 30, 20, 30, 20, random_image(rng, 30, 20, "noise")))
    cases.append(("wrong-thumbhash", 20, 30, 20, 30, random_image(rng, 20, 30, "smooth")))
    cases.append(("too-big", 202, 100, 101, 50, random_image(rng, 101, 50, "noise")))
    cases.append(("bad-aspect", 64, 64, 100, 40, random_image(rng, 100, 40, "noise")))
    cases.append(("rgb-for-thumbhash", 10, 10, 10, 10, random_image(rng, 10, 10, "noise")))
    cases.append(("tool-error", 10, 10, 10, 10, random_image(rng, 10, 10, "noise")))

    plan, manifest = {}, []
    with thumbhash:
        for name, up_w, up_h, w, h, rgba in cases:
            path = f"png/{name}.png"
            rgb = ref.flatten_over_white(rgba)
            Image.frombytes("RGBA", (w, h), rgba).save(os.path.join(corpus, path))   # the "source"
            rgb_png, rgba_png = os.path.join(pixels, name + "-rgb.png"), os.path.join(pixels, name + "-rgba.png")
            Image.frombytes("RGB", (w, h), rgb).save(rgb_png)
            if name == "rgb-for-thumbhash":
                Image.frombytes("RGB", (w, h), rgb).save(rgba_png)
            else:
                Image.frombytes("RGBA", (w, h), rgba).save(rgba_png)
            blur = ref.blurhash_encode(w, h, rgb, 4, 3)
            thumb = bytearray(thumbhash.encode(w, h, rgba) if max(w, h) <= MAX_SIDE else b"\0" * 5)
            if name == "wrong-blurhash":
                blur = blur[:-1] + ("0" if blur[-1] != "0" else "1")
            if name == "wrong-thumbhash":
                thumb[-1] ^= 0x10
            entry = {"blurhash": blur, "thumbhash": base64.b64encode(bytes(thumb)).decode(),
                     "blurhash_pixels": rgb_png, "thumbhash_pixels": rgba_png}
            if name == "tool-error":
                entry = {"error": "cannot decode: planted"}
            plan[path] = entry
            row = dict.fromkeys(MANIFEST_COLUMNS, "-")
            stored_w, stored_h = (up_h, up_w) if name == "rotated" else (up_w, up_h)
            row.update(path=path, format="PNG", width=str(stored_w), height=str(stored_h), valid="yes",
                       mode="RGBA 8-bit", notes="self-test")
            if name == "rotated":
                row.update(exif_orientation="6", oriented_width=str(up_w), oriented_height=str(up_h))
            manifest.append(row)
        # Left out by the selection: an invalid file and an animated one (the fake tool would fail them).
        for name, valid in (("invalid", "no"), ("animated", "yes")):
            row = dict.fromkeys(MANIFEST_COLUMNS, "-")
            row.update(path=f"png/{name}.png", format="PNG", width="4", height="4", valid=valid, notes="self-test")
            Image.new("RGBA", (4, 4)).save(os.path.join(corpus, row["path"]))
            manifest.append(row)
    frames_row = dict.fromkeys(FRAMES_COLUMNS, "-")
    frames_row.update(path="png/animated.png", frame="0", frames="2", binding="yes")
    for file_name, columns, rows in (("MANIFEST.tsv", MANIFEST_COLUMNS, manifest),
                                     ("FRAMES.tsv", FRAMES_COLUMNS, [frames_row])):
        with open(os.path.join(corpus, file_name), "w", newline="") as f:
            writer = csv.DictWriter(f, columns, delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    plan_path = os.path.join(work, "plan.json")
    with open(plan_path, "w") as f:
        json.dump(plan, f)
    tool = os.path.join(work, "fake-webimage")
    with open(tool, "w") as f:
        f.write(f"#!{sys.executable}\n{FAKE_TOOL}")
    os.chmod(tool, 0o755)
    os.environ["PLACEHOLDER_FAKE_PLAN"] = plan_path

    fake_options = argparse.Namespace(**vars(options))
    fake_options.tool, fake_options.batch, fake_options.keep = tool, 7, None
    fake_options.formats, fake_options.include_animated = FORMATS, False
    status, problems, notes = run(fake_options, corpus=corpus)
    failures = []
    for name, words in planted.items():
        hits = [p for p in problems if p.startswith(f"png/{name}.png:") and words in p]
        if not hits:
            failures.append(f"the planted error in {name} was not reported (wanted '{words}')")
    unplanted = [p for p in problems if not any(p.startswith(f"png/{name}.png:") for name in planted)]
    failures += [f"reported without being planted: {p}" for p in unplanted]
    if any("animated" in p or "invalid" in p for p in problems):
        failures.append("the animated or invalid file was checked")
    if status != 1:
        failures.append(f"exit status {status} with planted errors, expected 1")
    if notes:
        failures += [f"unexpected note: {n}" for n in notes]
    shutil.rmtree(work, ignore_errors=True)
    checked = len(cases)
    for failure in failures:
        print("SELF-TEST FAILURE", failure)
    if failures:
        print(f"placeholder-check self-test: FAILED ({len(failures)} problems)")
        return 1
    print(f"placeholder-check self-test: ok ({checked} fake files; the {len(planted)} planted errors were "
          f"reported, nothing else)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("formats", nargs="*", default=FORMATS, type=str.upper)
    parser.add_argument("--tool", default=os.path.join(ROOT, ".build", "release", "webimage"))
    parser.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=50, help="files per tool process (default 50)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per tool process (default 900)")
    parser.add_argument("--include-animated", action="store_true", help="also check the animated files")
    parser.add_argument("--thumbhash-ref", choices=["js", "python"], default="js",
                        help="js: evanw's js/thumbhash.js under node, from $THUMBHASH_JS (default); "
                             "python: thumbhash-python, not byte-identical")
    parser.add_argument("--keep", metavar="DIR", help="keep the tool's PNGs in DIR")
    parser.add_argument("--self-test", action="store_true", help="check this script on a fake tool and corpus")
    options = parser.parse_args()
    unknown = set(options.formats) - set(FORMATS)
    if unknown:
        parser.error(f"unknown formats {sorted(unknown)}; choose from {FORMATS}")
    if options.self_test:
        sys.exit(self_test(options))
    status, _, _ = run(options)
    sys.exit(status)


if __name__ == "__main__":
    main()
