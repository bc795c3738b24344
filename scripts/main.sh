#!/usr/bin/env bash
# The main job on the embedded default KB: set up the environment, start `ladder serve`, wait until health
# reports SERVING, answer a query through the server, then stop the server with SIGTERM (graceful shutdown).
# Setup installs the runtime dependencies only and prints one line per step (full log path printed).
# Usage: bash scripts/main.sh ["question"]
set -euo pipefail
cd "$(dirname "$0")/.."
LADDER_SKIP_EXTRAS=1 LADDER_RUNTIME_ONLY=1 bash scripts/setup-env.sh
QUESTION=${1:-why does argmax scalarize on Ascend}
PORT=${LADDER_PORT:-50551}
.venv/bin/ladder serve --port "$PORT" > .ladder-serve.log 2>&1 &
SERVER=$!
trap 'kill -TERM $SERVER 2>/dev/null; wait $SERVER 2>/dev/null || true' EXIT
.venv/bin/ladder health --server "127.0.0.1:$PORT" --wait 180
.venv/bin/ladder query "$QUESTION" --server "127.0.0.1:$PORT" --top-k 3
