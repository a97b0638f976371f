#!/usr/bin/env python3
"""Warm hits while `webimage serve` is saturated with cold work, against the same server idle.

    $PY Benchmarks/serving/warm_under_load.py [--seconds 8] [--cell jpeg] [--webimage PATH]
        [--serve-flag=--realtime-http]... [--client-class realtime|normal] [--state-root DIR]

One server (release build, serve_bench.py's settings). Its warm paths (20 sources fitted into
512x512, imgproxy's benchmark shape) are requested once so that they are cached. Then a client
(wrk, 1 thread, 1 connection, --latency) asks for them for --seconds on the idle server, and again
while two more connections (wrk -t2 -c2) keep it busy with cold requests (every URL distinct). It
prints one Markdown table: the warm client's p50/p99 and 429s idle and under load, their ratio (the
goal: p99 under load at most 3x idle, and no 429), and the cold load's results/s. Needs nginx on
127.0.0.1:8089 with the serving sources (Benchmarks/nginx/serve.sh start; prepare.py) and wrk.

The warm client stands for a client on another machine, but here it shares the two cores with the
server's cold work, in a session (and so a scheduling autogroup) of its own: woken by an answer, it
may wait for the next scheduler tick (4 ms) before it reads it, and that wait is the client's, not
the server's. So by default (--client-class realtime, where `chrt -f 1` is permitted) the warm
client runs in SCHED_FIFO 1, idle and under load alike; --client-class normal measures it as an
ordinary process. The table says which.

Where the server's cache lives counts as much: each cold request creates a file, and a file created
on this machine's root file system (an ext4 without a journal whose block groups builds and tests
churn: state_fs.sh) holds the core in the kernel for 60-700 µs, which a kernel without preemption
does not interrupt for a warm answer (perf: the long waits of libmicrohttpd's threads ended when a
cold thread returned from open(2), in recently_deleted()). --state-root puts it on the file system
serve_bench.py's servers get (run-all.sh: a fresh journaled ext4, 40 µs a file).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import serve_bench  # noqa: E402  (its server start-up, paths and wrk script)


def milliseconds(text):
    value = float(re.match(r"[\d.]+", text).group(0))
    unit = text[len(re.match(r"[\d.]+", text).group(0)):]
    return {"us": value / 1000, "ms": value, "s": value * 1000, "m": value * 60_000}[unit]


def realtime_permitted():
    """Whether `chrt -f 1` may start a process here (CAP_SYS_NICE or RLIMIT_RTPRIO >= 1)."""
    try:
        return subprocess.run(["chrt", "-f", "1", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def wrk(port, paths, cell, n_base, seconds, connections, run_dir, name, realtime=False):
    paths_file = os.path.join(run_dir, f"{name}.txt")
    with open(paths_file, "w") as f:
        f.write("\n".join(paths) + "\n")
    env = dict(os.environ, WRK_PATHS_FILE=paths_file, WRK_EXPECT_TYPE=serve_bench.CELLS[cell][2],
               WRK_THREADS=str(min(connections, 2)), WRK_N_BASE=str(n_base))
    command = (["chrt", "-f", "1"] if realtime else []) + ["wrk", f"-t{min(connections, 2)}", f"-c{connections}", f"-d{seconds}s", "--timeout", "30s", "--latency",
               "-s", os.path.join(HERE, "wrk_paths.lua"), f"http://127.0.0.1:{port}"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=seconds + 90)
    text = done.stdout
    found = re.search(r"wrk_paths: requests=(\d+) ok=(\d+) bad_status=(\d+)", text)
    statuses = re.search(r"statuses=(\S*)", text)
    # wrk --latency: "Latency Distribution" lines such as "     99%    1.23ms" (the Stdev column has % too).
    p50, p99 = re.search(r"^\s+50%\s+([\d.]+[a-z]+)\s*$", text, re.M), re.search(r"^\s+99%\s+([\d.]+[a-z]+)\s*$", text, re.M)
    if done.returncode != 0 or not found or not p50 or not p99:
        raise RuntimeError(f"wrk: {done.returncode} {done.stderr}\n{text}")
    refused = re.search(r"429:(\d+)", statuses.group(1)) if statuses else None
    requests, ok = int(found.group(1)), int(found.group(2))
    return {"requests": requests, "ok": ok, "p50": milliseconds(p50.group(1)), "p99": milliseconds(p99.group(1)),
            "refused": int(refused.group(1)) if refused else 0, "seconds": seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--cell", default="jpeg", choices=sorted(serve_bench.CELLS))
    parser.add_argument("--webimage", default=os.path.join(serve_bench.REPO, ".build", "release", "webimage"))
    parser.add_argument("--serve-flag", action="append", default=[],
                        help="a flag for `webimage serve` (repeatable), such as --serve-flag=--realtime-http")
    parser.add_argument("--state-root", help="where the server's work directory (its cache) is made (default: the system "
                                             "temporary directory); give it a fresh journaled ext4 (state_fs.sh), as "
                                             "serve_bench.py's --state-root: see the docstring")
    parser.add_argument("--client-class", choices=["realtime", "normal"],
                        help="the warm client's scheduling class (default: realtime where permitted)")
    options = parser.parse_args()
    permitted = realtime_permitted()
    client_class = options.client_class or ("realtime" if permitted else "normal")
    if client_class == "realtime" and not permitted:
        parser.error("--client-class realtime: `chrt -f 1` is not permitted here")
    realtime = client_class == "realtime"
    args = argparse.Namespace(webimage=options.webimage, startup_timeout=30, thumbor_threadpool=2,
                              serve_flags=options.serve_flag)
    work_dir = tempfile.mkdtemp(prefix="warm-under-load-", dir=options.state_root)
    proc, port, _ = serve_bench.start_server("webimage", os.path.join(work_dir, "server"), args)
    try:
        warm = [serve_bench.path_for("webimage", options.cell, i, cold=False) for i in range(20)]
        cold = [serve_bench.path_for("webimage", options.cell, i, cold=True) for i in range(20)]
        for path in warm:
            serve_bench.check(port, path, serve_bench.CELLS[options.cell][2])
        idle = wrk(port, warm, options.cell, 0, options.seconds, 1, work_dir, "idle", realtime)
        load = {}
        background = threading.Thread(target=lambda: load.update(
            wrk(port, cold, options.cell, 1_000_000, options.seconds + 2, 2, work_dir, "cold")))
        background.start()
        busy = wrk(port, warm, options.cell, 0, options.seconds, 1, work_dir, "busy", realtime)
        background.join()
    finally:
        serve_bench.stop_all()
        shutil.rmtree(work_dir, ignore_errors=True)   # the server's cache and wrk's logs
    ratio = busy["p99"] / idle["p99"] if idle["p99"] else float("inf")
    met = "yes" if ratio <= 3 and busy["refused"] == 0 else "no"
    print(f"| binary | server flags | warm client | warm p50 idle | warm p99 idle | warm p50 under cold load | warm p99 under cold load | p99 ratio | 429s | "
          f"cold results/s meanwhile | goal (≤ 3×, no 429) met |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    print(f"| {options.webimage} | {' '.join(options.serve_flag) or '(defaults)'} | {client_class} | {idle['p50']:.2f} ms | {idle['p99']:.2f} ms | {busy['p50']:.2f} ms | {busy['p99']:.2f} ms | "
          f"{ratio:.1f}× | {busy['refused']} | {load.get('ok', 0) / load.get('seconds', 1):.1f} | {met} |")


if __name__ == "__main__":
    main()
