#!/usr/bin/env bash
# Builds and runs codec_loop.c, the codec work of one cold request of a serve_bench.py cell in a C loop
# on 2 threads (the reference the server's cold throughput is held to: issue 27, ≥ 0.8×).
#
#   Benchmarks/serving/codec_loop.sh CELL SECONDS [codec_loop options]   # CELL: jpeg, png, webp or avif
#   Benchmarks/serving/codec_loop.sh build                                # only (re)build
#
# Options after SECONDS go to the program: --threads T (default 2), --sources DIR (default
# $WEBIMAGE_NGINX_RUNTIME/serving/div2k), --count K (20), --out DIR (the K outputs, written untimed first).
# Prints the program's one JSON line. The binary goes to ${WEBIMAGE_CODEC_BUILD:-<package>/.build-codec}
# (ignored by git) and is rebuilt when codec_loop.c or one of the project's C files it compiles changed, or
# the compiler did. It compiles the project's own C shims (Sources/CJPEG, CPNG, CWebP, CAVIF, CPixels) with
# -O2 against the system libjpeg-turbo, libwebp, libavif and libdeflate (pkg-config), as SwiftPM links them
# for the server. The compiler is $CC, else clang when one is on PATH (the Swift toolchain's: what SwiftPM
# compiles the same C files with, -O2, for the server), else gcc. The compiler matters: gcc 12 -O2 leaves
# the resampler's loops in CPixels scalar (its cheap vectorizer cost model refuses their alias checks) and
# made the loop 19-24 % slower on JPEG and PNG than clang -O2, a reference the server would beat for free.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
package="$(cd "$here/../.." && pwd)"
build="${WEBIMAGE_CODEC_BUILD:-$package/.build-codec}"
cc="${CC:-}"
if [ -z "$cc" ]; then
    if command -v clang >/dev/null; then cc=clang; else cc=gcc; fi
fi
binary="$build/codec_loop"
sources=(
    "$here/codec_loop.c"
    "$package/Sources/CJPEG/jpeg_decoder.c"
    "$package/Sources/CJPEG/jpeg_encoder.c"
    "$package/Sources/CPNG/png_fast.c"
    "$package/Sources/CPNG/png_encode.c"
    "$package/Sources/CWebP/webp_shim.c"
    "$package/Sources/CAVIF/avif_shim.c"
    "$package/Sources/CPixels/pixels.c"
    "$package/Sources/CSystemTuning/yield_points.c"
)
headers=(
    "$package/Sources/CJPEG/include/CJPEG.h" "$package/Sources/CPNG/include/CPNG.h" "$package/Sources/CPNG/png_paeth.h"
    "$package/Sources/CWebP/include/CWebP.h" "$package/Sources/CAVIF/include/CAVIF.h" "$package/Sources/CPixels/include/CPixels.h"
    "$package/Sources/CSystemTuning/include/CSystemTuning.h"
)

build_binary() {
    local stale=0 file
    [ -x "$binary" ] || stale=1
    [ "$(cat "$build/cc" 2>/dev/null)" = "$cc" ] || stale=1
    for file in "${sources[@]}" "${headers[@]}" "$0"; do
        [ "$file" -nt "$binary" ] && stale=1
    done
    [ "$stale" = 1 ] || return 0
    command -v "$cc" >/dev/null || { echo "codec_loop.sh: no $cc" >&2; exit 1; }
    command -v pkg-config >/dev/null || { echo "codec_loop.sh: no pkg-config" >&2; exit 1; }
    local packages="libjpeg libwebp libwebpdemux libwebpmux libavif libdeflate" flags libs
    flags="$(pkg-config --cflags $packages)" || { echo "codec_loop.sh: pkg-config: need the -dev packages of $packages" >&2; exit 1; }
    libs="$(pkg-config --libs $packages)"
    mkdir -p "$build"
    # The headers are written for clang (SwiftPM's compiler): its nullability qualifiers mean nothing
    # to gcc, and its `assume_nonnull` pragma and `enum_extensibility` attribute are only ignored.
    local dialect="-D_Nullable= -D_Nonnull= -Wno-unknown-pragmas -Wno-attributes"
    "$cc" --version 2>/dev/null | grep -q clang && dialect=""
    # shellcheck disable=SC2086
    "$cc" -O2 -std=gnu11 -pthread $dialect -DCODEC_LOOP_CC="\"$(basename "$cc")\"" \
        -I"$package/Sources/CJPEG/include" -I"$package/Sources/CPNG/include" -I"$package/Sources/CWebP/include" \
        -I"$package/Sources/CAVIF/include" -I"$package/Sources/CPixels/include" -I"$package/Sources/CSystemTuning/include" $flags \
        "${sources[@]}" -o "$binary.tmp" $libs -lm 2> "$build/build.log" || {
        cat "$build/build.log" >&2
        echo "codec_loop.sh: the build failed" >&2
        exit 1
    }
    mv "$binary.tmp" "$binary"
    echo "$cc" > "$build/cc"
}

case "${1:-}" in
build)
    build_binary
    echo "$binary"
    ;;
jpeg|png|webp|avif)
    [ $# -ge 2 ] || { echo "usage: $0 jpeg|png|webp|avif SECONDS [codec_loop options] | $0 build" >&2; exit 2; }
    cell="$1" seconds="$2"
    shift 2
    build_binary
    exec "$binary" "$cell" --seconds "$seconds" "$@"
    ;;
*)
    echo "usage: $0 jpeg|png|webp|avif SECONDS [codec_loop options] | $0 build" >&2
    exit 2
    ;;
esac
