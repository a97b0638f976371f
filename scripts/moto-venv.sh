#!/usr/bin/env bash
# The S3-compatible server the tests start (moto's, PyPI `moto[server]`), in a venv of its own:
#   bash scripts/moto-venv.sh [DIR]     default ~/.cache/webimage-moto-venv (where the tests look for it)
# Does nothing when a Python there (or python3 on PATH) already imports moto's server. Prints the
# venv's python. The tests' MotoServer fixture also honours $WEBIMAGE_MOTO_PYTHON.
set -euo pipefail
venv="${1:-${HOME:-/root}/.cache/webimage-moto-venv}"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import moto.server' >/dev/null 2>&1; then
    echo "$venv/bin/python"; exit 0
fi
if command -v python3 >/dev/null 2>&1 && python3 -c 'import moto.server' >/dev/null 2>&1; then
    command -v python3; exit 0
fi
mkdir -p "$(dirname "$venv")"
python3 -m venv "$venv"
# Pinned to the version the tests were written against; moto[server] brings Flask and its server.
env -u PIP_USER -u PIP_TARGET -u PIP_PREFIX -u PYTHONPATH "$venv/bin/pip" install --quiet --disable-pip-version-check 'moto[server]==5.2.1'
"$venv/bin/python" -c 'import moto.server' 
echo "$venv/bin/python"
