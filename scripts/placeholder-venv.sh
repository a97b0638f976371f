#!/usr/bin/env bash
# Makes (or reuses) the Python virtual environment with the placeholder references, and prints its python.
#
#     scripts/placeholder-venv.sh [--with-thumbhash-python] [DIR]     DIR: ${TMPDIR:-/tmp}/webimage-placeholder-venv
#
# Installs from PyPI, at pinned versions: blurhash-python (woltapp's C encoder/decoder behind cffi; its cffi
# and pycparser come as its dependencies) and Pillow (only to read and write PNGs, losslessly). With
# --with-thumbhash-python also thumbhash-python, a Python port of ThumbHash that is NOT byte-identical to
# evanw's JavaScript: only placeholder-check.py --thumbhash-ref python and the diagnostic line of
# placeholder-fixtures.py use it; CI does not. The ThumbHash reference is evanw's js/thumbhash.js run with
# node (not on PyPI, not in this repository: point THUMBHASH_JS at a copy), or, where there is none, the
# values it computed, stored in scripts/placeholder-expected.tsv.
#
# Running it again installs nothing when the venv already has the pinned versions (a venv with other
# versions is brought to them). Only the last line of standard output is the python path, so
#
#     PY=$(scripts/placeholder-venv.sh | tail -n 1)
#     "$PY" scripts/placeholder-check.py --self-test
#
# Variables that would send pip's installs or the venv's imports elsewhere (PYTHONPATH, PYTHONHOME,
# PIP_USER, PIP_TARGET, PIP_PREFIX, PIP_ROOT, PIP_NO_DEPS, PIP_CONSTRAINT, PIP_REQUIREMENT) are ignored here;
# how pip reaches the registry (its config files, PIP_INDEX_URL, PIP_FIND_LINKS, PIP_CERT, proxies) is left
# as the machine has it. A PIP_FIND_LINKS folder that is missing only makes pip warn, and the exact pins
# make it install the same versions wherever the wheels come from.
set -euo pipefail

with_thumbhash_python=0
venv=""
for argument in "$@"; do
    case "$argument" in
        --with-thumbhash-python) with_thumbhash_python=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "placeholder-venv: unknown option $argument" >&2; exit 2 ;;
        *) venv="$argument" ;;
    esac
done
venv="${venv:-${TMPDIR:-/tmp}/webimage-placeholder-venv}"
python="$venv/bin/python"

# name==version, and the module each provides. Pillow 10.4.0 satisfies thumbhash-python 1.0.1's pillow<11.
packages=("blurhash-python==1.2.2" "Pillow==10.4.0")
modules="blurhash PIL.Image"
if [ "$with_thumbhash_python" = 1 ]; then
    packages+=("thumbhash-python==1.0.1")
    modules="$modules thumbhash.encode"
fi

unset PYTHONPATH PYTHONHOME PYTHONUSERBASE PIP_USER PIP_TARGET PIP_PREFIX PIP_ROOT PIP_NO_DEPS PIP_CONSTRAINT \
    PIP_REQUIREMENT PIP_REQUIRE_VIRTUALENV PIP_NO_BUILD_ISOLATION

# Exit 0 when every pin is installed at its version and every module imports from inside the venv.
ready() {
    "$python" - "$modules" "${packages[@]}" <<'PY' >/dev/null 2>&1
import importlib, importlib.metadata, os, sys
modules, pins = sys.argv[1].split(), sys.argv[2:]
for pin in pins:
    name, version = pin.split("==")
    assert importlib.metadata.version(name) == version, pin
for module in modules:
    where = os.path.realpath(importlib.import_module(module).__file__)
    assert where.startswith(os.path.realpath(sys.prefix) + os.sep), (module, where)
PY
}

if [ -x "$python" ] && ready; then
    echo "placeholder-venv: $venv is ready (${packages[*]})" >&2
else
    if [ ! -x "$python" ] || ! "$python" -m pip --version >/dev/null 2>&1; then
        base="$(command -v python3 || true)"
        if [ -z "$base" ]; then
            echo "placeholder-venv: python3 is missing (apt-get install python3 python3-venv)" >&2
            exit 1
        fi
        # --clear: a folder left half made, or whose python has gone, is made anew.
        if ! "$base" -m venv --clear "$venv" >&2; then
            echo "placeholder-venv: 'python3 -m venv' failed (Debian: apt-get install python3-venv)" >&2
            exit 1
        fi
    fi
    "$python" -m pip install --quiet --disable-pip-version-check --no-input --prefer-binary "${packages[@]}" >&2
    if ! ready; then
        echo "placeholder-venv: $venv still lacks ${packages[*]} after pip install" >&2
        exit 1
    fi
    echo "placeholder-venv: installed ${packages[*]} into $venv" >&2
fi
echo "$python"
