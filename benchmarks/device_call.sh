#!/usr/bin/env bash
# One call on the lent GPU machine (see /work/.library/device): set up the carried wheels and KB snapshot, then run
# the named steps one after another (never two timing sessions at once), each writing under $OUT.
#
#   [DEADLINE_S=570] bash benchmarks/device_call.sh STEP[:ARG] [STEP[:ARG] ...]
#
# Each step's time box is min(its own budget, what is left of DEADLINE_S minus 15 s), so a call never overruns the
# device's per-command limit, and each step's output folder is packed ($OUT/NAME.tar.gz) as soon as the step ends:
# a call stopped late still brings back everything finished before. Step logs go to $OUT/steps.log as well.
#
# Carry: .whl (pydantic, bm25s, libcst ...: the image lacks them) and .devcarry (KB snapshot + fp16 MiniLM), both
# built by `bash scripts/devcarry.sh` (run it again after changing cards).
# Nothing here is used by CI. Known noise: the image's JAX is imported by something in the KB client's stack and its
# fork hook warns "os.fork() ... JAX is multithreaded ... deadlock" at every forked worker; no deadlock was seen in
# sessions 9-11, and USE_TF/USE_FLAX/USE_JAX=0 did not silence it (session 11, call 4).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
rm -rf /tmp/minilm && cp -r .devcarry/minilm /tmp/minilm && python3 -c "
import lzma, pathlib, shutil
d = pathlib.Path('/tmp/minilm'); w = d / 'model.safetensors'
if (d / 'model.safetensors.hi.xz').exists():  # fp16 weights travel as two xz'd byte planes (scripts/devcarry.sh)
    hi = lzma.decompress((d / 'model.safetensors.hi.xz').read_bytes()); lo = lzma.decompress((d / 'model.safetensors.lo.xz').read_bytes())
    body = bytearray(2 * len(hi)); body[0::2] = lo; body[1::2] = hi
    w.write_bytes((d / 'model.safetensors.header').read_bytes() + bytes(body))
    for x in ('hi.xz', 'lo.xz', 'header'): (d / f'model.safetensors.{x}').unlink()
for p in d.glob('*.xz'):  # tokenizer and vocabulary travel xz-compressed
    shutil.copyfileobj(lzma.open(p), open(p.with_suffix(''), 'wb')); p.unlink()" || exit 1
export PYTHONPATH=/tmp/site:$PWD LADDER_SNAPSHOT=$PWD/.devcarry/snapshot LADDER_EMBEDDING_MODEL_DIR=/tmp/minilm \
  PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 LADDER_VALIDATION_SEEDS='[0,1]' LADDER_HOME=/tmp/ladderhome
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
start=$(date +%s); deadline=${DEADLINE_S:-570}; staged=""

box() {  # box WANTED_S: the step's time box inside the call's deadline
  local left=$(( deadline - ($(date +%s) - start) - 15 ))
  [ "$1" -lt "$left" ] && echo "$1" || echo "$left"
}
pack() {  # pack DIR: $OUT/DIR -> $OUT/DIR.tar.gz (folders deeper than two levels would not come back)
  [ -d "$OUT/$1" ] && (cd "$OUT" && tar czf "$1.tar.gz" "$1" && rm -rf "$1")
}
sessions() {  # sessions STEP NAME RESULT_DIR RUNNER_FLAGS...: runner.py sessions for $arg = ROUNDS/BUDGET_S/op,op,...,
  # resumed from the committed RESULT_DIR (finished operators are skipped); $OUT/NAME.tar.gz and $OUT/STEP.log come back.
  # RESULT_DIR is written out to /tmp/NAME whether it is packed (packed.jsonl.gz, benchmarks/_data.py) or not
  local step=$1 label=$2 results=$3; shift 3
  local rounds=${arg%%/*} rest=${arg#*/}; local t; t=$(box "${rest%%/*}"); local ops=${rest#*/}
  # an earlier step of this call may have written /tmp/$label already (diagredo then diagcampaign): go on from it,
  # so the second step's pack keeps the first step's sessions
  case " $staged " in *" $label "*) ;; *) rm -rf "/tmp/$label" && python3 benchmarks/_data.py unpack "$results" "/tmp/$label"
    staged="$staged $label" ;; esac
  timeout $(( t + 5 )) python3 benchmarks/suite/runner.py "$@" --backend cuda --rounds "$rounds" \
    --budget-s $(( t - 25 )) --compile-budget-s 40 --ops ${ops//,/ } --out "/tmp/$label" \
    --pack "$OUT/$label.tar.gz" > "$OUT/$step.log" 2>&1; echo "$step rc=$?"
  grep -v "Loading weights" "$OUT/$step.log" | tail -40
}

