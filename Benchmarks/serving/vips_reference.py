#!/usr/bin/env python3
"""The imgproxy-style cell against libvips (pyvips + pyvips-binary): fetch, fit into 512×512, encode.

    $WEBIMAGE_BENCH_VENV/bin/python Benchmarks/serving/vips_reference.py --format jpeg --count 200 --out DIR

Reproduces one cell of imgproxy's image-servers-benchmark (github.com/imgproxy/image-servers-benchmark):
k6 runs one virtual user per core (2 here), each request fetching a DIV2K-sized source from nginx and
asking for `rs:fit:512:512`, output format == source format, quality 80 JPEG, 75 WebP, 65 AVIF (PNG has
none). Here every request i (0 ≤ i < count, over the sources i mod --sources-count) is, in one of
--workers threads with its own keep-alive connection to nginx:

    data = GET <sources><i mod n>.<ext>
    out  = pyvips.Image.thumbnail_buffer(data, 512, height=512)  (fit inside 512×512, never enlarged)
    body = <format>save_buffer(out, …)

with the savers configured as imgproxy configures libvips (vips/vips.c; --encoder imgproxy, the default):
JPEG Q80 optimize_coding, progressive (the benchmark sets IMGPROXY_JPEG_PROGRESSIVE=1); PNG filter=all;
WebP Q75 effort 4; AVIF Q65 AV1 effort 0 (IMGPROXY_AVIF_SPEED=9 → effort 9 − 9); metadata stripped.
--encoder plain uses the libvips defaults beside Q (JPEG Q80 baseline, WebP Q75, AVIF Q65 effort 4).
libvips runs as imgproxy runs it: operation cache off, concurrency 1 per request (--vips-concurrency).

The first --warmup requests are made before the clock; the timed ones follow. The first 20 outputs are
written to --out as <i>.<ext>. Prints one JSON line:
{"format", "count", "seconds", "results_per_second", "mean_bytes", "libvips", ...}.
"""
import argparse
import http.client
import json
import os
import sys
import threading
import time
import urllib.parse

import pyvips

EXT = {"jpeg": "jpg", "jpg": "jpg", "png": "png", "webp": "webp", "avif": "avif"}

ENCODERS = {
    "imgproxy": {
        "jpg": lambda im: im.jpegsave_buffer(Q=80, optimize_coding=True, interlace=True, keep="none"),
        "png": lambda im: im.pngsave_buffer(filter="all", interlace=False, keep="none"),
        "webp": lambda im: im.webpsave_buffer(Q=75, effort=4, keep="none"),
        "avif": lambda im: im.heifsave_buffer(Q=65, compression="av1", effort=0, keep="none"),
    },
    "plain": {
        "jpg": lambda im: im.jpegsave_buffer(Q=80, keep="none"),
        "png": lambda im: im.pngsave_buffer(keep="none"),
        "webp": lambda im: im.webpsave_buffer(Q=75, keep="none"),
        "avif": lambda im: im.heifsave_buffer(Q=65, compression="av1", keep="none"),
    },
}


class Fetcher:
    """One keep-alive HTTP/1.1 connection; reconnects once when the server has closed it."""

    def __init__(self, prefix, timeout):
        url = urllib.parse.urlsplit(prefix)
        if url.scheme != "http":
            raise SystemExit(f"--sources must be an http:// prefix, not {prefix}")
        self.host, self.port = url.hostname, url.port or 80
        self.path = url.path if url.path.endswith("/") else url.path + "/"
        self.timeout = timeout
        self.conn = None

    def get(self, name):
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self.conn.request("GET", self.path + name)
                response = self.conn.getresponse()
                body = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
                continue
            if response.status != 200:
                raise RuntimeError(f"GET {self.path}{name}: HTTP {response.status}")
            return body

    def close(self):
        if self.conn is not None:
            self.conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--format", required=True, choices=sorted(EXT))
    ap.add_argument("--count", type=int, default=200, help="timed requests (default 200)")
    ap.add_argument("--workers", type=int, default=2, help="concurrent requests (default 2, k6's VUs = cores)")
    ap.add_argument("--sources", help="URL prefix of the sources (default "
                                      "http://127.0.0.1:8089/serving/div2k/<ext>/)")
    ap.add_argument("--sources-count", type=int, default=20, help="sources 0..n-1 are cycled over (default 20)")
    ap.add_argument("--out", required=True, help="the first 20 outputs go here as <i>.<ext>")
    ap.add_argument("--size", type=int, default=512, help="the fit box's side (default 512)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed requests per worker first (default 2)")
    ap.add_argument("--vips-concurrency", type=int, default=1,
                    help="libvips threads per operation (default 1, as imgproxy sets it; 0 = libvips default, "
                         "the core count)")
    ap.add_argument("--encoder", choices=sorted(ENCODERS), default="imgproxy")
    ap.add_argument("--timeout", type=float, default=30, help="seconds per source fetch (socket timeout)")
    args = ap.parse_args()

    ext = EXT[args.format]
    prefix = args.sources or f"http://127.0.0.1:8089/serving/div2k/{ext}/"
    encode = ENCODERS[args.encoder][ext]
    pyvips.cache_set_max(0)
    if args.vips_concurrency > 0:
        pyvips.concurrency_set(args.vips_concurrency)
    os.makedirs(args.out, exist_ok=True)
    keep = min(20, args.count)

    def one(fetcher, i):
        data = fetcher.get(f"{i % args.sources_count}.{ext}")
        thumb = pyvips.Image.thumbnail_buffer(data, args.size, height=args.size)
        return encode(thumb)

    next_index = [0]
    lock = threading.Lock()
    sizes, kept, errors = {}, {}, []
    gate = threading.Barrier(args.workers + 1)

    fetchers = [Fetcher(prefix, args.timeout) for _ in range(args.workers)]

    def worker(w):
        fetcher = fetchers[w]
        try:
            for j in range(args.warmup):  # untimed: connection, codec set-up, page faults
                one(fetcher, (w * args.warmup + j) % args.sources_count)
        except Exception as error:  # noqa: BLE001 (reported, then the timed loop is skipped)
            errors.append(f"warm-up: {error!r}")
        finally:
            gate.wait()
        while not errors:
            with lock:
                i = next_index[0]
                if i >= args.count:
                    break
                next_index[0] += 1
            try:
                body = one(fetcher, i)
            except Exception as error:  # noqa: BLE001
                errors.append(f"request {i}: {error!r}")
                break
            sizes[i] = len(body)
            if i < keep:
                kept[i] = body
        fetcher.close()

    threads = [threading.Thread(target=worker, args=(w,), daemon=True) for w in range(args.workers)]
    for t in threads:
        t.start()
    gate.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start

    if errors:
        print("\n".join(errors[:10]), file=sys.stderr)
        raise SystemExit(1)
    for i, body in kept.items():
        with open(os.path.join(args.out, f"{i}.{ext}"), "wb") as f:
            f.write(body)
    print(json.dumps({
        "format": "jpeg" if ext == "jpg" else ext,
        "count": args.count,
        "seconds": round(seconds, 4),
        "results_per_second": round(args.count / seconds, 3),
        "mean_bytes": round(sum(sizes.values()) / len(sizes), 1),
        "libvips": f"{pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)}",
        "workers": args.workers,
        "vips_concurrency": args.vips_concurrency or "default",
        "encoder": args.encoder,
    }), flush=True)


if __name__ == "__main__":
    main()
