#!/usr/bin/env bash
# Opens `webimage serve`'s demo page in headless Chromium, saves a screenshot, and checks that every
# image on the page loaded (the page writes "N/M images loaded" into its title once all have settled).
#   scripts/demo-screenshot.sh [OUT.png]        (default: webimage-serve-demo.png)
# Needs Chromium: apt-get install chromium. Not run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-webimage-serve-demo.png}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
[ -n "$browser" ] || { echo "demo-screenshot: Chromium is missing: apt-get install chromium" >&2; exit 1; }
swift build --product webimage >/dev/null
cache="$(mktemp -d)"; log="$(mktemp)"
.build/debug/webimage serve --unsigned --demo --bind 127.0.0.1 --port 0 --cache-dir "$cache" >"$log" 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -rf "$cache" "$log"' EXIT
for _ in $(seq 1 100); do grep -q "^listening on " "$log" && break; sleep 0.1; done
base="$(sed -n 's/^listening on //p' "$log")"
[ -n "$base" ] || { echo "demo-screenshot: the server did not start" >&2; exit 1; }
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=20000)
"$browser" "${flags[@]}" --window-size=1400,2400 --screenshot="$out" "$base/" 2>/dev/null
title="$("$browser" "${flags[@]}" --dump-dom "$base/" 2>/dev/null | sed -n 's:.*<title>\(.*\)</title>.*:\1:p')"
echo "demo-screenshot: $out; $title"
loaded="$(echo "$title" | sed -n 's:.* \([0-9][0-9]*\)/\([0-9][0-9]*\) images loaded.*:\1 \2:p')"
read -r ok total <<<"${loaded:-0 -1}"
[ "$ok" = "$total" ] || { echo "demo-screenshot: only $ok of $total images loaded" >&2; exit 1; }
