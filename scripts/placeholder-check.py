#!/usr/bin/env python3
"""Checks WebImage's BlurHash and ThumbHash on the team's image corpus against the reference encoders.

    PY=$(scripts/placeholder-venv.sh | tail -n 1)
    THUMBHASH_JS=/path/to/evanw/thumbhash/js/thumbhash.js \\
        "$PY" scripts/placeholder-check.py [--tool PATH] [--corpus DIR] [--jobs N] [--batch N] [FORMAT ...]
    "$PY" scripts/placeholder-check.py --thumbhash-ref stored [--expected FILE] ...    (CI: no JavaScript)
    THUMBHASH_JS=... "$PY" scripts/placeholder-check.py --write-expected scripts/placeholder-expected.tsv
    "$PY" scripts/placeholder-check.py --self-test [--thumbhash-ref stored]

--tool defaults to .build/release/webimage and --corpus to ../shared/corpus, both beside the package root;
FORMAT is any of PNG JPEG GIF WEBP AVIF HEIF TIFF BMP ICO JXL (default: all). The files: every row of MANIFEST.tsv with
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
  - woltapp's C encoder (blurhash-python) on the RGB PNG's pixels gives the tool's "blurhash", always
    computed here and now;
  - evanw's rgbaToThumbHash (js/thumbhash.js) on the RGBA PNG's pixels, unresized, gives the tool's
    "thumbhash", exactly: see the ThumbHash references below.

The ThumbHash reference, --thumbhash-ref:

  js      evanw's js/thumbhash.js under node, from $THUMBHASH_JS (default $TMPDIR/evanw-thumbhash/
          thumbhash.js; not in this repository), run here and now. Exit 2 when it cannot run.
  stored  the values that js/thumbhash.js computed earlier, read from --expected FILE (default
          scripts/placeholder-expected.tsv), for a machine without node or the file (CI). A stored value
          applies only to the pixels it was computed from: when the RGBA PNG's size and the SHA-256 of its
          pixel bytes equal the row's thumbhash_pixels_size and thumbhash_pixels_sha256, the tool's ThumbHash
          must equal the row's; when they differ, the encoders' input changed and that is a mismatch (the
          file must be regenerated, see --write-expected), as is a checked file without a row. Rows for
          files that were not checked are one note.
  auto    (default) js when node and the file are there, else stored.
  python  thumbhash-python (only if the venv was made with --with-thumbhash-python): NOT byte-identical
          to evanw's JavaScript (round-half-even and glibc's cos), so expect a few mismatches.

With js and an explicit --expected FILE, the stored values are compared with the live ones too: for the
same pixels a different stored value is a mismatch (FILE is wrong); a row whose pixels changed, or a
missing row, is a note (FILE is stale).

--write-expected FILE (needs the js reference) writes, after the run, a TSV with a header line and a row
per checked file whose two PNGs the references could read, sorted by path: path (corpus-relative), blurhash
(4x3) and thumbhash (base64) as the REFERENCES computed them from the tool's PNGs (never the tool's own
strings), thumbhash_reference (the js reference's name: commit of js/thumbhash.js and node version),
blurhash_pixels_size and blurhash_pixels_sha256 (the RGB PNG's width x height and the SHA-256 of its
decoded RGB bytes), thumbhash_pixels_size and thumbhash_pixels_sha256 (the same for the RGBA PNG's RGBA
bytes). The blurhash column is informative: a stored run recomputes BlurHash and only notes where
blurhash-python here disagrees with the stored value for the same pixels.

It also notes (without failing) where the two PNGs have the same size but the RGB one is not the RGBA one
flattened over white with (c*a + 255*(255-a) + 127) // 255. One line per mismatch, then
`placeholder-check: N files, M mismatches (...; BlurHash reference: ...; ThumbHash reference: ...)` (M
counts mismatch lines); exit status 1 on any mismatch or tool error on a valid file, 2 when the references
cannot run (or FILE cannot be read), else 0.

--self-test makes a small fake corpus (the edge cases of placeholder-fixtures.py and random images), a fake
tool that answers with the reference values and a few planted errors, and verifies that exactly the planted
errors are reported: with the js reference (when it can run, and --thumbhash-ref is not stored), writing a
TSV with --write-expected; then in stored mode from that TSV (or, without the js reference, from a TSV of
stand-in values), with a planted wrong stored value, a file whose pixels changed, a file without a row and
a row for no checked file; then, with js, the same TSV as --expected beside the live reference.
"""
import argparse
import base64
import csv
import hashlib
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

