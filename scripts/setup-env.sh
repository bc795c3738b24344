#!/usr/bin/env bash
# Create (or update) .venv with everything the project needs, from the repo's own files.
# torch==2.13.0 is installed FIRST: a CPU build lies on local disk and pip takes it; a bare `torch` requirement
# with nothing installed would pull a multi-GB CUDA build.
# Also: .venv-triton36 (triton 3.6.0, the GPU image's version) via `make triton36-env`, .venv-ascend (triton-ascend
# 3.2.0 in its own env: it ships a package named `triton`) via `make
# ascend-env`, and Debian's chromium for the review page's browser test (skipped where it cannot be installed).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade "pip>=25.1"
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e . --group dev
if [ "${LADDER_SKIP_EXTRAS:-0}" != "1" ]; then
  make -s ascend-env PYTHON="$PY" || echo "warning: make ascend-env failed; Ascend IR tests will skip" >&2
  # Triton 3.6 (the GPU image's version) beside 3.9: 10-71 s measured on 2 shared cores
  make -s triton36-env PYTHON="$PY" || echo "warning: make triton36-env failed; Triton 3.6 tests will skip" >&2
  if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || echo "warning: chromium not installed; the browser test will skip" >&2
  fi
fi
