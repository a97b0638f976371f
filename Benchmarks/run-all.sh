#!/usr/bin/env bash
# One full benchmark run, written to BENCHMARKS.md (or the file given): every `bench` group with its
# references in the same run, then `webimage serve` over HTTP against libvips and thumbor
# (serving/serve_bench.py). Run it on a quiet machine: nothing else building or testing.
#   Benchmarks/run-all.sh [REPORT]                (default BENCHMARKS.md at the package root)
# Needs the references the Benchmarks README names (libjpeg-turbo-progs libvips-tools nginx curl wrk
# redis-server) and ../shared/corpus/large beside the package; it sets up the serving venv
# (serving/setup.sh) and its sources (serving/prepare.py) when they are missing. Takes about 11 minutes (plus a few for the first set-up).
set -euo pipefail
cd "$(dirname "$0")/.."
report="$(realpath -m "${1:-BENCHMARKS.md}")"
venv="${WEBIMAGE_BENCH_VENV:-/tmp/webimage-bench-venv}"
seconds="${SERVE_BENCH_SECONDS:-8}"

swift build -c release --product webimage
# The deployment build (Swift's runtime and Foundation linked in: what Vapor's and Swift's own Docker
# images do), measured beside the default one by `bench codecs`; it needs libcurl's development
# link (libcurl4-openssl-dev) for the static FoundationNetworking.
swift build -c release --product webimage --static-swift-stdlib --scratch-path .build/static \
    || echo "run-all: no static build (apt-get install libcurl4-openssl-dev); its rows will say missing" >&2
Benchmarks/nginx/serve.sh start
cleanups=("Benchmarks/nginx/serve.sh stop")
cleanup() { for step in "${cleanups[@]}"; do $step || true; done; }
trap cleanup EXIT
Benchmarks/serving/setup.sh
"$venv/bin/python" Benchmarks/serving/prepare.py

# SwiftPM keeps the bench package's build plan while only the main package's files are added or
# removed, and then fails to find new types: have it planned again.
rm -f Benchmarks/.build/release.yaml Benchmarks/.build/release/description.json
swift run -c release --package-path Benchmarks bench --write "$report"

# The servers' caches on a fresh journaled ext4, as a server's cache disk (state_fs.sh says why), when this
# runs as root; else in the system temporary directory, and the caption says so.
if state_root="$(Benchmarks/serving/state_fs.sh mount)"; then
    cleanups+=("Benchmarks/serving/state_fs.sh unmount")
    state_note="a fresh journaled ext4 (\`serving/state_fs.sh\`)"
else
    state_root="${TMPDIR:-/tmp}"
    state_note="the system temporary directory"
fi
read -r _ state_fs state_cost < <(python3 Benchmarks/serving/create_cost.py "$state_root")
[ "$state_note" = "the system temporary directory" ] && state_note+=" ($state_fs)"
read -r _ _ tmp_cost < <(python3 Benchmarks/serving/create_cost.py "${TMPDIR:-/tmp}")
# Loopback TCP connections (nginx's answers) at Linux's default congestion control, cubic, when this
# runs as root (loopback_tcp.sh says why); else the machine's own, and the caption says which.
machine_cc="$(Benchmarks/serving/loopback_tcp.sh show)"
if loopback_cc="$(Benchmarks/serving/loopback_tcp.sh pin)"; then
    cleanups+=("Benchmarks/serving/loopback_tcp.sh restore")
    loopback_note="${loopback_cc}, the kernel's default, pinned for these runs (\`serving/loopback_tcp.sh\`; this machine's default is ${machine_cc})"
else
    loopback_note="this machine's default, ${machine_cc}"
fi
serving="$(mktemp)"
"$venv/bin/python" Benchmarks/serving/serve_bench.py --seconds "$seconds" --state-root "$state_root" > "$serving" || status=$?
{
    echo
    echo "## \`webimage serve\` over HTTP against libvips and thumbor"
    echo
    echo "Made by \`Benchmarks/serving/serve_bench.py --seconds $seconds\` in the same run, right after the table above"
    echo "(imgproxy's image-servers-benchmark shape: \`wrk -t2 -c2\`, 2040x1356 sources fitted into 512x512, the"
    echo "source's format out; cold: every URL distinct, warm: the same URLs again). Peak RSS: each server with its"
    echo "default settings. The servers' caches and storages were on $state_note: a 24 KB file"
    echo "created, written and renamed there costs ${state_cost} µs of CPU, against ${tmp_cost} µs in ${TMPDIR:-/tmp} (\`serving/create_cost.py\`)."
    echo "Loopback TCP connections (the origin's answers) used ${loopback_note}."
    [ "$machine_cc" = bbr ] && echo "BBR paces a connection's sends even on loopback, which cost every fetching server and the fetching loop 9-10 % of cold PNG throughput on these 2 cores (the serving README, \"The origin's TCP\")."
    echo "Details of every server: \`Benchmarks/serving/README.md\`."
    echo
    cat "$serving"
    [ "${status:-0}" = 0 ] || echo "serve_bench.py exited with status ${status}: a run had errors (shown in the table)."
} >> "$report"
rm -f "$serving"
echo "run-all: wrote $report"