FORMATS = ["PNG", "JPEG", "GIF", "WEBP", "AVIF", "HEIF", "TIFF", "BMP", "ICO", "JXL"]
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


EXPECTED_DEFAULT = os.path.join(HERE, "placeholder-expected.tsv")
EXPECTED_COLUMNS = ["path", "blurhash", "thumbhash", "thumbhash_reference", "blurhash_pixels_size",
                    "blurhash_pixels_sha256", "thumbhash_pixels_size", "thumbhash_pixels_sha256"]
REGENERATE = "regenerate with --write-expected on a machine with the JS reference"


def display_path(path):
    path = os.path.abspath(path)
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


class Expected:
    """The stored reference values of a --write-expected TSV, by corpus path (ValueError when unreadable)."""

    def __init__(self, path):
        self.path, self.shown = path, display_path(path)
        self.rows = {}
        try:
            with open(path, newline="") as f:
                reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
                absent = [c for c in EXPECTED_COLUMNS if c not in (reader.fieldnames or [])]
                if absent:
                    raise ValueError(f"no column {', '.join(absent)} in its header")
                for row in reader:
                    line = reader.line_num
                    if None in row or any(not row.get(c) for c in EXPECTED_COLUMNS):
                        raise ValueError(f"line {line} has an empty, missing or extra field")
                    if row["path"] in self.rows:
                        raise ValueError(f"line {line}: {row['path']} a second time")
                    self.rows[row["path"]] = row
        except (OSError, csv.Error, ValueError) as error:
            raise ValueError(f"cannot use the stored reference values {self.shown}: {error}") from None
        references = sorted({row["thumbhash_reference"] for row in self.rows.values()})
        self.name = f"stored values from {self.shown} ({'; '.join(references) or 'no rows'})"