for step in "$@"; do
  name=${step%%:*}; arg=${step#*:}; [ "$arg" = "$step" ] && arg=""
  t0=$(date +%s); echo "=== step $name ($arg) at +$(( t0 - start )) s"
  case $name in
    rewrite)    # structural transforms timed on their examples: initial vs transformed vs torch; arg = BUDGET_S[/name,name]
      t=$(box "${arg%%/*}"); [ -z "${arg%%/*}" ] && t=$(box 120); only=""; [ "$arg" != "${arg#*/}" ] && only="--only ${arg#*/}"
      timeout "$t" python3 benchmarks/rewrite/time_transforms.py "$OUT/rewrite" ${only//,/ } 2>&1 | tail -40
      pack rewrite ;;
    diagtime)   # reference fixes timed once next to torch: initial, fix, eager per case
      t=$(box "${arg:-300}"); timeout "$t" python3 benchmarks/diagnosis/gpu_time.py "$OUT/diagtime" --budget-s $(( t - 20 )) 2>&1 | tail -60
      pack diagtime ;;
    diag)       # the ladder L1-L4 on the labelled set: arg = SPLIT/BUDGET_S[/item,item,...]
      split=${arg%%/*}; rest=${arg#*/}; t=$(box "${rest%%/*}"); items=""; [ "$rest" != "${rest#*/}" ] && items=${rest#*/}
      timeout "$t" python3 benchmarks/diagnosis_bench.py --backend cuda --max-level L4 --split "$split" ${items:+--items "$items"} \
        --budget-s $(( t - 60 )) --out "$OUT/diag_$split" 2>&1 | grep -v "Loading weights\|os.fork\|_fork_exec\|TracerWarning\|if (padding\|is_causal\|UserWarning\|return opset" | tail -60
      pack "diag_$split" ;;
    aa)         # A/A noise floor through the session's verdict path: arg = BUDGET_S[/N per operator]; the previous
      # protocol's comparison is left out (it was measured in session 6)
      t=$(box "${arg%%/*}"); [ -z "${arg%%/*}" ] && t=$(box 240); n=50; [ "$arg" != "${arg#*/}" ] && n=${arg#*/}
      timeout "$t" python3 benchmarks/aa.py "$OUT/aa" --n "$n" --no-old-rule 2>&1 | tail -40
      pack aa ;;
    naivecheck) # naive first translations validated at full size and timed against eager
      t=$(box "${arg:-240}"); timeout "$t" python3 benchmarks/suite/_gpu_check.py --initial naive --out "$OUT/naivecheck" 2>&1 | tail -60
      pack naivecheck ;;
    realcheck)  # the real-kernel problems validated at full size on the GPU and timed against eager: arg = BUDGET_S[/name,name]
      b=${arg%%/*}; t=$(box "${b:-200}"); only=""; [ "$arg" != "${arg#*/}" ] && only=${arg#*/}; mkdir -p "$OUT/realcheck"
      if [ -n "$only" ]; then  # named problems: one process each under its own PER_PROBLEM_S box, so one hang costs one
        for n in ${only//,/ }; do left=$(( t - ($(date +%s) - t0) )); [ "$left" -lt 20 ] && { echo "realcheck: no time for $n"; continue; }
          pt=${PER_PROBLEM_S:-120}; [ "$pt" -gt "$left" ] && pt=$left; mkdir -p "$OUT/realcheck/$n"
          timeout "$pt" python3 benchmarks/realistic/_check.py "$n" --no-interpret --device cuda --full --time --out "$OUT/realcheck/$n" \
            > "$OUT/realcheck/$n/stdout.json" 2> "$OUT/realcheck/$n/stderr.log"; echo "realcheck $n rc=$? +$(( $(date +%s) - t0 )) s"
        done
      else
        timeout "$t" python3 benchmarks/realistic/_check.py --no-interpret --device cuda --full --time --out "$OUT/realcheck" \
          > "$OUT/realcheck/stdout.json" 2> "$OUT/realcheck/stderr.log"; echo "realcheck rc=$?"; tail -c 3000 "$OUT/realcheck/stdout.json"
        tail -20 "$OUT/realcheck/stderr.log"
      fi; pack realcheck ;;
    onboard)    # onboarding rules on the GPU: compile-only problems execute, in-place restore holds
      t=$(box "${arg:-120}"); timeout "$t" python3 benchmarks/onboard_gpu_check.py "$OUT/onboard" 2>&1 | tail -30
      pack onboard ;;
    campaign)   # optimizer sessions from the naive first versions: arg = ROUNDS/BUDGET_S/op,op,...
      sessions campaign naive benchmarks/results/naive --initial naive ;;
    campaignredo) # the same, re-running naive operators already in the committed result dir (after a transform changed)
      sessions campaignredo naive benchmarks/results/naive --initial naive --redo ;;
    realcampaign) # optimizer sessions on the real public kernels (benchmarks/realistic): arg = ROUNDS/BUDGET_S/name,name,...
      sessions realcampaign realistic benchmarks/results/realistic/campaign --set realistic ;;
    realredo)   # the same, re-running real kernels already in the committed result dir (after a transform changed)
      sessions realredo realistic benchmarks/results/realistic/campaign --set realistic --redo ;;
    diagcampaign) # optimizer sessions on the labelled diagnosis kernels, each fix.py timed beside the best (no
      # torch.compile: the fix is the yardstick): arg = ROUNDS/BUDGET_S/item,item,...
      sessions diagcampaign diagnosis benchmarks/results/diagnosis/campaign --set diagnosis --no-compile ;;
    diagredo)   # the same, re-running items already in the committed result dir (after a transform changed)
      sessions diagredo diagnosis benchmarks/results/diagnosis/campaign --set diagnosis --no-compile --redo ;;
    forkcheck)  # CUDA workers spawned vs forked from the zygote: same verdicts, wall time per evaluation; arg = BUDGET_S[/op,op]
      t=$(box "${arg%%/*}"); [ -z "${arg%%/*}" ] && t=$(box 90); ops=""; [ "$arg" != "${arg#*/}" ] && ops="--ops ${arg#*/}"
      timeout "$t" python3 benchmarks/fork_check.py "$OUT/forkcheck" $ops > "$OUT/forkcheck.log" 2>&1
      rc=$?; tail -20 "$OUT/forkcheck.log"
      # a forked evaluation that failed, or none that passed in the time box: the later steps of this call spawn
      # every worker, as before (running out of time after forked evaluations passed is not a failure)
      if grep -q "fork  rep .*passed=False" "$OUT/forkcheck.log" || ! grep -q "fork  rep .*passed=True" "$OUT/forkcheck.log"; then
        export LADDER_SANDBOX_FORK_SERVER=false; echo "forkcheck rc=$rc: workers spawn from here on"; fi
      pack forkcheck ;;
    timingpaths) # bench_cuda's do_bench path against the kept restore loop (issue 18: library timing)
      t=$(box "${arg:-60}"); timeout "$t" python3 benchmarks/timing_paths_check.py "$OUT/timingpaths" 2>&1 | tail -20
      pack timingpaths ;;
    agree)      # timing agreement (issue 31): sessions of this call (/tmp/LABEL) and committed result dirs re-timed in a
      # fresh process with plain do_bench / do_bench_cudagraph; arg = BUDGET_S/dir,dir,...[@op,op,...] (a dir that names
      # this call's session LABEL - naive, realistic, diagnosis - means /tmp/LABEL; ops: only those problems)
      t=$(box "${arg%%/*}"); rest=${arg#*/}; ops=""; [ "$rest" != "${rest#*@}" ] && ops="--ops ${rest#*@}"
      dirs=""; for d in $(echo "${rest%%@*}" | tr ',' ' '); do
        if [ -d "/tmp/$d" ]; then dirs="$dirs /tmp/$d"; else dirs="$dirs $d"; fi; done
      mkdir -p "$OUT/agree"; timeout "$t" python3 benchmarks/timing_agreement.py "$OUT/agree" $dirs ${ops//,/ } --budget-s $(( t - 40 )) \
        > "$OUT/agree/agree.log" 2>&1; echo "agree rc=$?"; grep -v "Loading weights\|os.fork\|_fork_exec" "$OUT/agree/agree.log" | tail -70
      pack agree ;;
    ablation)   # issue 34: ladder policies x benchmarks/ablation/problems.json, resumed from the committed
      # benchmarks/results/ablation (results.jsonl + timing_cache.jsonl); arg = ARMS/BUDGET_S/PROBLEMS, ARMS and
      # PROBLEMS comma-separated (PROBLEMS "all" = the whole list), e.g. ablation:hierarchical,always-deep/500/all
      arms=${arg%%/*}; rest=${arg#*/}; t=$(box "${rest%%/*}"); probs=${rest#*/}
      { [ "$probs" = "all" ] || [ "$probs" = "$rest" ]; } && probs=""  # no PROBLEMS, or all: the whole list
      case " $staged " in *" ablation "*) ;; *) rm -rf /tmp/ablation  # a second ablation step of this call goes on from the first
        python3 benchmarks/_data.py unpack benchmarks/results/ablation /tmp/ablation; staged="$staged ablation" ;; esac
      timeout $(( t + 5 )) python3 benchmarks/ablation/ablation.py --backend cuda --rounds 15 --arms "$arms" \
        ${probs:+--problems "$probs"} --budget-s $(( t - 30 )) --out /tmp/ablation --pack "$OUT/ablation.tar.gz" \
        > "$OUT/ablation.log" 2>&1; echo "ablation rc=$?"
      grep -v "Loading weights\|os.fork\|_fork_exec" "$OUT/ablation.log" | tail -40 ;;
    account)    # issue 30: the measured account of the gap (ncu raw metrics) of labelled items' initial and fix kernels,
      # resumed from the committed gpu_account_SET/rows.jsonl (inside benchmarks/results/diagnosis's archive);
      # arg = BUDGET_S[/SET[/item,item]]
      b=${arg%%/*}; t=$(box "${b:-300}"); rest=${arg#*/}; [ "$rest" = "$arg" ] && rest=""; set_=${rest%%/*}; items=""
      [ "$rest" != "${rest#*/}" ] && items=${rest#*/}; set_=${set_:-beyond}; mkdir -p "$OUT/account"
      rm -rf /tmp/diagres && python3 benchmarks/_data.py unpack benchmarks/results/diagnosis /tmp/diagres > /dev/null
      [ -f "/tmp/diagres/gpu_account_$set_/rows.jsonl" ] && cp "/tmp/diagres/gpu_account_$set_/rows.jsonl" "$OUT/account/"
      timeout "$t" python3 benchmarks/diagnosis/gpu_account.py "$OUT/account" --set "$set_" ${items:+--items "$items"} \
        --budget-s $(( t - 40 )) 2>&1 | grep -v "Loading weights\|os.fork\|_fork_exec" | tail -40
      pack account ;;
    sandbox)    # the candidate sandbox's claims on the GPU path (issue 32)
      t=$(box "${arg:-90}"); timeout "$t" python3 benchmarks/sandbox_check.py "$OUT/sandbox" 2>&1 | tail -40; pack sandbox ;;
    gputests)   # the GPU-marked tests (timing in the worker, winner re-time, diagnose through L2, A/A path)
      t=$(box "${arg:-240}"); mkdir -p "$OUT/gputests"
      timeout "$t" python3 -m pytest tests/optimizer/test_gpu.py -q -p no:cacheprovider 2>&1 | tee "$OUT/gputests/pytest.log" | tail -15
      pack gputests ;;
    *) echo "unknown step $name" ;;
  esac
  echo "=== step $name done in $(( $(date +%s) - t0 )) s"
done 2>&1 | tee "$OUT/steps.log"
echo "wall $(( $(date +%s) - start )) s"
