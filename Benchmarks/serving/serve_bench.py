#!/usr/bin/env python3
"""HTTP benchmark in the shape of imgproxy's image-servers-benchmark, with wrk, against three servers and
a C loop of the codec work alone.

    $WEBIMAGE_BENCH_VENV/bin/python Benchmarks/serving/serve_bench.py [--seconds 10] \
        [--cells jpeg,png,webp,avif] [--servers webimage,codec,fetch,vips,thumbor]

The shape (github.com/imgproxy/image-servers-benchmark): 2 concurrent clients (one per core), DIV2K-sized
photos (nginx's /serving/div2k/<ext>/0..19, 2040×1356, written by prepare.py) fitted into 512×512, the output
in the source's format, quality 80 JPEG, 75 WebP, 65 AVIF (PNG: none). One cell per format; each cell is
measured with `wrk -t2 -c2 -d<seconds>s` (wrk_paths.lua walks the paths) against

  webimage  the release `webimage serve --unsigned --max-inflight 2` (build it first:
            swift build -c release --product webimage), a fresh --cache-dir per run;
            /insecure/rs:fit:512:512/q:Q/plain/http://127.0.0.1:8089/serving/div2k/<ext>/<i>.<ext>@<ext>
  vips      vips_server.py: pyvips thumbnail_buffer + imgproxy's encoder settings, no cache;
            /<cell>/<i>
  thumbor   thumbor 7.8, 1 process, ENGINE_THREADPOOL_SIZE 2, thumbor_bench.py's configuration (PIL engine,
            file storage and file result storage with RESULT_STORAGE_STORES_UNSAFE), a fresh state directory
            per run; /unsafe/fit-in/512x512/filters:format(<fmt>):quality(Q)/http://127.0.0.1:8089/...

and, as the ceiling webimage's cold requests are held to (issue 27: at least 0.8x of it),

  codec     codec_loop.sh CELL SECONDS: codec_loop.c, a C program on 2 threads (no HTTP, no cache) that
            does only the codec work of one cold webimage request, through the same C the server calls
            (compiled from Sources/: CJPEG, CPNG, CWebP, CAVIF, CPixels): decode at the server's
            shrink-on-load scale, the Resampler's area average to 512x340, encode with the server's
            settings (its outputs are byte for byte the server's). The 20 sources are read from disk
            ($WEBIMAGE_NGINX_RUNTIME/serving/div2k, the files nginx serves) into memory before the clock.
            Cold rows only (its warm row is "—"); built in the preflight into .build-codec/ with -O2 by
            clang (SwiftPM's compiler for the same C files) when it is on PATH, else gcc.
  fetch     the same loop with --fetch: each iteration first GETs its source from nginx on a kept-alive
            connection per thread (the request the server makes, read into a buffer of its Content-Length),
            then does the codec work: the least any server that fetches its sources over HTTP pays. Its
            ratio has no goal; it shows how much of the gap to the codec loop is the fetch itself.

in two modes, each on a freshly started server:

  cold  every request a URL never asked before: the source URL gets `?n=<counter>` (percent-encoded inside
        webimage's and thumbor's paths; nginx ignores it), so each request fetches, decodes, resizes and
        encodes. Before the clock, 2 requests with URLs outside the run warm the process (not its caches).
  warm  a warm-up pass asks for the 20 plain URLs (twice, checking each answer), then wrk cycles over them,
        so every request is served from the server's cache. vips_server has no cache: its warm row repeats
        its cold result (marked "= cold").

The servers' state (webimage's cache directory, thumbor's storages, logs) goes to a new directory under
--state-root (default: the system temporary directory). Both caching servers create a file for every cold
request, so the file system there counts: run-all.sh passes a fresh journaled ext4 (state_fs.sh), as this
machine's journal-less root ext4 charges 60-700 µs of CPU for a file create (create_cost.py; the README says
why). The log's first line gives the file system and what a create costs in it, and the TCP congestion
control of loopback connections: run-all.sh pins Linux's default, cubic (loopback_tcp.sh), as this machine's
bbr paces nginx's answers on loopback and cost every fetching server 9-10 % of cold PNG (the README says why).

Each run checks every response (status 200 and the cell's Content-Type; anything else is an error, shown
in the table and never counted as a result), counts the origin fetches through nginx's /status (a cold run
should fetch once per request, a warm one never; a mismatch is reported on stderr), and samples the peak
RSS of the server: VmHWM from /proc/<pid>/status, summed over every process of its process group (thumbor
would fork children with --processes > 1; each server runs in a session of its own). results/s = good
responses / wrk's duration. Every server started is stopped (SIGTERM to its process group, SIGKILL after
10 s) whatever happens, Ctrl-C and SIGTERM included.

Prints ONE Markdown table on stdout (results/s per server, webimage's ratios to libvips, thumbor and the
codec loop with their goals: >= 1.5x libvips, >= 3x thumbor, >= 0.8x the codec loop in cold rows, and peak
RSS); the per-run details (wrk's numbers, latencies, mean body bytes, origin fetches; the codec loop's JSON
line and peak RSS) go to stderr. Exits 1 when any run had errors or failed.
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import create_cost  # noqa: E402  (what a file create costs where the servers keep their state)
import thumbor_bench  # noqa: E402  (thumbor's configuration, start and stop; stop() serves every server)

REPO = os.path.dirname(os.path.dirname(HERE))
ORIGIN = "http://127.0.0.1:8089"
SOURCES = 20
SIZE = 512

# cell -> (extension, quality or None, Content-Type, thumbor's format name)
CELLS = {
    "jpeg": ("jpg", 80, "image/jpeg", "jpeg"),
    "png": ("png", None, "image/png", "png"),
    "webp": ("webp", 75, "image/webp", "webp"),
    "avif": ("avif", 65, "image/avif", "avif"),
}
SERVERS = ("webimage", "codec", "fetch", "vips", "thumbor")
LOOPS = ("codec", "fetch")   # the C loop (codec_loop.sh): alone, and fetching each source from nginx first
HTTP_SERVERS = ("webimage", "vips", "thumbor")   # run under wrk; "codec" is the C loop (codec_loop.sh)
LABEL = {"webimage": "webimage", "codec": "codec loop", "fetch": "codec loop + fetch", "vips": "libvips", "thumbor": "thumbor"}
GOAL_VIPS, GOAL_THUMBOR, GOAL_CODEC = 1.5, 3.0, 0.8
CODEC_LOOP = os.path.join(HERE, "codec_loop.sh")
LOOPBACK_TCP = os.path.join(HERE, "loopback_tcp.sh")


def loopback_congestion_control():
    """The TCP congestion control a new loopback connection gets (loopback_tcp.sh show), or "unknown"."""
    try:
        out = subprocess.run(["bash", LOOPBACK_TCP, "show"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"
PREWARM_N = 999_000_000   # the cold pre-warm requests' counters: outside any run's (wrk_paths.lua)

STARTED = []   # every server Popen, stopped in the end whatever happens


def log(message):
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- paths

def source_url(cell, i, cold):
    ext = CELLS[cell][0]
    return f"{ORIGIN}/serving/div2k/{ext}/{i}.{ext}" + ("%3Fn%3D{n}" if cold else "")


def path_for(server, cell, i, cold):
    """The request path; "{n}" (cold) is filled in by wrk_paths.lua or prewarm()."""
    ext, quality, _, thumbor_format = CELLS[cell]
    if server == "webimage":
        q = f"/q:{quality}" if quality else ""
        return f"/insecure/rs:fit:{SIZE}:{SIZE}{q}/plain/{source_url(cell, i, cold)}@{ext}"
    if server == "thumbor":
        q = f":quality({quality})" if quality else ""
        return f"/unsafe/fit-in/{SIZE}x{SIZE}/filters:format({thumbor_format}){q}/{source_url(cell, i, cold)}"
    return f"/{cell}/{i}" + ("?n={n}" if cold else "")


# ---------------------------------------------------------------- processes

group_pids = thumbor_bench.group_pids


def proc_status_kib(pid, field):
    """A kB line of /proc/<pid>/status (VmHWM: the peak RSS, VmRSS: the RSS now); 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def vm_hwm_kib(pid):
    return proc_status_kib(pid, "VmHWM")


