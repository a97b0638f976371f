#!/usr/bin/env bash
# Builds the fuzzers (debug, libFuzzer + ASan) and runs one target, or all of them one after the other.
#
#   Fuzz/run.sh TARGET SECONDS [libFuzzer flags...]     TARGET: sniff png jpeg exif filename gif webp avif heif request bmp tiff jxl svg
#   Fuzz/run.sh all SECONDS [libFuzzer flags...]        every target, SECONDS each, sequentially
#
# Environment:
#   FUZZ_WORK        working directory (default /tmp/webimage-fuzz): TARGET/corpus (seeded from the
#                    shared corpus, grows across runs), TARGET/artifacts (crash-*, timeout-*, oom-*,
#                    leak-*), TARGET/logs (one libFuzzer log per run).
#   WEBIMAGE_CORPUS  the seed images (default: ../shared/corpus next to the repository).
#   WEBIMAGE_FUZZ_DIFFERENTIAL=0   turn off the incremental == full decode checks in fuzz-png/fuzz-jpeg.
#
# libFuzzer stops at the first crash. The script then keeps going for the time left in libFuzzer's
# fork mode with one worker (-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1), so a
# crash that is found again every few seconds does not end the run: every crash still leaves an
# artifact. One fuzzer process at a time (fork mode runs its single worker as a child).
# At the end, each target's crash reports are grouped by the first stack frame in Sources/.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
corpus_root=${WEBIMAGE_CORPUS:-$(cd "$root/.." && pwd)/shared/corpus}
work=${FUZZ_WORK:-/tmp/webimage-fuzz}
scratch=$here/.build
all_targets=(sniff png jpeg exif filename gif webp avif heif request bmp tiff jxl svg)

usage() { echo "usage: $0 {$(IFS='|'; echo "${all_targets[*]}")|all} SECONDS [libFuzzer flags...]" >&2; exit 2; }
[[ $# -ge 2 && $2 =~ ^[0-9]+$ ]] || usage
target=$1 seconds=$2
shift 2
if [[ $target == all ]]; then targets=("${all_targets[@]}")
elif [[ " ${all_targets[*]} " == *" $target "* ]]; then targets=("$target")
else usage; fi

# Swift's own crash backtracer reads the stack from a helper thread, which ASan reports as a
# stack-buffer-underflow and which hides libFuzzer's report: leave crashes to libFuzzer and ASan.
export SWIFT_BACKTRACE=enable=no

build() {
    echo "== building fuzzers (debug, -sanitize=fuzzer,address) in $scratch"
    local log
    log=$(mktemp)
    # ld.gold warns about every ASan check symbol it cannot export; the warnings are harmless.
    if ! swift build --package-path "$here" --scratch-path "$scratch" -c debug \
        -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=fuzzer-no-link,address >"$log" 2>&1; then
        grep -v "Cannot export local symbol" "$log" >&2
        rm -f "$log"
        echo "build failed" >&2
        exit 1
    fi
    grep -v "Cannot export local symbol" "$log" | tail -n 1
    rm -f "$log"
}

# Copies seed files (at most 1 MB each) into the corpus under content-hash names, once.
seed_from() {
    local dir=$1 corpus=$2 file
    [[ -d $dir ]] || { echo "   (no seed directory $dir)"; return; }
    while IFS= read -r -d '' file; do
        cp -n "$file" "$corpus/seed-$(sha1sum "$file" | cut -c1-40)"
    done < <(find "$dir" -type f -size -1025k -print0)
}

seed() {
    local t=$1 corpus=$2
    case $t in
    png) seed_from "$corpus_root/png/valid" "$corpus"; seed_from "$corpus_root/png/invalid" "$corpus" ;;
    jpeg | exif) seed_from "$corpus_root/jpeg/valid" "$corpus"; seed_from "$corpus_root/jpeg/invalid" "$corpus" ;;
    sniff) for d in png jpeg gif webp; do seed_from "$corpus_root/$d" "$corpus"; done ;;
    gif | webp | avif | heif | tiff | jxl) seed_from "$corpus_root/$t/valid" "$corpus"; seed_from "$corpus_root/$t/invalid" "$corpus" ;;
    svg) seed_from "$here/../scripts/svg-shim/data" "$corpus"; seed_from "$here/../scripts/svg-shim/fixtures" "$corpus" ;;
    bmp) for d in bmp ico; do seed_from "$corpus_root/$d/valid" "$corpus"; seed_from "$corpus_root/$d/invalid" "$corpus"; done ;;
    request)
        # Every option string of imgproxy's ported test cases, as a path with a plain and a base64 source.
        local i=0 options
        while IFS=$'\t' read -r _ _ _ _ options _; do
            printf '/unsafe/%s/plain/http://example.com/a.png@webp' "$options" >"$corpus/case-$i"
            i=$((i + 1))
        done < <(grep -v '^#' "$here/../Tests/WebImageTests/Fixtures/imgproxy/processing-cases.tsv" | tail -n +2)
        printf '/sig/pr:thumb/pr:loop/rs%%3Afit%%3A10/aHR0cDovL2guY29tL3gucG5n.avif' >"$corpus/extra-0"
        printf '/unsafe//plain/https:/h.com/x.jpg@png' >"$corpus/extra-1"
        ;;
    filename)
        local i=0 key
        for key in "https://example.com/images/avatar.png" "https://example.com/a/b.jpg?size=64&v=2" \
            "http://cdn.example.org/photo.JPEG#frag" "file:///var/www/img/logo.gif" "avatar-42" \
            "https://example.com/path.with.dots/file" "https://example.com/x.png?name=y.jpg" \
            "https://example.com/%E2%9C%93.png" "https://example.com/%2Fetc%2Fpasswd" "-thumbnail(64x64)" \
            "https://example.com/a.png-Resize(100x100,fill)" "/local/path/image.webp" ""; do
            printf '%s' "$key" >"$corpus/key-$i"
            i=$((i + 1))
        done
        ;;
    esac
}

