#!/usr/bin/env python3
"""Checks every file of the team's image corpus through the release build of `webimage decode`.

    scripts/corpus-check.py [--corpus DIR] [--tool PATH] [--jobs N] [--timeout S] [FORMAT ...]

DIR defaults to ../shared/corpus beside the package; FORMAT is a manifest format (PNG JPEG GIF WEBP
AVIF HEIF JXL TIFF BMP ICO; default: every one, the big benchmark files under large/ included). Which
manifest formats exist is the tool's format registry (`webimage formats`): a manifest format the
registry does not name is an error, never skipped. What it checks, against MANIFEST.tsv
and FRAMES.tsv:

  - a valid file decodes, and its stored pixels hash to expected_rgba_sha256 (where one is given);
  - its upright pixels (--orient) have the oriented size and hash to oriented_rgba_sha256;
  - an animated file with binding FRAMES.tsv rows has their frame count and canvas size, and each
    binding frame its checksum, stored duration and loop count (a GIF without a loop extension plays
    once);
  - an invalid file is refused with an error line (exit 1), unless the manifest's notes say the
    reference decoders only warn about it, when decoding it is allowed too;
  - no file crashes the tool (a signal, or an exit code other than 0 and 1) or takes longer than the
    time-out (default 120 s: the 24 MP WebP under large/ takes a few seconds);
  - the few files where WebImage answers differently from the reference on purpose (below), that it
    gives the answer it should.

One line per mismatch, then a summary; exit status 1 on any mismatch. The package's own `swift test`
reads only the small copy under Tests/WebImageTests/Fixtures/Corpus; this is the whole corpus, run by
.ci/run after the tests.
"""
import argparse
import csv
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Where WebImage answers differently from the manifest's reference on purpose, and what it must answer
# instead (each has a test of its own in `swift test` too).
CLIPPED_CANVAS = {
    # Pillow grows the canvas to hold a frame that reaches outside it; WebImage clips frames to the
    # declared canvas, as browsers do. It must still decode.
    "gif/valid/wuffs/artificial-gif/frame-out-of-bounds.gif",
}
REFUSED_AS_UNSUPPORTED = {
    # 12-bit JPEG: Debian's libjpeg-turbo is built for 8-bit samples; refused with unsupportedFeature.
    "jpeg/valid/libjpeg-turbo/monkey12.jpg": "precision 12",
}
DECODER_BUILD_DIFFERS = {
    # Lossy JPEG XL files whose pixels depend on the build of libjxl 0.7: the corpus's own reference tool
    # (tools/jxl2rgba.c) built and run on this machine (Debian 12's libjxl 0.7.0) gives these checksums, and
    # so does WebImage; the manifest's were computed elsewhere. Path: (stored, oriented or None).
    "jxl/valid/conformance/bench_oriented_brg.jxl": ("14888624caddaebdf182d86c5b651e0940a5077a9e11b0bc567a152435753c02",
                                                     "5144deab954484fa576889df3fe4bd5cdb512f168ce332f3ea6864d9671dbc97"),
    "jxl/valid/conformance/noise.jxl": ("9b9f0a373130455888f5d16de85639dc7db151aec3da599ee4e7f9d56985c18f", None),
    "jxl/valid/conformance/upsampling.jxl": ("131b3cafacac04cc39e3d02b9e0a4888b51626ad70167e605a8f92bcbaae30fe", None),
    "jxl/valid/jxl-rs/dice.jxl": ("50b8aa34a2d833ea0c9e77e0653b0699f77e9e056c39ee7cd2425070ff670fdf", None),
    "jxl/valid/jxl-rs/green_queen_vardct_e3.jxl": ("68cf756442714b180a3a54fa77fbb413b104abd1c4c5e56bda3ff269e5c34e57", None),
    "jxl/valid/jxl-rs/oddsize_ups.jxl": ("68d920f4cafa0a74e58c5e625a05f107f4c5143061f3e84f44d6e4790b3eba83", None),
}
XMP_ORIENTATION_IGNORED = {
    # Pillow's exif_transpose reads tiff:Orientation from XMP; browsers do not, and neither does
    # WebImage: the upright pixels are the stored ones.
    "png/valid/pillow/xmp_tags_orientation_exiftool.png",
}