class PeakRSS:
    """Samples the sum of VmHWM over a process group every 0.25 s (and on demand); keeps the maximum."""

    def __init__(self, pgid):
        self.pgid, self.peak_kib, self.processes = pgid, 0, 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def sample(self):
        pids = group_pids(self.pgid)
        total = sum(vm_hwm_kib(pid) for pid in pids)
        self.peak_kib = max(self.peak_kib, total)
        self.processes = max(self.processes, len(pids))

    def run(self):
        while not self.stopped.wait(0.25):
            self.sample()

    def stop(self):
        self.sample()
        self.stopped.set()
        self.thread.join()


def http_get(port, path, timeout=60):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read()
    finally:
        conn.close()


def tail(path, lines=20):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def wait_ready(proc, port, health, timeout, log_path):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode} before it was ready:\n{tail(log_path)}")
        try:
            if http_get(port, health, timeout=2)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"not ready after {timeout} s:\n{tail(log_path)}")


def start_server(server, run_dir, args):
    """Starts `server` on a free port with its state under run_dir; returns (Popen, port, log path)."""
    os.makedirs(run_dir)
    port = thumbor_bench.free_port()
    log_path = os.path.join(run_dir, "server.log")
    if server == "thumbor":
        conf = os.path.join(run_dir, "thumbor.conf")
        thumbor_bench.write_config(conf, os.path.join(run_dir, "state"), threadpool=args.thumbor_threadpool,
                                   max_clients=10)
        proc = thumbor_bench.start(args.thumbor, port, conf, log_path, processes=1)
        health = "/healthcheck"
    else:
        if server == "webimage":
            # The sources are on loopback (nginx), which imgproxy's default source policy refuses.
            command = [args.webimage, "serve", "--unsigned", "--bind", "127.0.0.1", "--source-policy", "loopback", "--port", str(port),
                       "--cache-dir", os.path.join(run_dir, "cache"), "--max-inflight", "2"] + list(getattr(args, "serve_flags", []))
            health = "/health"
        else:
            command = [sys.executable, os.path.join(HERE, "vips_server.py"), "--port", str(port)]
            health = "/health"
        with open(log_path, "w") as out:
            proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
    STARTED.append(proc)
    wait_ready(proc, port, health, args.startup_timeout, log_path)
    if server != "thumbor" and "listening on http://127.0.0.1:" not in tail(log_path, 50):
        raise RuntimeError(f"answers /health but printed no 'listening on':\n{tail(log_path)}")
    return proc, port, log_path


