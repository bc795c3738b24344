#!/usr/bin/env bash
# Create (or update) .venv with everything the project needs, from the repo's own files.
# torch==2.13.0 is installed FIRST: a CPU build lies on local disk and pip takes it; a bare `torch` requirement
# with nothing installed would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade "pip>=25.1"
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e . --group dev
