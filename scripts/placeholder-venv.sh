#!/usr/bin/env bash
# Makes (or reuses) the Python virtual environment with the placeholder references, and prints its python.
#
#     scripts/placeholder-venv.sh [DIR]        DIR defaults to ${TMPDIR:-/tmp}/webimage-placeholder-venv
#
# Installs from PyPI: blurhash-python (woltapp's C encoder/decoder behind cffi), thumbhash-python (a Python
# port of ThumbHash, a fallback only: not byte-identical to evanw's JavaScript) and Pillow. Running it again
# installs nothing when the three import already. The ThumbHash reference the scripts use by default is
# evanw's js/thumbhash.js run with node: not installed here (it is not on PyPI, and not in this repository);
# point THUMBHASH_JS at a copy. Only the last line of standard output is the python path, so
#
#     PY=$(scripts/placeholder-venv.sh | tail -n 1)
#     "$PY" scripts/placeholder-fixtures.py
set -euo pipefail

venv="${1:-${TMPDIR:-/tmp}/webimage-placeholder-venv}"
python="$venv/bin/python"
# thumbhash-python 1.0.1 requires pillow<11; blurhash-python 1.2.2 any Pillow.
packages=("blurhash-python==1.2.2" "thumbhash-python==1.0.1" "Pillow>=8,<11")

check='import blurhash, thumbhash.encode, PIL.Image; blurhash.encode; thumbhash.encode.rgba_to_thumbhash'
if [ -x "$python" ] && "$python" -c "$check" >/dev/null 2>&1; then
    echo "placeholder-venv: $venv is ready" >&2
else
    if [ ! -x "$python" ]; then
        base="$(command -v python3 || true)"
        if [ -z "$base" ]; then
            echo "placeholder-venv: python3 is missing (apt-get install python3 python3-venv)" >&2
            exit 1
        fi
        if ! "$base" -m venv "$venv" >&2; then
            echo "placeholder-venv: 'python3 -m venv' failed (Debian: apt-get install python3-venv)" >&2
            exit 1
        fi
    fi
    "$python" -m pip install --quiet --disable-pip-version-check "${packages[@]}" >&2
    "$python" -c "$check"
    echo "placeholder-venv: installed ${packages[*]} into $venv" >&2
fi
if ! command -v node >/dev/null 2>&1 && ! command -v nodejs >/dev/null 2>&1; then
    echo "placeholder-venv: note: node is missing; the ThumbHash reference needs it (apt-get install nodejs)" >&2
fi
echo "$python"