def stop_server(proc):
    if proc.poll() is None or group_pids(proc.pid):
        thumbor_bench.stop(proc)
    if proc in STARTED:
        STARTED.remove(proc)


def stop_all():
    for proc in list(STARTED):
        try:
            stop_server(proc)
        except Exception as error:  # noqa: BLE001 (go on with the others; last resort below)
            log(f"stopping {proc.pid}: {error!r}; SIGKILL")
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


# ---------------------------------------------------------------- one run

def origin_requests():
    """nginx's request counter (this /status request included)."""
    status, _, body = http_get(8089, "/status", timeout=5)
    if status != 200:
        raise RuntimeError(f"nginx /status: HTTP {status}")
    return int(body.decode().splitlines()[2].split()[2])


def check(port, path, expect_type):
    status, content_type, body = http_get(port, path)
    if status != 200 or not content_type.startswith(expect_type):
        raise RuntimeError(f"GET {path}: HTTP {status} {content_type!r}: {body[:200]!r}")
    return len(body)


def run_wrk(port, paths, cell, n_base, args, run_dir):
    paths_file = os.path.join(run_dir, "paths.txt")
    with open(paths_file, "w") as f:
        f.write("\n".join(paths) + "\n")
    env = dict(os.environ, WRK_PATHS_FILE=paths_file, WRK_EXPECT_TYPE=CELLS[cell][2], WRK_THREADS="2",
               WRK_N_BASE=str(n_base))
    command = [args.wrk, "-t2", "-c2", f"-d{args.seconds}s", f"--timeout", f"{args.wrk_timeout}s",
               "-s", os.path.join(HERE, "wrk_paths.lua"), f"http://127.0.0.1:{port}"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.seconds + args.wrk_timeout + 60)
    text = done.stdout
    if done.returncode != 0:
        raise RuntimeError(f"wrk exited with {done.returncode}: {done.stderr.strip()} {text.strip()}")
    found = re.search(r"wrk_paths: requests=(\d+) ok=(\d+) bad_status=(\d+) bad_type=(\d+) body_bytes=(\d+) "
                      r"duration_us=(\d+) statuses=(\S*)", text)
    rps = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if not found or not rps:
        raise RuntimeError(f"cannot read wrk's output:\n{text}\n{done.stderr}")
    requests, ok, bad_status, bad_type, body_bytes, duration_us = map(int, found.groups()[:6])
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    sockets = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    latency = re.search(r"Latency\s+(\S+)\s+(\S+)\s+(\S+)", text)
    socket_errors = sum(map(int, sockets.groups())) if sockets else 0
    return {
        "requests": requests, "ok": ok, "bad_status": bad_status, "bad_type": bad_type,
        "non2xx": int(non2xx.group(1)) if non2xx else 0,
        "socket_errors": socket_errors, "socket_detail": sockets.group(0) if sockets else "",
        "statuses": found.group(7), "seconds": duration_us / 1e6,
        "wrk_rps": float(rps.group(1)), "results_per_second": ok / (duration_us / 1e6),
        "mean_bytes": body_bytes / ok if ok else 0,
        "latency": f"avg {latency.group(1)} stdev {latency.group(2)} max {latency.group(3)}" if latency else "?",
    }


