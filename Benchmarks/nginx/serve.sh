#!/usr/bin/env bash
# Starts or stops the benchmark nginx on 127.0.0.1:8089, serving ../shared/corpus under /corpus/ and
# generated files under /files/ (1000 × 20 KB JPEG copies and one 100 MB file) and /soak/ (1000 × 137 KB
# PNG copies), the serving benchmark's sources under /serving/ (written by ../serving/prepare.py) and its
# request counter under /status. Started again while running, it reloads the configuration.
#   Benchmarks/nginx/serve.sh start | stop
# Needs nginx (apt-get install nginx).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
runtime="${WEBIMAGE_NGINX_RUNTIME:-/tmp/webimage-bench-nginx}"
corpus="$(cd "$here/../../../shared/corpus" && pwd)"
# The pid file names a live nginx (not a stale pid since taken by another process).
running() {
    [ -f "$runtime/nginx.pid" ] || return 1
    local pid
    pid="$(cat "$runtime/nginx.pid")"
    [ -n "$pid" ] && [ "$(ps -p "$pid" -o comm= 2>/dev/null)" = nginx ]
}
case "${1:-}" in
start)
    command -v nginx >/dev/null || { echo "nginx is missing: apt-get install nginx" >&2; exit 1; }
    mkdir -p "$runtime/files"
    sample="$here/../../Samples/mandelbrot.jpg"
    if [ ! -f "$runtime/files/999.jpg" ]; then
        for i in $(seq 0 999); do cp "$sample" "$runtime/files/$i.jpg"; done
    fi
    mkdir -p "$runtime/soak"
    if [ ! -f "$runtime/soak/999.png" ]; then
        for i in $(seq 0 999); do cp "$here/../../Samples/gradient-rgba.png" "$runtime/soak/$i.png"; done
    fi
    [ -f "$runtime/files/big.bin" ] || head -c 100000000 /dev/urandom > "$runtime/files/big.bin"
    sed -e "s#@RUNTIME@#$runtime#g" -e "s#@CORPUS@#$corpus#g" "$here/nginx.conf.template" > "$runtime/nginx.conf"
    mkdir -p "$runtime/serving"
    if running; then
        nginx -c "$runtime/nginx.conf" -p "$runtime" -s reload
        exit 0
    fi
    nginx -c "$runtime/nginx.conf" -p "$runtime"
    ;;
stop)
    if running; then kill "$(cat "$runtime/nginx.pid")" 2>/dev/null || true; fi
    ;;
*)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