flags_for() {
    case $1 in
    sniff) echo "-max_len=2048 -dict=$here/Dictionaries/sniff.dict" ;;
    png) echo "-dict=$here/Dictionaries/png.dict" ;;
    jpeg | exif) echo "-dict=$here/Dictionaries/jpeg.dict" ;;
    filename) echo "-max_len=1024 -dict=$here/Dictionaries/filename.dict" ;;
    request) echo "-max_len=512 -timeout=5 -dict=$here/Dictionaries/request.dict" ;;
    gif) echo "-dict=$here/Dictionaries/gif.dict" ;;
    webp) echo "-dict=$here/Dictionaries/webp.dict" ;;
    avif | heif) echo "-max_len=262144 -dict=$here/Dictionaries/isobmff.dict" ;;
    bmp | tiff | jxl) echo "-max_len=262144" ;;
    svg) echo "-max_len=65536" ;;
    esac
}

artifact_count() { find "$1" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l; }

summaries=()

# Groups the crash reports in libFuzzer logs by error and by the first stack frame in our Sources.
triage() {
    awk '
        /(Fatal error|Precondition failed)/ {
            fatal = $0; sub(/^.*(Fatal error|Precondition failed):? ?/, "", fatal); gsub(/"[^"]*"/, "\"…\"", fatal); fatal = substr(fatal, 1, 160)
            where = $0; sub(/: (Fatal error|Precondition failed).*/, "", where); fatal = where ": " fatal
        }
        /ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)/ { kind = $0; sub(/^.*ERROR: /, "", kind); sub(/ on address.*/, "", kind); pending = 1; next }
        pending && /^ *#[0-9]+ .* in .*\/Sources\// {
            frame = $0; sub(/^ *#[0-9]+ 0x[0-9a-f]+ in /, "", frame)
            site[kind (fatal != "" ? " [" fatal "]" : "") "\n        at " frame]++
            pending = 0; fatal = ""
        }
        /^SUMMARY:/ { if (pending) site[kind " (no frame in Sources/)"]++; pending = 0; fatal = "" }
        END { for (s in site) printf "   %4d x %s\n", site[s], s }
    ' "$@" | swift demangle --simplified
}

