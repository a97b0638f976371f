#!/usr/bin/env bash
# Leak check: builds the webimage tool with AddressSanitizer (LeakSanitizer included) and runs many
# loads through it — every corpus PNG and JPEG decoded (with thumbnails and transforms), the demo, and
# 2000 fetches through the manager (from nginx on 127.0.0.1:8089 when it runs, else file URLs) —
# then fails if LeakSanitizer reports any leak whose stack mentions WebImage code.
set -euo pipefail
cd "$(dirname "$0")/.."
# (ld.gold warns about ASan's local symbols; only a failing build stops the check)
swift build --sanitize=address --scratch-path .build-asan --product webimage > /tmp/webimage-leaks-build.log 2>&1 \
    || { tail -20 /tmp/webimage-leaks-build.log; exit 1; }
tool="$PWD/.build-asan/debug/webimage"
log="${LEAKS_LOG:-/tmp/webimage-leaks.log}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# fast_unwind_on_malloc=0: whole stacks through C libraries (libcurl has no frame pointers), so a
# leak's owner is visible.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=0:exitcode=0:fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-report_objects=0}"
: > "$log"
run() { echo "leaks: ${*:1:3} ... ($# arguments)" | tee -a "$log"; "$@" >/dev/null 2>>"$log" || true; }

mapfile -t images < <(find ../shared/corpus/png ../shared/corpus/jpeg -type f \( -name '*.png' -o -name '*.jpg' -o -name '*.jpeg' \) -size -2M | sort)
run "$tool" decode --checksum "${images[@]}"
run "$tool" decode --thumbnail 64 --transform "resize=48x48,cover;round=24;blur=2" --out "$work/out" "${images[@]}"
(cd "$work" && run "$tool")
if curl -s -o /dev/null http://127.0.0.1:8089/files/0.jpg 2>/dev/null; then
    urls=(); for i in $(seq 0 999); do urls+=("http://127.0.0.1:8089/files/$i.jpg"); done
else
    urls=("${images[@]:0:1000}")
fi
run "$tool" fetch --cache-dir "$work/cache" --thumbnail 100 "${urls[@]}"
run "$tool" fetch --cache-dir "$work/cache" --transform "flip=h" "${urls[@]}"

summaries=$(grep -c "SUMMARY: AddressSanitizer" "$log" || true)
ours=$(awk '/^(Direct|Indirect) leak/{block=""; inleak=1} inleak{block=block"\n"$0} /^$/{if(inleak && block ~ /WebImage|webimage/) n++; inleak=0} END{print n+0}' "$log")
echo "leaks: ${summaries} sanitizer summaries; ${ours} leak reports involving WebImage code (log: ${log})"
[ "$ours" -eq 0 ]