def measure(server, cell, mode, args, work_dir, serial):
    """One server, one cell, one mode on a fresh server. Returns a result dict (with "failed" on failure)."""
    run_dir = os.path.join(work_dir, f"{serial:02d}-{server}-{cell}-{mode}")
    cold = mode == "cold"
    expect_type = CELLS[cell][2]
    proc = None
    rss = None
    try:
        proc, port, log_path = start_server(server, run_dir, args)
        rss = PeakRSS(proc.pid)
        if cold:
            for i in range(2):
                check(port, path_for(server, cell, i, True).replace("{n}", str(PREWARM_N + i)), expect_type)
            paths = [path_for(server, cell, i, True) for i in range(SOURCES)]
        else:
            paths = [path_for(server, cell, i, False) for i in range(SOURCES)]
            for _ in range(2):
                for path in paths:
                    check(port, path, expect_type)
        before = origin_requests()
        result = run_wrk(port, paths, cell, 0, args, run_dir)
        result["origin_fetches"] = origin_requests() - before - 1
        rss.stop()
        result["rss_mib"] = rss.peak_kib / 1024
        result["processes"] = rss.processes
        if proc.poll() is not None:
            result["failed"] = f"the server exited ({proc.returncode}) during the run:\n{tail(log_path)}"
        result["log"] = log_path
        return result
    except Exception as error:  # noqa: BLE001 (a failed run is reported in the table, the others go on)
        return {"failed": f"{error}"}
    finally:
        if rss is not None:
            rss.stopped.set()
        if proc is not None:
            stop_server(proc)
        # The run's files stay until the whole benchmark ends (the work dir goes then). Removing them
        # here taxed the next run: ext4 without a journal (this machine's root) will not reuse an
        # inode freed in the last ~30 s, and checks each such inode, one buffer lookup apiece, before
        # every file it creates: a cold webimage run right after 2000 deletions spent 0.6 ms more of
        # system time per request writing its results (202-212 results/s against 235-245).


def measure_codec(cell, args, fetch=False):
    """The C loop of the codec work alone on one cell (cold only): codec_loop.sh CELL SECONDS, 2 threads;
    with fetch, each iteration first GETs its source from nginx (--fetch PORT, a kept-alive connection per
    thread). Returns a result dict shaped like measure()'s (with "failed" on failure)."""
    command = [args.codec_loop, cell, str(args.seconds), "--threads", "2"]
    if fetch:
        command += ["--fetch", ORIGIN.rsplit(":", 1)[1]]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.seconds + 300)
    except subprocess.TimeoutExpired:
        return {"failed": f"{' '.join(command)}: timed out"}
    line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if done.returncode != 0 or not line.startswith("{"):
        return {"failed": f"{' '.join(command)} exited with {done.returncode}: {done.stderr.strip()} {done.stdout.strip()}"}
    loop = json.loads(line)
    return {
        "codec": True, "json": line, "requests": loop["results"], "ok": loop["results"], "bad_status": 0, "bad_type": 0,
        "socket_errors": 0, "seconds": loop["seconds"], "results_per_second": loop["results_per_second"],
        "mean_bytes": loop["mean_bytes"], "output": loop["output"], "rss_mib": loop["peak_rss_mib"], "processes": 1,
    }


