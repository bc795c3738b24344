#!/usr/bin/env bash
# Pack the committed HEAD (without benchmarks/results, which sessions on the GPU do not need) into .devclean/, so a
# device call can run the committed code even while work in progress sits uncommitted in this checkout:
#   bash scripts/devclean.sh, then in the call (carry .devclean .whl .devcarry):
#   mkdir -p /tmp/clean && tar xzf .devclean/head.tar.gz -C /tmp/clean && ln -sfn $PWD/.whl $PWD/.devcarry /tmp/clean/ \
#     && cd /tmp/clean && bash benchmarks/device_call.sh STEP ...
# The call still travels with the whole checkout (its size counts); results come back under $OUT as usual.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .devclean
git archive --format=tar HEAD -- . ':(exclude)benchmarks/results' | gzip -9 > .devclean/head.tar.gz
echo "$(git rev-parse --short HEAD) $(du -h .devclean/head.tar.gz | cut -f1)"
