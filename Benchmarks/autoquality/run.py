#!/usr/bin/env python3
"""The saving of perceptual automatic quality, scored by a tool we did not write (SSIMULACRA2).

    python3 -m venv /tmp/aq-venv && /tmp/aq-venv/bin/pip install ssimulacra2 pillow scipy numpy
    swift build -c release --package-path Benchmarks
    /tmp/aq-venv/bin/python Benchmarks/autoquality/run.py Benchmarks/autoquality/pictures.tsv

For each picture of the list (corpus paths), `bench autoquality-encode` writes the unencoded resize (the
reference), the resize at fixed quality 80, and the resize searched by DSSIM at several targets, for JPEG,
WebP and AVIF, each with our decode as PNG. Every decode is scored against the reference with SSIMULACRA2
(PyPI `ssimulacra2`). What a fixed quality costs is set by the picture that needs the most, so the
comparison is at the same floor: the floor is the worst picture's score at quality 80, and the target
kept for `aq:dssim` is the one with the fewest bytes among those that keep **every** picture at or above
that floor. Then `bench autoquality-cost` times cold and warm server-like requests at that target.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

from ssimulacra2 import compute_ssimulacra2

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "Benchmarks/.build/release/bench")


def score(pair):
    reference, decoded = pair
    return compute_ssimulacra2(reference, decoded)


def reference_dssim(pair):
    import time
    from dssim_reference import compare, prep, read_png, to_rgbaplu
    started = time.perf_counter()
    value = compare(prep(to_rgbaplu(read_png(pair[0]))), prep(to_rgbaplu(read_png(pair[1]))))
    return value, (time.perf_counter() - started) * 1000


def check_dssim(rows):
    """Our DSSIM (C, float32) against the second implementation (NumPy, float64) on the JPEG files at q80,
    opaque pictures only (a JPEG's reference is the picture flattened), and the time of one comparison."""
    sample = [row for row in rows if row["format"] == "jpeg" and row["method"] == "fixed"][:6]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(reference_dssim, [(row["reference"], row["decoded"]) for row in sample]))
    print("\n| picture | pixels | DSSIM, ours (C) | DSSIM, second implementation (NumPy) | relative difference | ours | NumPy | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for row, (value, ms) in zip(sample, results):
        print(f"| {os.path.basename(row['picture'])} | {row['width']}×{row['height']} | {row['dssim']:.6f} | {value:.6f} | "
              f"{abs(row['dssim'] - value) / max(value, 1e-12):.1e} | {row['dssim_ms']:.1f} ms | {ms:.0f} ms | {ms / row['dssim_ms']:.0f}× |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("list")
    parser.add_argument("--out", default="/tmp/webimage-aq-bench")
    parser.add_argument("--details", action="store_true", help="print every picture's scores")
    parser.add_argument("--skip-cost", action="store_true")
    args = parser.parse_args()
    encoded = subprocess.run([BENCH, "autoquality-encode", os.path.abspath(args.list), args.out], check=True,
                             capture_output=True, text=True)
    rows = [json.loads(line) for line in encoded.stdout.splitlines() if line.startswith("{")]
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        scores = list(pool.map(score, [(row["reference"], row["decoded"]) for row in rows]))
    for row, value in zip(rows, scores):
        row["score"] = value
    pictures = sorted({row["index"] for row in rows})
    print(f"{len(pictures)} pictures, resized to fit {rows[0]['width'] if rows else 0}+ px; SSIMULACRA2 (ssimulacra2 PyPI) "
          f"against the unencoded resize; quality searched {os.environ.get('AQ_MIN', '30')}-{os.environ.get('AQ_MAX', '95')}\n")
    print("| format | fixed q80: bytes | min / mean score | method | target | bytes | ratio | min / mean score | "
          "encodes per picture (mean, max) | encode time vs q80 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    chosen = {}
    details = []
    for format in ["jpeg", "webp", "avif"]:
        fixed = {row["index"]: row for row in rows if row["format"] == format and row["method"] == "fixed"}
        if not fixed:
            continue
        floor = min(row["score"] for row in fixed.values())
        fixed_bytes = sum(row["bytes"] for row in fixed.values())
        fixed_scores = [row["score"] for row in fixed.values()]
        fixed_ms = sum(row["ms"] for row in fixed.values())
        for method in ["dssim", "ssimulacra2"]:
            targets = sorted({row["target"] for row in rows if row["format"] == format and row["method"] == method})
            best = None
            for target in targets:
                searched = {row["index"]: row for row in rows
                            if row["format"] == format and row["method"] == method and row["target"] == target}
                if len(searched) != len(fixed) or any(row["score"] < floor for row in searched.values()):
                    continue
                total = sum(row["bytes"] for row in searched.values())
                if best is None or total < best[1]:
                    best = (target, total, searched)
            head = f"| {format} | {fixed_bytes} | {min(fixed_scores):.2f} / {statistics.mean(fixed_scores):.2f} | aq:{method}"
            if best is None:
                print(head + " | none keeps the floor | | | | | |")
                continue
            target, total, searched = best
            chosen[(format, method)] = target
            scores_aq = [row["score"] for row in searched.values()]
            encodes = [row["encodes"] for row in searched.values()]
            ms = sum(row["ms"] for row in searched.values())
            print(head + f" | {target} | {total} | **{total / fixed_bytes:.2f}×** | {min(scores_aq):.2f} / {statistics.mean(scores_aq):.2f} | "
                  f"{statistics.mean(encodes):.1f}, {max(encodes)} | {ms / fixed_ms:.1f}× |")
            for index in sorted(fixed):
                f, s = fixed[index], searched[index]
                details.append(f"| {format} | aq:{method}:{target} | {os.path.basename(f['picture'])} | {f['bytes']} | {f['score']:.2f} | "
                               f"q{s['quality']} | {s['bytes']} | {s['bytes'] / f['bytes']:.2f}× | {s['score']:.2f} | {s['encodes']} |")
    if args.details:
        print("\n| format | method | picture | q80 bytes | q80 score | chosen | bytes | ratio | score | encodes |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        print("\n".join(details))
    check_dssim(rows)
    if args.skip_cost:
        return
    print("\n| format | method | target | cold requests, q80 | cold, searched | ratio | warm, q80 | warm, searched | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (format, method), target in chosen.items():
        cost = subprocess.run([BENCH, "autoquality-cost", os.path.abspath(args.list), format, method, str(target)], check=True,
                              capture_output=True, text=True)
        lines = {line["method"]: line for line in (json.loads(text) for text in cost.stdout.splitlines() if text.startswith("{"))}
        fixed, searched = lines["fixed"], lines[method]
        print(f"| {format} | aq:{method} | {target} | {fixed['cold_ms']:.1f} ms | {searched['cold_ms']:.1f} ms | "
              f"{searched['cold_ms'] / fixed['cold_ms']:.2f}× | {fixed['warm_ms']:.2f} ms | {searched['warm_ms']:.2f} ms | "
              f"{searched['warm_ms'] / fixed['warm_ms']:.2f}× |")


if __name__ == "__main__":
    sys.exit(main())
