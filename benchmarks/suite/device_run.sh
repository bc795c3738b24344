#!/usr/bin/env bash
# One call on the lent GPU machine (see /work/.library/device): the suite campaign on every visible GPU, one
# runner per GPU over disjoint operator lists, plus (optionally) the cluster fan-out check of issue 9.
#
#   [REDO="op ..."] [INITIAL=naive] bash benchmarks/suite/device_run.sh BUDGET_S ROUNDS "ops for gpu0" "ops for gpu1" [cluster]
#
# INITIAL=naive starts every session from naive.py (runner.py --initial naive): results in benchmarks/results/naive,
# packs named naive_gN.tar.gz; the default (initial.py) keeps benchmarks/results/suite and suite_gN.tar.gz.
#
# The device image has torch/triton but no pydantic or bm25s: they travel as wheels in .whl/, the KB as a
# read-only snapshot plus the fp16 MiniLM in .devcarry/ (both git-ignored, named in the call's carry).
# Results come back under $OUT as suite_gN.tar.gz (unpack each with runner.py --unpack ... --no-run; the
# logs merge) and cluster.tar.gz. Nothing here is used by CI.
set -u
budget=${1:?budget seconds}; rounds=${2:?rounds}; ops0=${3:-}; ops1=${4:-}; cluster=${5:-}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD LADDER_SNAPSHOT=$PWD/.devcarry/snapshot LADDER_EMBEDDING_MODEL_DIR=$PWD/.devcarry/minilm \
  PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 LADDER_VALIDATION_SEEDS='[0,1]'
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
start=$(date +%s)
set_name=${INITIAL:-initial}; tag=suite; base=benchmarks/results/suite
[ "$set_name" = naive ] && { tag=naive; base=benchmarks/results/naive; }

if [ -n "$cluster" ]; then  # issue 9: one optimizer session per GPU through the process-per-device runner
  LADDER_HOME=/tmp/cluster-home timeout 240 python3 -m optimizer.cluster --devices 0,1 --resource GPU --backend cuda \
    --rounds "${CLUSTER_ROUNDS:-2}" --max-retries 1 --campaign h200x2-fanout-1 --out /tmp/cluster-runs \
    benchmarks/suite/softmax benchmarks/suite/moe_group_top2 2>&1 | tee /tmp/cluster.log
  echo "cluster rc=${PIPESTATUS[0]}"
  tar czf "$OUT/cluster.tar.gz" --exclude='*/ir/*' -C /tmp cluster-home cluster-runs cluster.log
fi

left=$(( budget - ($(date +%s) - start) ))
pids=()
for gpu in 0 1; do
  ops=$ops0; [ $gpu = 1 ] && ops=$ops1
  [ -z "$ops" ] && continue
  # each GPU's runner resumes from its own copy of the committed result dir (packed or not: benchmarks/_data.py)
  out=/tmp/${tag}_g$gpu; rm -rf "$out"; python3 benchmarks/_data.py unpack "$base" "$out"
  for op in ${REDO:-}; do rm -rf "$out/$op"; done  # rerun these from scratch
  CUDA_VISIBLE_DEVICES=$gpu LADDER_HOME=/tmp/ladderhome_g$gpu timeout $(( left + 30 )) python3 benchmarks/suite/runner.py \
    --initial "$set_name" --backend cuda --rounds "$rounds" --budget-s "$left" --compile-budget-s 45 --ops $ops \
    --out "$out" --pack "$OUT/${tag}_g$gpu.tar.gz" > "/tmp/${tag}_g$gpu.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for gpu in 0 1; do [ -f /tmp/${tag}_g$gpu.log ] && { echo "=== gpu $gpu"; grep -v "Loading weights" /tmp/${tag}_g$gpu.log; cp /tmp/${tag}_g$gpu.log "$OUT/"; }; done
echo "wall $(( $(date +%s) - start )) s"