def errors_of(result):
    if result is None:
        return 0
    if "failed" in result:
        return None
    return result["bad_status"] + result["bad_type"] + result["socket_errors"]


def describe(server, cell, mode, r):
    head = f"{LABEL[server]:8} {cell:4} {mode:4}"
    if "failed" in r:
        return f"{head}: FAILED: {r['failed']}"
    if r.get("codec"):
        return (f"{head}: {r['results_per_second']:.2f} results/s ({r['ok']} outputs of {r['output']} in "
                f"{r['seconds']:.2f} s on 2 threads); mean output {r['mean_bytes']:.0f} B; peak RSS "
                f"{r['rss_mib']:.1f} MiB; {r['json']}")
    expected = "≈ requests" if mode == "cold" else "0"
    return (f"{head}: {r['results_per_second']:.2f} results/s ({r['ok']} good of {r['requests']} responses in "
            f"{r['seconds']:.2f} s; wrk Requests/sec {r['wrk_rps']}, non-2xx {r['non2xx']}, wrong type "
            f"{r['bad_type']}, {r['socket_detail'] or 'no socket errors'}; statuses {r['statuses']}); latency "
            f"{r['latency']}; mean body {r['mean_bytes']:.0f} B; origin fetches {r['origin_fetches']} "
            f"(expected {expected}); peak RSS {r['rss_mib']:.1f} MiB over {r['processes']} process(es)")


def sanity(server, mode, r):
    """Warnings about a run whose origin traffic says it was not the mode it claims."""
    if "failed" in r or r.get("codec"):
        return []
    fetched, answered = r["origin_fetches"], r["requests"]
    if mode == "cold" and fetched < answered:
        return [f"{LABEL[server]} cold: {fetched} origin fetches for {answered} responses: some were cache hits"]
    if mode == "cold" and fetched > answered + 4:
        return [f"{LABEL[server]} cold: {fetched} origin fetches for {answered} responses (other nginx traffic?)"]
    if mode == "warm" and server != "vips" and fetched > 0:
        return [f"{LABEL[server]} warm: {fetched} origin fetches during the run: not all served from its cache"]
    return []


# ---------------------------------------------------------------- table

