#!/usr/bin/env bash
# Runs the whole test suite under ThreadSanitizer (about ten minutes on 2 cores, twenty with both held by other work; too slow for every CI run).
# -D WEBIMAGE_TSAN swaps Synchronization.Mutex for a pthread lock TSan can see (Internal/ThreadSanitizerMutex.swift).
# Any "WARNING: ThreadSanitizer" fails the run. Extra arguments go to `swift test` (e.g. --filter Downloader).
set -euo pipefail
cd "$(dirname "$0")/.."
log="${TSAN_LOG:-/tmp/webimage-tsan.log}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=0 second_deadlock_stack=1}"
# Tests that wait for something give it 5 times longer (TSan slows everything several times over).
export WEBIMAGE_TEST_TIME_SCALE="${WEBIMAGE_TEST_TIME_SCALE:-5}"
# Memory bounds allow 4 times more (TSan's shadow memory is part of the resident size).
export WEBIMAGE_TEST_MEMORY_SCALE="${WEBIMAGE_TEST_MEMORY_SCALE:-4}"
status=0
swift test --sanitize=thread -Xswiftc -DWEBIMAGE_TSAN --scratch-path .build-tsan "$@" 2>&1 | tee "$log" || status=$?
warnings=$(grep -c "WARNING: ThreadSanitizer" "$log" || true)
echo "tsan: ${warnings} ThreadSanitizer warnings, swift test exit status ${status} (log: ${log})"
[ "$status" -eq 0 ] && [ "$warnings" -eq 0 ]
