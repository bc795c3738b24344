#!/usr/bin/env bash
# One call on the lent GPU machine (see /work/.library/device): set up the carried wheels and KB snapshot, then run
# the named steps one after another (never two timing sessions at once), each writing under $OUT.
#
#   bash benchmarks/device_call.sh STEP [STEP ...]       steps: see the case below; every step is budgeted
#
# Carry: .whl (pydantic, bm25s, libcst ...: the image lacks them) and .devcarry (KB snapshot + fp16 MiniLM).
# Nothing here is used by CI.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD LADDER_SNAPSHOT=$PWD/.devcarry/snapshot LADDER_EMBEDDING_MODEL_DIR=$PWD/.devcarry/minilm \
  PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 LADDER_VALIDATION_SEEDS='[0,1]' LADDER_HOME=/tmp/ladderhome
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
start=$(date +%s)
for step in "$@"; do
  name=${step%%:*}; arg=${step#*:}; [ "$arg" = "$step" ] && arg=""
  t0=$(date +%s); echo "=== step $name ($arg) at +$(( t0 - start )) s"
  case $name in
    diagtime)   # reference fixes timed once next to torch: initial, fix, eager per case
      timeout "${arg:-300}" python3 benchmarks/diagnosis/gpu_time.py "$OUT/diagtime" 2>&1 | tail -80 ;;
    diag)       # the ladder L1-L4 on the labelled set: arg = SPLIT/BUDGET_S
      split=${arg%%/*}; budget=${arg#*/}
      timeout $(( budget + 120 )) python3 benchmarks/diagnosis_bench.py --backend cuda --max-level L4 --split "$split" \
        --budget-s "$budget" --out "$OUT/diag_$split" 2>&1 | grep -v "Loading weights" | tail -60 ;;
    aa)         # A/A noise floor through the session's verdict path: arg = budget
      timeout "${arg:-200}" python3 benchmarks/aa.py "$OUT/aa" 2>&1 | tail -40 ;;
    naivecheck) # naive first translations validated at full size and timed against eager
      timeout "${arg:-240}" python3 benchmarks/suite/_gpu_check.py --initial naive --out "$OUT/naivecheck" 2>&1 | tail -60 ;;
    *) echo "unknown step $name" ;;
  esac
  echo "=== step $name done in $(( $(date +%s) - t0 )) s"
done
cd "$OUT" && for d in */; do [ -d "$d" ] && tar czf "${d%/}.tar.gz" "$d" && rm -rf "$d"; done
echo "wall $(( $(date +%s) - start )) s"
