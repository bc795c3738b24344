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
# Those three start in the background beside .venv's install (setup waits mostly on downloads, not on the CPU:
# 9.6 min wall for 3.1 min of CPU one after another on 2 shared cores); only the Triton 3.6 env's last step (a .pth
# to .venv's packages, and its check) waits for .venv. Their lines print when they finish.
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

background() {  # background "what" command...: start now, its output in its own log; `collect` prints its line
  local what=$1; shift
  local log; log=$(mktemp "${TMPDIR:-/tmp}/kernel-ladder-setup-bg.XXXXXX")
  ( SECONDS=0; if "$@" > "$log" 2>&1; then echo "ok ${SECONDS}"; else echo "FAILED ${SECONDS}"; fi >> "$log.rc" ) &
  BG_WHAT+=("$what"); BG_LOG+=("$log"); BG_PID+=("$!")
}
collect() {  # wait for every background step; a failure is a warning (the tests that need it skip)
  local i
  for i in "${!BG_PID[@]}"; do
    wait "${BG_PID[$i]}" || true
    local what=${BG_WHAT[$i]} log=${BG_LOG[$i]} rc
    rc=$(cat "${log}.rc" 2>/dev/null || echo FAILED)
    { echo "== ${what}"; cat "$log"; } >> "$LOG"
    if [ "${rc%% *}" = ok ]; then
      echo "setup: ${what} ... ok (background, ${rc#ok }s)"
    else
      echo "setup: ${what} ... FAILED"; tail -n 25 "$log" >&2
      echo "setup: warning: ${what} failed; the tests that need it will skip" >&2
    fi
    rm -f "$log" "${log}.rc"
  done
  BG_WHAT=(); BG_LOG=(); BG_PID=()
}
BG_WHAT=(); BG_LOG=(); BG_PID=()

extras=0
[ "${LADDER_SKIP_EXTRAS:-0}" != "1" ] && extras=1
if [ "$extras" = 1 ]; then  # independent of .venv: started first, installed while .venv installs
  background "Ascend env (.venv-ascend)" make -s ascend-env PYTHON="$PY"
  # Triton 3.6 (the GPU image's version) beside 3.9: the env and its triton now, the link to .venv after .venv
  background "Triton 3.6 packages (.venv-triton36)" make -s triton36-pkgs PYTHON="$PY"
  if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    background "chromium (browser test)" bash -c \
      "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium"
  fi
fi

main_ok=1
install_main() {
  [ -x .venv/bin/python ] || step "create .venv" "$PY" -m venv .venv || return 1
  step "pip>=25.1" .venv/bin/python -m pip install -q --upgrade "pip>=25.1" || return 1
  step "torch 2.13.0 (CPU)" .venv/bin/python -m pip install -q "torch==2.13.0" || return 1
  if [ "${LADDER_RUNTIME_ONLY:-0}" = "1" ]; then
    step "kernel-ladder (runtime dependencies)" .venv/bin/python -m pip install -q -e . || return 1
  else
    step "kernel-ladder with the dev group" .venv/bin/python -m pip install -q -e . --group dev || return 1
  fi
}
install_main || main_ok=0
if [ "$extras" = 1 ]; then
  collect  # never leave a background install running past this script
  [ "$main_ok" = 1 ] && optional "Triton 3.6 env (.venv-triton36)" make -s triton36-env PYTHON="$PY"
fi
[ "$main_ok" = 1 ]