def write_expected(path, records):
    """The TSV that Expected reads, rows sorted by path, written whole or not at all."""
    temporary = path + ".partial"
    with open(temporary, "w", newline="") as f:
        writer = csv.DictWriter(f, EXPECTED_COLUMNS, delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n")
        writer.writeheader()
        for key in sorted(records):
            writer.writerow(records[key])
    os.replace(temporary, path)


class Verifier:
    """Checks the tool's answers. thumbhash: a live reference (js or python) or None, when the ThumbHash
    reference is the stored values of expected; expected: an Expected or None."""

    def __init__(self, thumbhash, expected=None):
        self.thumbhash, self.expected = thumbhash, expected
        self.records = {}       # path -> a --write-expected row: the live references' values and pixel digests
        self.compared = set()   # the paths whose ThumbHash pixels were looked up in expected

    def verify(self, path, entry, upright, pixel_dir, cwd):
        """(problems, notes) for one successful JSON answer of the tool."""
        problems, notes = [], []
        for key in ("blurhash", "thumbhash", "blurhash_pixels", "thumbhash_pixels"):
            if not isinstance(entry.get(key), str):
                problems.append(f"no \"{key}\" string in the tool's answer")
        if problems:
            return problems, notes
        images = {}
        for key, want_colour, mode in (("blurhash_pixels", 2, "RGB"), ("thumbhash_pixels", 6, "RGBA")):
            pixels_path = resolve(entry[key], pixel_dir, cwd)
            try:
                width, height, depth, colour = png_header(pixels_path)
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
            with Image.open(pixels_path) as image:
                image.load()
                images[key] = (image.size, image.tobytes())
        # What the encoders read: the pixels' size and the SHA-256 of their bytes.
        digests = {key: (f"{w}x{h}", ref.sha256(data)) for key, ((w, h), data) in images.items()}
        expected = self.expected
        row = expected.rows.get(path) if expected else None
        blur = thumb = None
        if "blurhash_pixels" in images:
            (width, height), rgb = images["blurhash_pixels"]
            blur = ref.blurhash_encode(width, height, rgb, 4, 3)
            if entry["blurhash"] != blur:
                problems.append(f"blurhash {entry['blurhash']!r}, reference {blur!r} ({width}x{height} pixels)")
            if row and (row["blurhash_pixels_size"], row["blurhash_pixels_sha256"]) == digests["blurhash_pixels"] \
                    and row["blurhash"] != blur:
                notes.append(f"blurhash-python here gives {blur!r} where {expected.shown} has {row['blurhash']!r} "
                             "for the same pixels (another build of blurhash-python, or another libm?)")
        if "thumbhash_pixels" in images:
            (width, height), rgba = images["thumbhash_pixels"]
            size, digest = digests["thumbhash_pixels"]
            same_pixels = row is not None and (row["thumbhash_pixels_size"], row["thumbhash_pixels_sha256"]) == (size, digest)
            stored_for = (f"{row['thumbhash_pixels_size']} pixels with SHA-256 {row['thumbhash_pixels_sha256'][:16]}..."
                          if row else "")
            if expected:
                self.compared.add(path)
            if self.thumbhash is not None:
                thumb = base64.b64encode(self.thumbhash.encode(width, height, rgba)).decode()
                if entry["thumbhash"] != thumb:
                    problems.append(f"thumbhash {entry['thumbhash']!r}, reference {thumb!r} ({width}x{height} pixels)")
                if expected and row is None:
                    notes.append(f"no row in {expected.shown}, which is stale: {REGENERATE}")
                elif expected and not same_pixels:
                    notes.append(f"the ThumbHash pixels ({size}, SHA-256 {digest[:16]}...) are not those of "
                                 f"{expected.shown} ({stored_for}), which is stale: {REGENERATE}")
                elif expected and row["thumbhash"] != thumb:
                    problems.append(f"the stored ThumbHash {row['thumbhash']!r} in {expected.shown} is not the live "
                                    f"reference's {thumb!r} for the same pixels")
            elif row is None:
                problems.append(f"no row in {expected.shown}, so no stored ThumbHash reference value for it: "
                                f"{REGENERATE}")
            elif not same_pixels:
                problems.append(f"the encoders' input changed: the ThumbHash pixels are {size} with SHA-256 "
                                f"{digest[:16]}..., the stored reference value in {expected.shown} is for "
                                f"{stored_for}: {REGENERATE}")
            elif entry["thumbhash"] != row["thumbhash"]:
                problems.append(f"thumbhash {entry['thumbhash']!r}, reference {row['thumbhash']!r} "
                                f"(stored in {expected.shown}, same {size} pixels)")
        if blur is not None and thumb is not None:
            self.records[path] = {
                "path": path, "blurhash": blur, "thumbhash": thumb, "thumbhash_reference": self.thumbhash.name,
                "blurhash_pixels_size": digests["blurhash_pixels"][0],
                "blurhash_pixels_sha256": digests["blurhash_pixels"][1],
                "thumbhash_pixels_size": digests["thumbhash_pixels"][0],
                "thumbhash_pixels_sha256": digests["thumbhash_pixels"][1],
            }
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


def check(tool, corpus, rows, uprights, refused, jobs, batch_size, timeout, verifier, keep=None):
    """Every problem line and note line over the rows."""
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
                        found, found_notes = verifier.verify(path, entry, uprights.get(path), pixel_dir, corpus)
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


def references(options):
    """(live ThumbHash reference or None, Expected or None) as the options say; FileNotFoundError or
    ValueError when they cannot be had."""
    kind, live, fallback = options.thumbhash_ref, None, None
    if kind in ("auto", "js"):
        try:
            live = ref.ThumbHashJS()
        except FileNotFoundError as error:
            if options.write_expected:
                raise FileNotFoundError(f"--write-expected needs the JavaScript reference: {error}") from None
            if kind == "js":
                raise
            fallback = error
    elif kind == "python":
        live = ref.ThumbHashPython()
    try:
        if options.write_expected and not isinstance(live, ref.ThumbHashJS):
            raise ValueError("--write-expected stores the JavaScript reference's values: run it with "
                             "--thumbhash-ref js (or auto) where node and js/thumbhash.js are")
        if live is None:
            expected = Expected(options.expected or EXPECTED_DEFAULT)
            if fallback:
                print(f"placeholder-check: note: {fallback}; using the stored values of {expected.shown}",
                      file=sys.stderr)
            return None, expected
        return live, (Expected(options.expected) if options.expected else None)
    except ValueError:
        if live is not None:
            live.close()
        raise


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
        thumbhash, expected = references(options)
    except (FileNotFoundError, ValueError) as error:
        print(f"placeholder-check: {error}", file=sys.stderr)
        return 2, [], []
    verifier = Verifier(thumbhash, expected)
    try:
        problems, notes = check(tool, corpus, rows, uprights, refused, options.jobs, options.batch,
                                options.timeout, verifier, options.keep)
    finally:
        if thumbhash is not None:
            thumbhash.close()
    problems = [f"{path}: missing from the corpus folder" for path in missing] + problems
    if expected:
        unchecked = sorted(set(expected.rows) - verifier.compared)
        if unchecked:
            shown = " ".join(unchecked[:10]) + (" ..." if len(unchecked) > 10 else "")
            notes.append(f"{expected.shown}: {len(unchecked)} row{'s' if len(unchecked) != 1 else ''} not compared "
                         f"(files not checked, or without readable ThumbHash pixels): {shown}")
    for note in notes:
        print("NOTE", note)
    for problem in problems:
        print("MISMATCH", problem)
    if options.write_expected:
        write_expected(options.write_expected, verifier.records)
        partial = [] if set(options.formats) == set(FORMATS) and not options.include_animated else \
            [f"only {' '.join(options.formats)}{' with the animated' if options.include_animated else ''}"]
        partial += [f"the run had {len(problems)} mismatches"] if problems else []
        print(f"placeholder-check: wrote the references' values for {len(verifier.records)} files to "
              f"{display_path(options.write_expected)}" + (f" (note: {'; '.join(partial)})" if partial else ""))
    if thumbhash is None:
        thumbhash_name = expected.name
    else:
        thumbhash_name = f"live {thumbhash.name}" + (f", compared with the {expected.name}" if expected else "")
    without_size = sum(1 for r in rows if uprights[r["path"]] is None)
    print(f"placeholder-check: {len(rows) + len(missing)} files, {len(problems)} mismatches "
          f"({' '.join(options.formats)}; {'with' if options.include_animated else 'without'} the "
          f"{len(animated)} animated; BlurHash reference: live {ref.blurhash_reference_name()}; "
          f"ThumbHash reference: {thumbhash_name}"
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


def stand_in_thumbhash(width, height, rgba):
    """Bytes in place of a ThumbHash when the self-test has no JavaScript reference: the stored mode only
    compares them, so any value that depends on the pixels will do."""
    return hashlib.sha256(b"%dx%d:" % (width, height) + bytes(rgba)).digest()[:9]


def self_test_verdict(label, status, problems, notes, planted, wanted_notes):
    """The failures of one self-test run: planted and wanted_notes map a fake file's name (or "" for a note
    about the whole TSV) to words its line must contain."""
    def owner(line):
        return line.split(".png:", 1)[0].split("/")[-1] if line.startswith("png/") else ""

    failures = []
    for kind, lines, wanted in (("error", problems, planted), ("note", notes, wanted_notes)):
        for name, words in wanted.items():
            if not any(owner(line) == name and words in line for line in lines):
                failures.append(f"{label}: the planted {kind} of {name or 'the TSV'} was not reported "
                                f"(wanted '{words}')")
        failures += [f"{label}: {kind} without being planted: {line}" for line in lines if owner(line) not in wanted]
    if any(owner(line) in ("animated", "invalid") for line in problems + notes):
        failures.append(f"{label}: the animated or invalid file was checked")
    if status != (1 if planted else 0):
        failures.append(f"{label}: exit status {status}, expected {1 if planted else 0}")
    return failures


def self_test(options):
    work = tempfile.mkdtemp(prefix="placeholder-selftest-")
    try:
        return self_test_in(options, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def self_test_in(options, work):
    sys.path.insert(0, HERE)
    fixtures_spec = importlib.util.spec_from_file_location("placeholder_fixtures",
                                                           os.path.join(HERE, "placeholder-fixtures.py"))
    fixtures = importlib.util.module_from_spec(fixtures_spec)
    fixtures_spec.loader.exec_module(fixtures)
    live = None
    if options.thumbhash_ref == "python":
        print("placeholder-check: the self-test runs with --thumbhash-ref js, stored or auto", file=sys.stderr)
        return 2
    if options.thumbhash_ref in ("auto", "js"):
        try:
            live = ref.ThumbHashJS()
        except FileNotFoundError as error:
            if options.thumbhash_ref == "js":
                print(f"placeholder-check: {error}", file=sys.stderr)
                return 2
            print(f"placeholder-check self-test: note: {error}; testing the stored mode only, on stand-in "
                  "ThumbHash values", file=sys.stderr)

    def thumbhash_of(width, height, rgba):
        return live.encode(width, height, rgba) if live else stand_in_thumbhash(width, height, rgba)

    rng = random.Random(20240528)
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
    # Right answers from the tool, for the stored mode's planted errors: its row's ThumbHash altered, its
    # pixels changed after the TSV was written, its row left out.
    for name in ("stored-wrong", "pixels-changed", "not-stored"):
        cases.append((name, 40, 30, 40, 30, random_image(rng, 40, 30, "smooth")))

    plan, manifest, truth = {}, [], {}
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
        thumb = bytearray(thumbhash_of(w, h, rgba) if max(w, h) <= MAX_SIDE else b"\0" * 5)
        truth[path] = {"blurhash": blur, "thumbhash": base64.b64encode(bytes(thumb)).decode(),
                       "blurhash_pixels_size": f"{w}x{h}", "blurhash_pixels_sha256": ref.sha256(rgb),
                       "thumbhash_pixels_size": f"{w}x{h}", "thumbhash_pixels_sha256": ref.sha256(rgba)}
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
    if live:
        live.close()
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

    def save_plan():
        with open(plan_path, "w") as f:
            json.dump(plan, f)

    save_plan()
    tool = os.path.join(work, "fake-webimage")
    with open(tool, "w") as f:
        f.write(f"#!{sys.executable}\n{FAKE_TOOL}")
    os.chmod(tool, 0o755)
    os.environ["PLACEHOLDER_FAKE_PLAN"] = plan_path

    def fake_run(thumbhash_ref, expected=None, write=None):
        fake_options = argparse.Namespace(**vars(options))
        fake_options.tool, fake_options.batch, fake_options.keep = tool, 7, None
        fake_options.formats, fake_options.include_animated = FORMATS, False
        fake_options.thumbhash_ref, fake_options.expected, fake_options.write_expected = thumbhash_ref, expected, write
        return run(fake_options, corpus=corpus)

    failures, runs = [], []
    # The files whose two PNGs the references can read: the rows a TSV has.
    unreadable = {"png/tool-error.png", "png/too-big.png", "png/rgb-for-thumbhash.png"}
    written = os.path.join(work, "expected.tsv")
    if live:
        # 1. The live JavaScript reference, writing the TSV.
        print("placeholder-check self-test: 1. live JS reference, --write-expected")
        status, problems, notes = fake_run("js", write=written)
        failures += self_test_verdict("live", status, problems, notes, planted, {})
        runs.append("live")
        rows = Expected(written).rows
        if set(rows) != set(truth) - unreadable:
            failures.append(f"written TSV: rows for {sorted(rows)}, expected {sorted(set(truth) - unreadable)}")
        for path, row in rows.items():
            for key, value in truth.get(path, {}).items():
                if row[key] != value:   # e.g. the tool's own wrong ThumbHash copied in
                    failures.append(f"written TSV: {path} has {key} {row[key]!r}, the reference's is {value!r}")
            if row["thumbhash_reference"] != live.name:
                failures.append(f"written TSV: {path} names the reference {row['thumbhash_reference']!r}")
    else:
        write_expected(written, {path: dict(values, path=path, thumbhash_reference="self-test stand-in values")
                                 for path, values in truth.items() if path not in unreadable})
    # 2. The stored mode, from that TSV with planted errors.
    print("placeholder-check self-test: 2. stored values, with planted errors in the TSV")
    rows = Expected(written).rows
    stored_wrong = bytearray(base64.b64decode(rows["png/stored-wrong.png"]["thumbhash"]))
    stored_wrong[1] ^= 0x01
    rows["png/stored-wrong.png"]["thumbhash"] = base64.b64encode(bytes(stored_wrong)).decode()
    del rows["png/not-stored.png"]
    rows["png/gone.png"] = dict(rows["png/one.png"], path="png/gone.png")
    planted_tsv = os.path.join(work, "planted.tsv")
    write_expected(planted_tsv, rows)
    # The tool's pixels for pixels-changed are other ones now (its answers are right for them).
    w, h, rgba = 40, 30, random_image(rng, 40, 30, "noise")
    changed = plan["png/pixels-changed.png"]
    Image.frombytes("RGBA", (w, h), rgba).save(changed["thumbhash_pixels"])
    Image.frombytes("RGB", (w, h), ref.flatten_over_white(rgba)).save(changed["blurhash_pixels"])
    changed["blurhash"] = ref.blurhash_encode(w, h, ref.flatten_over_white(rgba), 4, 3)
    if live:
        with ref.ThumbHashJS() as again:
            changed["thumbhash"] = base64.b64encode(again.encode(w, h, rgba)).decode()
    else:
        changed["thumbhash"] = base64.b64encode(stand_in_thumbhash(w, h, rgba)).decode()
    save_plan()
    stored_planted = dict(planted, **{"stored-wrong": "(stored in", "pixels-changed": "the encoders' input changed",
                                      "not-stored": "no row in"})
    status, problems, notes = fake_run("stored", expected=planted_tsv)
    failures += self_test_verdict("stored", status, problems, notes, stored_planted, {"": "png/gone.png"})
    runs.append("stored")
    if live:
        # 3. The live reference beside the same TSV: the wrong stored value is an error, the stale rows notes.
        print("placeholder-check self-test: 3. live JS reference, compared with the planted TSV")
        status, problems, notes = fake_run("js", expected=planted_tsv)
        failures += self_test_verdict(
            "live+stored", status, problems, notes,
            dict(planted, **{"stored-wrong": "is not the live reference's"}),
            {"pixels-changed": "which is stale", "not-stored": "which is stale", "": "png/gone.png"})
        runs.append("live beside stored")
    for failure in failures:
        print("SELF-TEST FAILURE", failure)
    if failures:
        print(f"placeholder-check self-test: FAILED ({len(failures)} problems)")
        return 1
    print(f"placeholder-check self-test: ok ({len(cases)} fake files; runs: {', '.join(runs)}; the planted errors "
          f"were reported ({len(planted)} in the tool's answers, 3 in the stored values) and nothing else"
          + ("" if live else "; no JS reference here, so stand-in ThumbHash values") + ")")
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
    parser.add_argument("--thumbhash-ref", choices=["auto", "js", "stored", "python"], default="auto",
                        help="js: evanw's js/thumbhash.js under node, from $THUMBHASH_JS; stored: the values it "
                             "computed, from --expected; auto (default): js if it can run, else stored; "
                             "python: thumbhash-python, not byte-identical")
    parser.add_argument("--expected", metavar="FILE",
                        help="the stored ThumbHash reference values (default, in stored mode: "
                             "scripts/placeholder-expected.tsv); with js, compared with the live ones")
    parser.add_argument("--write-expected", metavar="FILE",
                        help="after the run, write the live references' values and the pixels' SHA-256 to FILE")
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