def read_tsv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def field(value):
    return None if value in ("", "-") else value


class Checker:
    def __init__(self, tool, corpus, timeout):
        self.tool, self.corpus, self.timeout = tool, corpus, timeout

    def run(self, *arguments):
        """The tool's lines for one call, or a problem string when it crashed or hung."""
        command = [self.tool, "decode", *arguments]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return None, f"no answer within {self.timeout} s (hang?)"
        if done.returncode not in (0, 1):
            return None, f"crashed: exit status {done.returncode} {done.stderr.strip()[-200:]}"
        lines = [line.split("\t") for line in done.stdout.splitlines() if line]
        return (done.returncode, lines), None

    def check_file(self, row, frames):
        """Every mismatch of one manifest row (and its FRAMES.tsv rows), as strings."""
        path = os.path.join(self.corpus, row["path"])
        problems = []
        result, crash = self.run("--checksum", path)
        if crash:
            return [f"{row['path']}: {crash}"]
        status, lines = result
        refused = status == 1 and lines and lines[-1][1] == "error"
        if row["valid"] == "no":
            only_warns = "=warn(" in row["notes"] or "decodes this invalid file without error" in row["notes"]
            if not refused and not only_warns:
                problems.append(f"{row['path']}: an invalid file decoded without error")
            return problems
        if row["path"] in REFUSED_AS_UNSUPPORTED:
            reason = REFUSED_AS_UNSUPPORTED[row["path"]]
            if not refused or "cannot decode" not in lines[-1][2] or reason not in lines[-1][2]:
                problems.append(f"{row['path']}: expected a refusal naming '{reason}', got {lines[-1] if lines else 'nothing'}")
            return problems
        if refused or status != 0:
            message = lines[-1][2] if lines and len(lines[-1]) > 2 else "no output"
            return [f"{row['path']}: a valid file failed: {message}"]
        expected = field(row["expected_rgba_sha256"])
        if row["path"] in DECODER_BUILD_DIFFERS:
            expected = DECODER_BUILD_DIFFERS[row["path"]][0]
        if row["path"] in CLIPPED_CANVAS:
            return problems
        if expected and lines[-1][-1] != expected:
            problems.append(f"{row['path']}: checksum {lines[-1][-1]}, expected {expected}")
        oriented = field(row["oriented_rgba_sha256"])
        size = [row["oriented_width"], row["oriented_height"]]
        if row["path"] in XMP_ORIENTATION_IGNORED:
            oriented, size = expected, [row["width"], row["height"]]
        if row["path"] in DECODER_BUILD_DIFFERS and oriented:
            oriented = DECODER_BUILD_DIFFERS[row["path"]][1]
        if oriented:
            result, crash = self.run("--orient", "--checksum", path)
            if crash:
                return problems + [f"{row['path']} (--orient): {crash}"]
            _, lines = result
            got = lines[-1] if lines else []
            if len(got) < 6 or got[-1] != oriented or got[2:4] != size:
                problems.append(f"{row['path']}: oriented {got[2:4]} {got[-1:]}, expected {size} {oriented}")
        if frames:
            problems += self.check_frames(row, frames, path)
        return problems

    def check_frames(self, row, frames, path):
        result, crash = self.run("--frames", path)
        if crash:
            return [f"{row['path']} (--frames): {crash}"]
        status, lines = result
        if status != 0:
            return [f"{row['path']} (--frames): failed: {lines[-1] if lines else 'no output'}"]
        problems = []
        frames = [frame for frame in frames if frame["binding"] == "yes"]
        if not frames:
            return problems   # the references disagree: nothing binds a decoder
        first = frames[0]
        count = int(first["frames"])
        if len(lines) != count:
            problems.append(f"{row['path']}: {len(lines)} frames, expected {count}")
        canvas = [first["canvas_width"], first["canvas_height"]]
        if lines and lines[0][2:4] != canvas:
            problems.append(f"{row['path']}: canvas {lines[0][2:4]}, expected {canvas}")
        by_index = {int(line[5]): line for line in lines if len(line) >= 10}
        is_gif = row["format"] == "GIF"
        for frame in frames:
            index = int(frame["frame"])
            line = by_index.get(index)
            if line is None:
                problems.append(f"{row['path']} frame {index}: missing")
                continue
            if line[9] != frame["rgba_sha256"]:
                problems.append(f"{row['path']} frame {index}: checksum {line[9]}, expected {frame['rgba_sha256']}")
            duration = field(frame["duration_ms"]) or ("0" if is_gif else None)
            if duration is not None and line[7] != duration:
                problems.append(f"{row['path']} frame {index}: {line[7]} ms, expected {duration}")
            loop = field(frame["loop"]) or ("1" if is_gif and count > 1 else None)
            if loop is not None and count > 1 and line[8] != loop:
                problems.append(f"{row['path']} frame {index}: loop count {line[8]}, expected {loop}")
        return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("formats", nargs="*", type=str.upper)
    parser.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    parser.add_argument("--tool", help="a built webimage (default: build the release one)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=120)
    options = parser.parse_args()
    corpus = os.path.abspath(options.corpus)
    for name in ("MANIFEST.tsv", "FRAMES.tsv"):
        if not os.path.isfile(os.path.join(corpus, name)):
            sys.exit(f"corpus-check: {corpus} has no {name}")
    tool = options.tool
    if tool is None:
        subprocess.run(["swift", "build", "-c", "release", "--product", "webimage"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        tool = os.path.join(ROOT, ".build", "release", "webimage")

    # The formats are the registry's: every name the tool's `webimage formats` lists, upper-cased.
    listed = subprocess.run([tool, "formats"], capture_output=True, text=True, check=True).stdout
    registry = {name.upper() for line in listed.splitlines() for name in line.split("\t")[0].split(",")}
    manifest = read_tsv(os.path.join(corpus, "MANIFEST.tsv"))
    unnamed = sorted({r["format"] for r in manifest} - registry)
    if unnamed:
        sys.exit(f"corpus-check: the manifest has formats the tool's registry does not name: {unnamed}")
    formats = options.formats or sorted({r["format"] for r in manifest})
    unknown = set(formats) - registry
    if unknown:
        parser.error(f"unknown formats {sorted(unknown)}; the registry names {sorted(registry)}")
    rows = [r for r in manifest if r["format"] in formats]
    frames = {}
    for frame in read_tsv(os.path.join(corpus, "FRAMES.tsv")):
        frames.setdefault(frame["path"], []).append(frame)
    missing = [r["path"] for r in rows if not os.path.isfile(os.path.join(corpus, r["path"]))]
    checker = Checker(tool, corpus, options.timeout)
    with ThreadPoolExecutor(max_workers=max(options.jobs, 1)) as pool:
        results = list(pool.map(lambda r: checker.check_file(r, frames.get(r["path"])), rows))
    problems = [f"{path}: missing from the corpus folder" for path in missing]
    problems += [p for found in results for p in found if not any(p.startswith(m + ":") for m in missing)]
    for problem in problems:
        print("MISMATCH", problem)
    valid = sum(1 for r in rows if r["valid"] == "yes")
    animated = sum(1 for r in rows if r["path"] in frames)
    print(f"corpus-check: {len(rows)} files ({valid} valid, {len(rows) - valid} invalid, {animated} animated) "
          f"of {' '.join(formats)} in {corpus}: {len(problems)} mismatches")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
