#!/usr/bin/env bash
# Linux's default TCP congestion control (cubic) for loopback connections during the serving benchmark,
# whatever the machine's default is: `congctl cubic` on the local table's 127.0.0.1 and 127.0.0.0/8
# routes, which new connections over loopback take (nothing else changes). Root only (ip route).
#
#   Benchmarks/serving/loopback_tcp.sh pin       # prints what a new loopback connection gets afterwards
#   Benchmarks/serving/loopback_tcp.sh restore   # the routes as they were
#   Benchmarks/serving/loopback_tcp.sh show      # what a new loopback connection gets now
#
# Why: this machine sets net.ipv4.tcp_congestion_control to bbr. BBR paces every connection's sends at
# its estimate of the path's bandwidth, and with no fq qdisc on lo the kernel paces by itself, with a
# timer: nginx's answers then leave in bursts (`ss -ti` on nginx's sockets: pacing_rate 24-30 Gbit/s,
# so a 4-7 MB PNG source takes 1.3 ms or more), the bursts' softirq work lands on whichever core is
# busy, and the receiving core idles between them. On the 2 cores the origin, the load generator and
# the server share, that cost every fetching server and the fetching codec loop 9-10 % of cold PNG
# throughput (Benchmarks/serving/README.md, "The origin's TCP"); an origin on another machine paces
# on its own cores. cubic is the kernel's default (CONFIG_DEFAULT_TCP_CONG) and Debian's.
#
# The original routes are kept in WEBIMAGE_LOOPBACK_ROUTES (default /tmp/webimage-bench-loopback.routes)
# until `restore`. Exits 1 with a message when it cannot (not root, no ip); the caller then runs on the
# machine's default and its caption says which congestion control the run had.
set -euo pipefail
saved="${WEBIMAGE_LOOPBACK_ROUTES:-/tmp/webimage-bench-loopback.routes}"

# The congestion control of the accepting side of a new loopback connection (nginx's, in the benchmark).
show() {
    python3 - <<'PY'
import socket
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(1)
client = socket.create_connection(listener.getsockname())
accepted, _ = listener.accept()
print(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0")[0].decode())
for s in (accepted, client, listener):
    s.close()
PY
}

loopback_routes() {
    ip route show table local | grep -E '^local 127\.0\.0\.(0/8|1) dev lo( |$)' || true
}

case "${1:-}" in
pin)
    [ "$(id -u)" = 0 ] || { echo "loopback_tcp.sh: needs root (ip route)" >&2; exit 1; }
    command -v ip >/dev/null || { echo "loopback_tcp.sh: no ip (iproute2)" >&2; exit 1; }
    [ -s "$saved" ] || loopback_routes > "$saved"   # the originals, kept across a second pin
    [ -s "$saved" ] || { echo "loopback_tcp.sh: no loopback route in the local table" >&2; rm -f "$saved"; exit 1; }
    while read -r route; do
        # shellcheck disable=SC2086
        ip route change $(sed -E 's/ congctl( lock)? [A-Za-z0-9_]+//' <<< "$route") table local congctl cubic
    done < "$saved"
    show
    ;;
restore)
    [ -s "$saved" ] || exit 0
    while read -r route; do
        # shellcheck disable=SC2086
        ip route change $route table local
    done < "$saved"
    rm -f "$saved"
    ;;
show)
    show
    ;;
*)
    echo "usage: $0 pin|restore|show" >&2
    exit 2
    ;;
esac
