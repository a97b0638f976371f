#!/usr/bin/env python3
"""Does a cold `webimage serve` stop growing? Its RSS over a long cold run, minute by minute.

    $PY Benchmarks/serving/rss_soak.py [--seconds 300] [--cell jpeg] [--webimage PATH] [--disk-limit MIB]

One server (release build, serve_bench.py's settings: its default flags, --max-inflight 2, a fresh
--cache-dir) under wrk -t2 -c2 with every URL distinct (serve_bench.py's cold paths) for --seconds. The
server's VmRSS is sampled every 2 s. Prints one Markdown table: per minute, the highest RSS seen in it
and the results/s of the whole run; then the growth after the first minute (the highest RSS of the
later minutes minus the first minute's highest) and whether it is within the goal (5 % of the first
minute's peak: the caches are bounded, so a server that keeps growing leaks or fragments). Needs nginx
on 127.0.0.1:8089 with the serving sources (Benchmarks/nginx/serve.sh start; prepare.py) and wrk.
"""
import argparse
import os
import shutil
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import serve_bench  # noqa: E402  (server start and stop, cold paths, wrk)

GROWTH_GOAL = 0.05


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=300)
    parser.add_argument("--cell", default="jpeg", choices=sorted(serve_bench.CELLS))
    parser.add_argument("--webimage", default=os.path.join(serve_bench.REPO, ".build", "release", "webimage"))
    parser.add_argument("--disk-limit", type=int, help="the server's --disk-limit in MiB (default: its own, 1024)")
    options = parser.parse_args()
    args = argparse.Namespace(webimage=options.webimage, startup_timeout=30, thumbor_threadpool=2, wrk="wrk",
                              wrk_timeout=30, seconds=options.seconds,
                              serve_flags=["--disk-limit", str(options.disk_limit)] if options.disk_limit is not None else [])
    work_dir = tempfile.mkdtemp(prefix="rss-soak-")
    proc, port, _ = serve_bench.start_server("webimage", os.path.join(work_dir, "server"), args)
    samples, stop = [], threading.Event()
    started = time.monotonic()

    def sample():
        while not stop.wait(2):
            samples.append((time.monotonic() - started, serve_bench.proc_status_kib(proc.pid, "VmRSS")))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        cold = [serve_bench.path_for("webimage", options.cell, i, cold=True) for i in range(20)]
        result = serve_bench.run_wrk(port, cold, options.cell, 1_000_000, args, work_dir)
    finally:
        stop.set()
        sampler.join()
        serve_bench.stop_all()
        shutil.rmtree(work_dir, ignore_errors=True)   # the server's cache and wrk's logs
    minutes = {}
    for at, kib in samples:
        minute = int(at // 60)
        minutes[minute] = max(minutes.get(minute, 0), kib)
    print(f"| minute | highest RSS | (cell {options.cell}, {result['results_per_second']:.1f} results/s, "
          f"{result['ok']} results, errors {result['requests'] - result['ok']}) |")
    print("|---:|---:|---|")
    for minute in sorted(minutes):
        print(f"| {minute + 1} | {minutes[minute] / 1024:.0f} MiB | |")
    if len(minutes) >= 2:
        first = minutes[min(minutes)]
        later = max(kib for minute, kib in minutes.items() if minute != min(minutes))
        growth = (later - first) / first
        met = "yes" if growth <= GROWTH_GOAL else "no"
        print(f"\nafter the first minute: {(later - first) / 1024:+.0f} MiB ({growth * 100:+.1f} %); "
              f"goal ≤ {GROWTH_GOAL * 100:.0f} %: {met}")


if __name__ == "__main__":
    main()
