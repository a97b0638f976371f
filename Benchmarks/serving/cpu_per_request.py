#!/usr/bin/env python3
"""Where the CPU of a cold request goes: `webimage serve` and the codec loop, per thread group.

    $PY Benchmarks/serving/cpu_per_request.py [--cell png] [--seconds 8] [--rounds 1] [--state-root DIR]
        [--webimage PATH]... [--no-loop]

Each round runs, one after the other, every binary given (--webimage, repeatable: alternating rounds
make an A/B comparison; default the release build) as a fresh `webimage serve` under serve_bench.py's
cold load (wrk -t2 -c2, every URL distinct, the cell's 20 sources from nginx), then the codec loop with
--fetch and alone (codec_loop.sh, unless --no-loop). Per run it prints, in milliseconds per result:

  - the CPU of each thread group of the server (its threads by name without their number, from
    /proc/<pid>/task/*/schedstat: webimage.cold, webimage.http, MHD-worker, webimage.req, the rest),
    of nginx's workers (schedstat too) and of wrk or the loop (their rusage, children of this script);
  - the whole machine meanwhile (/proc/stat): time in the kernel, in softirqs and idle. Softirq time
    is not in any thread's schedstat (the kernel accounts it apart), and idle time is the cores'
    share nobody used: with 2 cores, results/s = 2000 / (all of these).

Needs what serve_bench.py needs (nginx on 127.0.0.1:8089 with prepare.py's sources, wrk). Found with it:
bbr's pacing of nginx's answers on loopback (loopback_tcp.sh; the serving README, "The origin's TCP").
"""
import argparse
import collections
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import serve_bench  # noqa: E402  (its server start-up, paths, wrk run and codec loop)

SERVER_GROUPS = ("webimage.cold", "webimage.http", "MHD-worker", "webimage.req")
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def thread_times(pids):
    """{(pid, tid): (thread name, ns on a CPU)} for every thread of `pids` (schedstat's first field)."""
    times = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except FileNotFoundError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    name = f.read().strip()
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    times[(pid, tid)] = (name, int(f.read().split()[0]))
            except (FileNotFoundError, ProcessLookupError, ValueError):
                pass   # a thread that ended meanwhile
    return times


def grouped_ms(before, after):
    """CPU milliseconds per thread name (its trailing number dropped) between two thread_times()."""
    groups = collections.Counter()
    for key, (name, ns) in after.items():
        groups[re.sub(r"[-.]\d+$", "", name)] += (ns - before.get(key, (name, 0))[1]) / 1e6
    return groups


def machine_ticks():
    with open("/proc/stat") as f:
        return dict(zip(STAT_FIELDS, map(int, f.readline().split()[1:1 + len(STAT_FIELDS)])))


def machine_ms(before, after, seconds):
    """Milliseconds of the 2 cores in each /proc/stat state over the window, scaled to `seconds` of 2 cores."""
    delta = {k: after[k] - before[k] for k in STAT_FIELDS}
    total = sum(delta.values()) or 1
    return {k: delta[k] / total * 2000 * seconds for k in STAT_FIELDS}


def children_cpu_ms():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def nginx_pids():
    return [p for p in os.listdir("/proc") if p.isdigit() and open_comm(p) == "nginx"]


