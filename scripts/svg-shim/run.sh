#!/bin/sh
# Builds Sources/CSVG (gcc and clang, -Werror), checks the header as a Clang module, and runs check.c under
# ASan+UBSan in /tmp/csvg-work (the harness reads its files there). Needs librsvg2-dev and libxml2-dev.
#   scripts/svg-shim/run.sh [iterations] [seed]
# Sources/CSVG is not a target of the package yet (issue 43: see the stop note); this is how it was checked.
set -e
here=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$here/../../Sources/CSVG" && pwd)
mkdir -p /tmp/csvg-work/secret
cp -r "$here/data" "$here/fixtures" "$here/lsan.supp" "$here/check.c" "$here/unsafe_attrs.inc" /tmp/csvg-work/
echo "not to be read" > /tmp/csvg-work/secret/secret.txt
cd /tmp/csvg-work
CF=$(pkg-config --cflags librsvg-2.0 libxml-2.0)
LIBS=$(pkg-config --libs librsvg-2.0 libxml-2.0)
for std in c11 gnu11; do
  gcc -std=$std -Wall -Wextra -Werror -O2 -c -DCSVG_WITH_RSVG -I$SRC/include $CF $SRC/svg_shim.c -o shim-gcc.o
  if command -v /opt/swift/usr/bin/clang >/dev/null; then
    /opt/swift/usr/bin/clang -std=$std -Wall -Wextra -Werror -O2 -c -DCSVG_WITH_RSVG -I$SRC/include $CF $SRC/svg_shim.c -o shim-clang.o
  fi
done
echo "shim: gcc and clang -Wall -Wextra -Werror clean"
# (The module check sees what Swift sees: the sanitiser only, CSVG_WITH_RSVG not defined.)
# Header as a Clang module (what Swift imports), nullability-complete.
mkdir -p modcheck && cat > modcheck/module.modulemap <<MM
module CSVG { header "$SRC/include/csvg.h" export * }
MM
printf '@import CSVG;\nint main(void){ uint8_t *o; size_t n; char m[8]; return csvg_sanitize((const uint8_t*)"", 0, &o, &n, m, 8) == 0 ? CSVG_MAX_EMBEDDED_PIXELS > 0 : 1; }\n' > modcheck/use.m
/opt/swift/usr/bin/clang -fmodules -fmodules-cache-path=modcheck/cache -Werror -Wnullability-completeness -Wall -fsyntax-only -fmodule-map-file=modcheck/module.modulemap modcheck/use.m
echo "header: compiles as a Clang module"
gcc -std=gnu11 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined -Wall -Wextra -Werror \
  -DCSVG_WITH_RSVG -I$SRC/include -I$SRC -I/tmp/csvg-work $CF check.c -o check $LIBS -pthread
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=/tmp/csvg-work/lsan.supp:print_suppressions=1 \
UBSAN_OPTIONS=print_stacktrace=1 ./check "${1:-400}" "${2:-0}"
