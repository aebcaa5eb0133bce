#!/usr/bin/env bash
# Create (or refresh) the Python venv used by the q8rt test suite and the demo.
#   bash tests/python/setup-venv.sh DIR
# Idempotent: an existing venv is reused and pip only installs what is missing or at the wrong
# version. Exits non-zero on any failure. The venv's python is touched on success so that make's
# dependency on requirements.txt is satisfied.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 VENV_DIR" >&2
  exit 2
fi
venv=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
req="$here/requirements.txt"
python=${PYTHON:-python3}

if ! command -v "$python" >/dev/null 2>&1; then
  echo "setup-venv: $python not found" >&2
  exit 1
fi

# --copies: bin/python is a real file, so the final touch marks the venv (make compares its mtime
# with requirements.txt) instead of following a symlink into the system interpreter.
if [ ! -x "$venv/bin/python" ] || [ -L "$venv/bin/python" ] ||
   ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
  echo "setup-venv: creating $venv"
  rm -rf "$venv"
  "$python" -m venv --copies "$venv"
fi

export PIP_DISABLE_PIP_VERSION_CHECK=1
if ! "$venv/bin/python" -m pip install --quiet --requirement "$req"; then
  echo "setup-venv: pip install -r $req failed" >&2
  exit 1
fi

# Sanity check: the packages import.
"$venv/bin/python" -c 'import numpy, onnx, onnxruntime, pytest' || {
  echo "setup-venv: installed packages do not import" >&2
  exit 1
}
touch "$venv/bin/python"
echo "setup-venv: $venv ready"
