#!/usr/bin/env bash
# Creates (or reuses) the Python environment of the serving references and prints what it holds:
#   Benchmarks/serving/setup.sh
# The venv lives at ${WEBIMAGE_BENCH_VENV:-/tmp/webimage-bench-venv}; ${PYTHON:-python3} (3.10 or later,
# thumbor 7.8 needs it) creates it. Everything comes from PyPI as wheels:
#   thumbor 7.8 (its PIL engine, HTTP loader and file storages; Pillow < 13 is its pin),
#   pyvips + pyvips-binary (libvips 8.18 with libjpeg-turbo, libspng, libwebp, libheif/aom for AVIF),
#   pycurl (a manylinux wheel with its own libcurl; only thumbor_bench.py --curl uses it, and thumbor
#   warns at start-up when it is missing), numpy (quality.py's PSNR).
# Debian packages: none for the Python side (no libcurl-dev: pycurl comes as a wheel; thumbor's opencv
# extra is not used). python3-venv is installed only when `python3 -m venv` is missing,
# and nginx (for Benchmarks/nginx/serve.sh) only when absent.
set -euo pipefail
venv="${WEBIMAGE_BENCH_VENV:-/tmp/webimage-bench-venv}"
python="${PYTHON:-python3}"

apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "$@" >/dev/null 2>&1 \
        || { apt-get update >/dev/null && apt-get install -y --no-install-recommends "$@" >/dev/null; }
}

command -v nginx >/dev/null || apt_install nginx
if [ ! -x "$venv/bin/python" ]; then
    "$python" -c 'import ensurepip, venv' 2>/dev/null || apt_install python3-venv
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -c 'import sys; assert sys.version_info >= (3, 10), sys.version' \
    || { echo "the venv's Python is older than 3.10 (thumbor 7.8 needs 3.10+): remove $venv, set PYTHON" >&2; exit 1; }

# Pinned to the minor versions the figures were taken with; pip is a no-op when they are already there.
"$venv/bin/pip" install --quiet --disable-pip-version-check \
    'thumbor==7.8.*' 'pyvips>=3.0' 'pyvips-binary==8.18.*' 'Pillow>=12,<13' 'numpy>=1.26' \
    --only-binary pycurl 'pycurl>=7.45'

"$venv/bin/python" - <<'EOF'
import PIL, numpy, pycurl, pyvips, thumbor
print(f"thumbor {thumbor.__version__}")
print(f"libvips {pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)} (pyvips {pyvips.__version__}, "
      f"{'API' if pyvips.API_mode else 'ABI'} mode)")
print(f"Pillow {PIL.__version__}, numpy {numpy.__version__}, {pycurl.version.split()[0]}")
missing = [s for s in ('.jpg', '.png', '.webp', '.avif') if s not in pyvips.get_suffixes()]
if missing:
    raise SystemExit(f"libvips lacks savers for {missing}")
EOF
echo "venv: $venv"
