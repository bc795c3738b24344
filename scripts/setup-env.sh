#!/usr/bin/env bash
# Create (or update) .venv with everything the project needs, from the repo's own files.
# Prints one line per step; the full pip/make output goes to $LOG (printed first), and its tail is shown on failure.
# LADDER_RUNTIME_ONLY=1 (the main job) installs the runtime dependencies only, not the dev group (pytest, Ray,
# Playwright, ...), which scripts/test.sh and .ci/run need.
# torch==2.13.0 is installed FIRST: a CPU build lies on local disk and pip takes it; a bare `torch` requirement
# with nothing installed would pull a multi-GB CUDA build.
# Also: .venv-triton36 (triton 3.6.0, the GPU image's version) via `make triton36-env`, .venv-ascend (triton-ascend
# 3.2.0 in its own env: it ships a package named `triton`) via `make
# ascend-env`, and Debian's chromium for the review page's browser test (skipped where it cannot be installed).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
LOG=${LADDER_SETUP_LOG:-${TMPDIR:-/tmp}/kernel-ladder-setup.log}
: > "$LOG"
echo "setup: full log in $LOG"

step() {  # step "what" command...: one line of progress; the command's output goes to $LOG
  local what=$1; shift
  printf 'setup: %s ... ' "$what"
  if "$@" >> "$LOG" 2>&1; then echo ok; else echo "FAILED"; tail -n 25 "$LOG" >&2; return 1; fi
}
optional() {  # optional "what" command...: like step, but a failure is a warning
  step "$@" || echo "setup: warning: $1 failed; the tests that need it will skip" >&2
}

[ -x .venv/bin/python ] || step "create .venv" "$PY" -m venv .venv
step "pip>=25.1" .venv/bin/python -m pip install -q --upgrade "pip>=25.1"
step "torch 2.13.0 (CPU)" .venv/bin/python -m pip install -q "torch==2.13.0"
if [ "${LADDER_RUNTIME_ONLY:-0}" = "1" ]; then
  step "kernel-ladder (runtime dependencies)" .venv/bin/python -m pip install -q -e .
else
  step "kernel-ladder with the dev group" .venv/bin/python -m pip install -q -e . --group dev
fi
if [ "${LADDER_SKIP_EXTRAS:-0}" != "1" ]; then
  optional "Ascend env (.venv-ascend)" make -s ascend-env PYTHON="$PY"
  # Triton 3.6 (the GPU image's version) beside 3.9: 10-71 s measured on 2 shared cores
  optional "Triton 3.6 env (.venv-triton36)" make -s triton36-env PYTHON="$PY"
  if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    optional "chromium (browser test)" bash -c \
      "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium"
  fi
fi
