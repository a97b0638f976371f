#!/usr/bin/env bash
# Checks every corpus file of the given formats (default: all) through the release build of
# `webimage decode`, as a user would: each valid file's first frame against expected_rgba_sha256, its
# upright pixels (--orient) against oriented_rgba_sha256, every binding FRAMES.tsv row (--frames), and
# each invalid file fails with an error line. Prints one line per mismatch and a summary; exit 1 on any.
#   scripts/corpus-check.sh [GIF WEBP AVIF ...]
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=../shared/corpus
swift build -c release --product webimage >/dev/null
tool=.build/release/webimage
formats="${*:-PNG JPEG GIF WEBP AVIF HEIF}"
failures=0 checked=0
for format in $formats; do
    while IFS=$'\t' read -r path valid expected oriented; do
        checked=$((checked + 1))
        line=$("$tool" decode --checksum "$corpus/$path" 2>/dev/null | tail -1 || true)
        if [ "$valid" = yes ]; then
            got=$(printf '%s' "$line" | awk -F'\t' '{print $NF}')
            if [ "$expected" != "-" ] && [ "$got" != "$expected" ]; then echo "MISMATCH $path: $got"; failures=$((failures + 1)); fi
            if [ "$oriented" != "-" ]; then
                got=$("$tool" decode --orient --checksum "$corpus/$path" 2>/dev/null | tail -1 | awk -F'\t' '{print $NF}')
                if [ "$got" != "$oriented" ]; then echo "MISMATCH (oriented) $path: $got"; failures=$((failures + 1)); fi
            fi
        elif printf '%s' "$line" | grep -qv $'\terror\t'; then
            echo "DECODED (invalid) $path"
        fi
    done < <(awk -F'\t' -v f="$format" '$2 == f && $1 !~ /^large\// {print $1 "\t" $6 "\t" $7 "\t" $11}' "$corpus/MANIFEST.tsv")
done
# Every binding frame of the animated files of these formats.
while IFS=$'\t' read -r path; do
    lower=$(printf '%s' "$path" | cut -d/ -f1 | tr a-z A-Z)
    case " $formats " in *" $lower "*) ;; *) continue ;; esac
    "$tool" decode --frames "$corpus/$path" > /tmp/corpus-check-frames.tsv 2>/dev/null || true
    while IFS=$'\t' read -r frame sha; do
        got=$(awk -F'\t' -v n="$frame" '$6 == n {print $10}' /tmp/corpus-check-frames.tsv)
        checked=$((checked + 1))
        if [ "$got" != "$sha" ]; then echo "MISMATCH $path frame $frame: $got"; failures=$((failures + 1)); fi
    done < <(awk -F'\t' -v p="$path" '$1 == p && $11 == "yes" {print $2 "\t" $8}' "$corpus/FRAMES.tsv")
done < <(awk -F'\t' 'NR > 1 && $11 == "yes" {print $1}' "$corpus/FRAMES.tsv" | sort -u)
echo "corpus-check: $checked checks, $failures mismatches ($formats)"
[ "$failures" -eq 0 ]
