#!/usr/bin/env python3
"""A minimal libvips image server: the reference for the HTTP benchmark (serve_bench.py).

    $WEBIMAGE_BENCH_VENV/bin/python Benchmarks/serving/vips_server.py --port PORT

Answers GET /<format>/<index>[?anything] (format jpeg, png, webp or avif; the query is ignored, so
`?n=<counter>` makes distinct URLs) the way one cell of imgproxy's image-servers-benchmark is processed
(vips_reference.py, whose fetcher and encoders this reuses):

    data = GET <sources>/<ext>/<index>.<ext>              (one keep-alive connection to nginx per thread)
    out  = pyvips.Image.thumbnail_buffer(data, 512, height=512)
    body = the imgproxy-style saver for <format>          (vips_reference.ENCODERS["imgproxy"])

with the right Content-Type. No cache of any kind (libvips' operation cache is off too): every request is
a cold one. libvips runs with concurrency 1 per request, as imgproxy runs it. One thread per client
connection (ThreadingHTTPServer, HTTP/1.1 keep-alive); pyvips releases the GIL inside libvips calls.
GET /health answers 200. Errors: 404 for an unknown path, 502 when the source cannot be fetched, 500 when
libvips fails; the reason goes to stderr and the body. Prints `listening on http://127.0.0.1:PORT` once
it accepts; stops on SIGTERM or Ctrl-C.
"""
import argparse
import http.server
import os
import signal
import sys
import threading
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyvips  # noqa: E402

from vips_reference import ENCODERS, EXT, Fetcher  # noqa: E402

CONTENT_TYPE = {"jpg": "image/jpeg", "png": "image/png", "webp": "image/webp", "avif": "image/avif"}


def make_handler(sources, size, timeout):
    local = threading.local()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"   # keep-alive: every answer has a Content-Length

        def log_message(self, format, *args):  # noqa: A002 (the base class's name): no access log
            pass

        def answer(self, status, content_type, body):
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                # the client left (wrk drops the requests under way when its time is up)
                self.close_connection = True

        def fail(self, status, reason):
            print(f"vips_server: {self.path}: {status} {reason}", file=sys.stderr, flush=True)
            self.answer(status, "text/plain; charset=utf-8", (reason + "\n").encode())

        def do_GET(self):  # noqa: N802 (BaseHTTPRequestHandler's name)
            path = urllib.parse.urlsplit(self.path).path
            if path == "/health":
                self.answer(200, "text/plain; charset=utf-8", b"ok\n")
                return
            parts = path.strip("/").split("/")
            if len(parts) != 2 or parts[0] not in EXT or not parts[1].isdigit():
                self.fail(404, "expected /<jpeg|png|webp|avif>/<index>")
                return
            ext = EXT[parts[0]]
            fetcher = getattr(local, "fetcher", None)
            if fetcher is None:
                fetcher = local.fetcher = Fetcher(sources, timeout)
            try:
                data = fetcher.get(f"{ext}/{parts[1]}.{ext}")
            except Exception as error:  # noqa: BLE001 (answered as a 502)
                fetcher.close()
                local.fetcher = None
                self.fail(502, f"source: {error!r}")
                return
            try:
                thumb = pyvips.Image.thumbnail_buffer(data, size, height=size)
                body = ENCODERS["imgproxy"][ext](thumb)
            except pyvips.Error as error:
                self.fail(500, f"libvips: {error}")
                return
            self.answer(200, CONTENT_TYPE[ext], body)

        do_HEAD = do_GET

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=8090, help="0 picks a free one (printed)")
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--sources", default="http://127.0.0.1:8089/serving/div2k/",
                    help="URL prefix holding <ext>/<index>.<ext> (default nginx's /serving/div2k/)")
    ap.add_argument("--size", type=int, default=512, help="the fit box's side (default 512)")
    ap.add_argument("--vips-concurrency", type=int, default=1,
                    help="libvips threads per operation (default 1, as imgproxy sets it; 0 = libvips' default)")
    ap.add_argument("--timeout", type=float, default=30, help="seconds per source fetch (socket timeout)")
    args = ap.parse_args()

    pyvips.cache_set_max(0)
    if args.vips_concurrency > 0:
        pyvips.concurrency_set(args.vips_concurrency)
    sources = args.sources if args.sources.endswith("/") else args.sources + "/"
    Fetcher(sources, args.timeout)  # validates the prefix before listening
    server = http.server.ThreadingHTTPServer((args.bind, args.port), make_handler(sources, args.size, args.timeout))
    server.daemon_threads = True

    def on_term(signum, frame):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