summaries=()

run_target() {
    local t=$1 bin=$scratch/debug/fuzz-$1
    shift
    local dir=$work/$t
    local corpus=$dir/corpus artifacts=$dir/artifacts logs=$dir/logs
    mkdir -p "$corpus" "$artifacts" "$logs"
    seed "$t" "$corpus"
    local before started end remaining rc=0 n stamp
    before=$(artifact_count "$artifacts")
    touch "$dir/.started"
    started=$SECONDS
    end=$((SECONDS + seconds))
    stamp=$(date +%Y%m%d-%H%M%S)
    local log=$logs/$stamp.log fork_log=$logs/$stamp-fork.log execs=0 mode="plain"
    echo "== fuzz-$t for ${seconds}s: corpus $corpus ($(find "$corpus" -type f | wc -l) files), artifacts $artifacts, log $log"
    # shellcheck disable=SC2046  # the flags are meant to split
    "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" $(flags_for "$t") "$@" "$corpus" >"$log" 2>&1 || rc=$?
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    execs=$((execs + ${n:-0}))
    remaining=$((end - SECONDS))
    if ((rc != 0)); then
        echo "   libFuzzer stopped after $((SECONDS - started))s (exit $rc): $(grep -m1 -E 'Fatal error|ERROR:' "$log" || echo 'see log')"
        if ((remaining > 0)); then
            echo "   continuing for ${remaining}s in fork mode (1 worker, ignoring crashes), log $fork_log"
            mode="plain+fork"
            rc=0
            # shellcheck disable=SC2046
            "$bin" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
                -max_total_time="$remaining" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
                -artifact_prefix="$artifacts/" $(flags_for "$t") "$@" "$corpus" >"$fork_log" 2>&1 || rc=$?
            # Fork mode prints no final stats; its last status line counts the executions.
            n=$(sed -n 's/^#\([0-9]*\): cov:.*/\1/p' "$fork_log" | tail -n 1)
            execs=$((execs + ${n:-0}))
        fi
    fi
    local elapsed=$((SECONDS - started)) new
    new=$(($(artifact_count "$artifacts") - before))
    ((elapsed > 0)) || elapsed=1
    summaries+=("fuzz-$t: ${elapsed}s, $execs executions, $((execs / elapsed)) exec/s, $new new crash artifact(s) in $artifacts ($mode)")
    echo "${summaries[-1]}"
    if ((new > 0)) || grep -q 'ERROR:' "$log" "$fork_log" 2>/dev/null; then
        # Fork mode logs no stacks: rerun the new crash, leak and OOM artifacts (at most
        # FUZZ_TRIAGE_MAX, default 40). Timeouts are only counted: libFuzzer does not time out a
        # replayed input, and its stack is in the log that found it.
        local replays=$logs/$stamp-replays.log artifact timeouts
        : >"$replays"
        timeouts=$(find "$artifacts" -maxdepth 1 -type f -name 'timeout-*' -newer "$dir/.started" | wc -l)
        ((timeouts == 0)) || echo "   $timeouts new timeout artifact(s); stacks in the logs (grep -A40 ALARM $logs/$stamp*)"
        find "$artifacts" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'oom-*' \) \
            -newer "$dir/.started" -printf '%T@ %p\n' | sort -rn |
            head -n "${FUZZ_TRIAGE_MAX:-40}" | cut -d' ' -f2- | while IFS= read -r artifact; do
                timeout 120 "$bin" -runs=1 -rss_limit_mb=2048 "$artifact" >>"$replays" 2>&1 </dev/null || true
            done
        echo "   crash sites of the new artifacts (count x error, first frame in Sources/):"
        triage "$replays"
    fi
}

build
for t in "${targets[@]}"; do run_target "$t" "$@"; done
echo "== summary"
printf '%s\n' "${summaries[@]}"