def table(results, cells, servers):
    def rate(server, cell, mode):
        r = results.get((server, cell, mode))
        if server not in servers:
            return "–"
        if server in LOOPS and mode == "warm":
            return "—"   # the loop has no cache: it is a cold reference only
        if r is None:
            return "–"
        if "failed" in r:
            return "FAILED"
        text = f"{r['results_per_second']:.1f}"
        errors = errors_of(r)
        if errors:
            text += f" ({errors} errors)"
        if r.get("same_as_cold"):
            text += " (= cold)"
        return text

    def good(server, cell, mode):
        r = results.get((server, cell, mode))
        if r is None or errors_of(r) != 0:
            return None
        return r["results_per_second"]

    def rss(server, cell, mode):
        r = results.get((server, cell, mode))
        if r is None or "failed" in r:
            return "–"
        text = f"{r['rss_mib']:.0f} MiB"
        if r["processes"] > 1:
            text += f" ({r['processes']} processes)"
        return text + (" (= cold)" if r.get("same_as_cold") else "")

    lines = [
        "| cell | mode | webimage results/s | codec loop results/s | codec loop + fetch results/s | libvips results/s | "
        "thumbor results/s | webimage/codec loop | webimage/(codec loop + fetch) | webimage/libvips | webimage/thumbor | "
        "goal | met | webimage peak RSS | libvips peak RSS | thumbor peak RSS |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|",
    ]
    for cell in cells:
        for mode in ("cold", "warm"):
            ours = good("webimage", cell, mode)
            verdicts, ratios = [], {}
            for other, goal in (("codec", GOAL_CODEC), ("vips", GOAL_VIPS), ("thumbor", GOAL_THUMBOR)):
                if other not in servers or "webimage" not in servers:
                    ratios[other] = "–"
                    continue
                if other == "codec" and mode == "warm":
                    ratios[other] = "—"   # no warm reference: the loop has no cache
                    continue
                theirs = good(other, cell, mode)
                if ours is None or theirs is None or theirs == 0:
                    ratios[other] = "n/a"
                    verdicts.append(None)
                    continue
                ratio = ours / theirs
                ratios[other] = f"{ratio:.2f}×"
                verdicts.append(ratio >= goal)
            # The loop that also fetches each source: what is left once fetching over HTTP is counted (no goal).
            fetched = good("fetch", cell, mode)
            if mode == "warm":
                ratios["fetch"] = "—"
            elif "fetch" not in servers or "webimage" not in servers:
                ratios["fetch"] = "–"
            elif ours is None or not fetched:
                ratios["fetch"] = "n/a"
            else:
                ratios["fetch"] = f"{ours / fetched:.2f}×"
            if not verdicts:
                met = "–"
            elif None in verdicts:
                met = "n/a (errors or failure)"
            else:
                met = "yes" if all(verdicts) else "no"
            goals = f"≥{GOAL_VIPS}× libvips, ≥{GOAL_THUMBOR:.0f}× thumbor"
            if mode == "cold":
                goals = f"≥{GOAL_CODEC}× codec loop, " + goals
            lines.append(
                f"| {cell} | {mode} | {rate('webimage', cell, mode)} | {rate('codec', cell, mode)} | "
                f"{rate('fetch', cell, mode)} | {rate('vips', cell, mode)} | {rate('thumbor', cell, mode)} | "
                f"{ratios['codec']} | {ratios['fetch']} | {ratios['vips']} | "
                f"{ratios['thumbor']} | {goals} | {met} | {rss('webimage', cell, mode)} | "
                f"{rss('vips', cell, mode)} | {rss('thumbor', cell, mode)} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- main

def parse_list(text, allowed, what):
    items = [item.strip() for item in text.split(",") if item.strip()]
    unknown = [item for item in items if item not in allowed]
    if unknown or not items:
        raise SystemExit(f"--{what}: expected a comma-separated subset of {','.join(allowed)}, not {text!r}")
    return items


def preflight(cells, servers, args):
    if "codec" in servers or "fetch" in servers:
        runtime = os.environ.get("WEBIMAGE_NGINX_RUNTIME") or "/tmp/webimage-bench-nginx"
        for cell in cells:
            ext = CELLS[cell][0]
            for i in (0, SOURCES - 1):
                if not os.path.isfile(os.path.join(runtime, "serving", "div2k", ext, f"{i}.{ext}")):
                    raise SystemExit(f"no {runtime}/serving/div2k/{ext}/{i}.{ext} for the codec loop: run prepare.py")
        built = subprocess.run([args.codec_loop, "build"], capture_output=True, text=True)
        if built.returncode != 0:
            raise SystemExit(f"{args.codec_loop} build failed:\n{built.stderr}")
    if not any(server in HTTP_SERVERS for server in servers):
        return
    if not shutil.which(args.wrk):
        raise SystemExit(f"no {args.wrk}: apt-get install wrk")
    if "webimage" in servers and not os.access(args.webimage, os.X_OK):
        raise SystemExit(f"no {args.webimage}: cd {REPO} && swift build -c release --product webimage")
    if "thumbor" in servers and not os.access(args.thumbor, os.X_OK):
        raise SystemExit(f"no thumbor at {args.thumbor}: run this with the venv's python (setup.sh) or pass --thumbor")
    if "vips" in servers:
        try:
            import pyvips  # noqa: F401
        except ImportError:
            raise SystemExit("no pyvips: run this with the venv's python (setup.sh)") from None
    try:
        origin_requests()
    except (OSError, RuntimeError) as error:
        raise SystemExit(f"nginx on :8089 does not answer /status ({error}): Benchmarks/nginx/serve.sh start") from None
    for cell in cells:
        ext = CELLS[cell][0]
        for i in (0, SOURCES - 1):
            status, _, _ = http_get(8089, f"/serving/div2k/{ext}/{i}.{ext}", timeout=5)
            if status != 200:
                raise SystemExit(f"nginx has no /serving/div2k/{ext}/{i}.{ext} (HTTP {status}): run prepare.py")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=10, help="wrk's -d per run (default 10)")
    ap.add_argument("--cells", default="jpeg,png,webp,avif", help="default jpeg,png,webp,avif")
    ap.add_argument("--servers", default="webimage,codec,fetch,vips,thumbor", help="default webimage,codec,fetch,vips,thumbor")
    ap.add_argument("--webimage", default=os.path.join(REPO, ".build", "release", "webimage"),
                    help="the webimage executable (default: the release build in the package)")
    ap.add_argument("--thumbor", default=os.path.join(os.path.dirname(sys.executable), "thumbor"),
                    help="the thumbor executable (default: the one beside this python)")
    ap.add_argument("--thumbor-threadpool", type=int, default=2, help="ENGINE_THREADPOOL_SIZE (default 2)")
    ap.add_argument("--codec-loop", default=CODEC_LOOP, help="the codec loop's script (default: codec_loop.sh here)")
    ap.add_argument("--wrk", default="wrk")
    ap.add_argument("--wrk-timeout", type=int, default=30,
                    help="wrk's --timeout in seconds (default 30; wrk's own 2 s would count slow answers as errors)")
    ap.add_argument("--startup-timeout", type=float, default=30)
    ap.add_argument("--work-dir", help="where the servers' caches and logs go (default: a new directory under --state-root)")
    ap.add_argument("--state-root", help="where the new work directory is made (default: the system temporary directory; "
                                         "run-all.sh gives a fresh journaled ext4, state_fs.sh: see the README)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory after the benchmark (each run's caches, logs, wrk paths; they stay until the end either way)")
    args = ap.parse_args()
    cells = parse_list(args.cells, tuple(CELLS), "cells")
    servers = parse_list(args.servers, SERVERS, "servers")
    preflight(cells, servers, args)

    def on_signal(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="serve-bench-", dir=args.state_root)
    os.makedirs(work_dir, exist_ok=True)
    log(f"serve_bench: the servers' state goes to {work_dir} ({create_cost.fs_type(work_dir)}, "
        f"{create_cost.cost_us(work_dir):.0f} µs of CPU to create, write and rename a 24 KB file: create_cost.py)")
    with open("/proc/loadavg") as f:
        log(f"serve_bench: load average {' '.join(f.read().split()[:3])} on {os.cpu_count()} cores; "
            f"{args.seconds} s per run; cells {','.join(cells)}; servers {','.join(servers)}; work dir {work_dir}; "
            f"loopback TCP congestion control {loopback_congestion_control()} (loopback_tcp.sh: run-all.sh pins cubic)")
    results, warnings, serial = {}, [], 0
    try:
        for cell in cells:
            for mode in ("cold", "warm"):
                for server in SERVERS:
                    if server not in servers:
                        continue
                    if server in LOOPS:
                        if mode == "cold":
                            r = measure_codec(cell, args, fetch=server == "fetch")
                            results[(server, cell, mode)] = r
                            log(describe(server, cell, mode, r))
                        continue
                    if server == "vips" and mode == "warm":
                        cold = results.get(("vips", cell, "cold"))
                        if cold is not None:
                            results[("vips", cell, "warm")] = dict(cold, same_as_cold=True)
                        continue
                    serial += 1
                    r = measure(server, cell, mode, args, work_dir, serial)
                    results[(server, cell, mode)] = r
                    log(describe(server, cell, mode, r))
                    for warning in sanity(server, mode, r):
                        log(f"WARNING: {warning}")
                        warnings.append(warning)
    except KeyboardInterrupt:
        log("serve_bench: interrupted; stopping the servers")
        stop_all()
        raise SystemExit(130)
    finally:
        stop_all()
        if not args.keep and not args.work_dir:
            shutil.rmtree(work_dir, ignore_errors=True)

    print(table(results, cells, servers), flush=True)
    bad = [key for key, r in results.items() if errors_of(r) != 0]
    if bad:
        log("runs with errors or failures: " + ", ".join(f"{LABEL[s]} {c} {m}" for s, c, m in bad))
    if warnings:
        log(f"{len(warnings)} warning(s) above")
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