def open_comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def run_server(binary, cell, args, work_dir, serial):
    run_dir = os.path.join(work_dir, f"{serial:02d}-webimage")
    options = argparse.Namespace(webimage=binary, startup_timeout=30, thumbor_threadpool=2, serve_flags=[],
                                 wrk="wrk", seconds=args.seconds, wrk_timeout=30)
    proc, port, _ = serve_bench.start_server("webimage", run_dir, options)
    try:
        expect = serve_bench.CELLS[cell][2]
        for i in range(2):
            serve_bench.check(port, serve_bench.path_for("webimage", cell, i, True).replace("{n}", str(serve_bench.PREWARM_N + i)), expect)
        paths = [serve_bench.path_for("webimage", cell, i, True) for i in range(serve_bench.SOURCES)]
        pids = [proc.pid] + nginx_pids()
        threads, ticks, children = thread_times(pids), machine_ticks(), children_cpu_ms()
        result = serve_bench.run_wrk(port, paths, cell, 0, options, run_dir)
        threads_after, ticks_after, children_after = thread_times(pids), machine_ticks(), children_cpu_ms()
    finally:
        serve_bench.stop_server(proc)
    results = result["ok"]
    if results == 0:
        raise RuntimeError(f"{binary}: no good response ({result['statuses']})")
    groups = grouped_ms(threads, threads_after)
    server = {name: ms for name, ms in groups.items() if name != "nginx"}
    row = {group: server.pop(group, 0.0) / results for group in SERVER_GROUPS}
    row["other server threads"] = sum(server.values()) / results
    row["nginx"] = groups.get("nginx", 0.0) / results
    row["wrk or the loop"] = (children_after - children) / results
    return result["results_per_second"], row, machine_ms(ticks, ticks_after, result["seconds"] / results)


def run_loop(cell, args, fetch):
    pids = nginx_pids()
    threads, ticks, children = thread_times(pids), machine_ticks(), children_cpu_ms()
    result = serve_bench.measure_codec(cell, argparse.Namespace(codec_loop=serve_bench.CODEC_LOOP, seconds=args.seconds), fetch=fetch)
    threads_after, ticks_after, children_after = thread_times(pids), machine_ticks(), children_cpu_ms()
    if "failed" in result:
        raise RuntimeError(result["failed"])
    results = result["ok"]
    row = {group: 0.0 for group in SERVER_GROUPS}
    row["other server threads"] = 0.0
    row["nginx"] = grouped_ms(threads, threads_after).get("nginx", 0.0) / results
    # The loop's rusage includes reading its 20 sources before the clock: a few milliseconds in all.
    row["wrk or the loop"] = (children_after - children) / results
    return result["results_per_second"], row, machine_ms(ticks, ticks_after, result["seconds"] / results)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cell", default="png", choices=sorted(serve_bench.CELLS))
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=1, help="how many times every run is made, alternating (default 1)")
    parser.add_argument("--webimage", action="append", help="a `webimage` binary (repeatable; default the release build)")
    parser.add_argument("--no-loop", action="store_true", help="measure no codec loop")
    parser.add_argument("--state-root", help="where the servers' caches go (default: the system temporary directory; "
                                             "run-all.sh's servers get a fresh journaled ext4: state_fs.sh)")
    args = parser.parse_args()
    binaries = args.webimage or [os.path.join(serve_bench.REPO, ".build", "release", "webimage")]
    work_dir = tempfile.mkdtemp(prefix="cpu-per-request-", dir=args.state_root)
    serve_bench.log(f"cpu_per_request: cell {args.cell}, {args.seconds} s a run, loopback TCP congestion control "
                    f"{serve_bench.loopback_congestion_control()}, state in {work_dir}")
    rows = []
    try:
        serial = 0
        for _ in range(args.rounds):
            for binary in binaries:
                serial += 1
                rows.append((binary,) + run_server(binary, args.cell, args, work_dir, serial))
            if not args.no_loop:
                rows.append(("codec loop + fetch",) + run_loop(args.cell, args, fetch=True))
                rows.append(("codec loop",) + run_loop(args.cell, args, fetch=False))
    finally:
        serve_bench.stop_all()
        shutil.rmtree(work_dir, ignore_errors=True)
    columns = list(SERVER_GROUPS) + ["other server threads", "nginx", "wrk or the loop"]
    print(f"Cold {args.cell}, milliseconds a result (2 cores: results/s = 2000 / the last column)")
    print()
    print("| run | results/s | " + " | ".join(columns) + " | kernel (all) | softirq | idle | all |")
    print("|---|---:|" + "---:|" * (len(columns) + 4))
    for name, per_second, row, machine in rows:
        cells = " | ".join(f"{row[c]:.2f}" for c in columns)
        print(f"| {name} | {per_second:.1f} | {cells} | {machine['system']:.2f} | {machine['softirq']:.2f} | "
              f"{machine['idle']:.2f} | {sum(machine.values()):.2f} |")


if __name__ == "__main__":
    main()
