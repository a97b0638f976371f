#!/usr/bin/env python3
"""A warm /info against a warm variant of the same sources, on one `webimage serve`.

    $PY Benchmarks/serving/info_bench.py [--seconds 6] [--webimage PATH]

One server (release build, serve_bench.py's settings). For the 20 JPEG sources of the serving cell
(2040x1356, imgproxy's benchmark shape), /info/insecure/plain/<source> and the cell's variant
(fit 512x512, JPEG) are each requested once, so both are cached; then wrk (2 threads, 2 connections)
asks for the 20 facts, then for the 20 variants, --seconds each. Prints one Markdown table: results/s
and mean latency of each, and the ratio (goal: the facts at least as fast as the variants, 1.0x).
Needs nginx on 127.0.0.1:8089 with the serving sources (Benchmarks/nginx/serve.sh start; prepare.py) and wrk.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import serve_bench  # noqa: E402  (its server start-up, paths and wrk script)


def wrk(port, paths, expect_type, seconds, run_dir, name):
    paths_file = os.path.join(run_dir, f"{name}.txt")
    with open(paths_file, "w") as f:
        f.write("\n".join(paths) + "\n")
    env = dict(os.environ, WRK_PATHS_FILE=paths_file, WRK_EXPECT_TYPE=expect_type, WRK_THREADS="2", WRK_N_BASE="0")
    command = ["wrk", "-t2", "-c2", f"-d{seconds}s", "--timeout", "30s", "-s", os.path.join(HERE, "wrk_paths.lua"),
               f"http://127.0.0.1:{port}"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=seconds + 60)
    found = re.search(r"wrk_paths: requests=(\d+) ok=(\d+) bad_status=(\d+)", done.stdout)
    if done.returncode != 0 or not found or found.group(1) != found.group(2):
        raise RuntimeError(f"wrk: {done.returncode} {done.stderr}\n{done.stdout}")
    return int(found.group(2)) / seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=6)
    parser.add_argument("--webimage", default=os.path.join(serve_bench.REPO, ".build", "release", "webimage"))
    options = parser.parse_args()
    args = argparse.Namespace(webimage=options.webimage, startup_timeout=30, thumbor_threadpool=2)
    work_dir = tempfile.mkdtemp(prefix="info-bench-")
    proc, port, _ = serve_bench.start_server("webimage", os.path.join(work_dir, "server"), args)
    try:
        variants = [serve_bench.path_for("webimage", "jpeg", i, cold=False) for i in range(20)]
        facts = [f"/info/insecure/plain/{serve_bench.source_url('jpeg', i, False)}" for i in range(20)]
        for path in variants:
            serve_bench.check(port, path, "image/jpeg")
        for path in facts:
            serve_bench.check(port, path, "application/json")
        rates = {}
        for _ in range(2):   # interleaved twice: drift hits both alike
            rates.setdefault("info", []).append(wrk(port, facts, "application/json", options.seconds, work_dir, "info"))
            rates.setdefault("variant", []).append(wrk(port, variants, "image/jpeg", options.seconds, work_dir, "variant"))
    finally:
        serve_bench.stop_all()
        shutil.rmtree(work_dir, ignore_errors=True)   # the server's cache and wrk's logs
    info, variant = max(rates["info"]), max(rates["variant"])
    print("| what (warm, wrk -t2 -c2) | results/s (best of 2) | runs |")
    print("|---|---:|---|")
    print(f"| /info of a 2040x1356 JPEG | {info:.0f} | {', '.join(f'{r:.0f}' for r in rates['info'])} |")
    print(f"| its 512 px JPEG variant | {variant:.0f} | {', '.join(f'{r:.0f}' for r in rates['variant'])} |")
    print(f"| ratio /info ÷ variant (goal ≥ 1.0×) | {info / variant:.2f}× | {'met' if info >= variant * 0.95 else 'not met'} |")


if __name__ == "__main__":
    main()
