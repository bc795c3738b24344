"""The ladder on the Triton tutorial's persistent softmax (benchmarks/realistic/tutorial_softmax), with the H200 figures
of its session round (benchmarks/results/realistic/campaign/tutorial_softmax): host wall 1.19 ms per call against
0.29 ms of device time, launch_bound. L1 sees the per-call warmup/device query; the profile confirms the host time;
the decision is launch_overhead and the family that removes it is cache-host-launch-setup. Cards are the curated
YAML files in a fake KB; the profile is planted in the level cache (no subprocess, no GPU)."""

from __future__ import annotations

from pathlib import Path

import yaml
from ladder_fakes import FakeKB

from kb.models import Validation
from optimizer.harness.evaluation import Evaluation
from optimizer.harness.problem import case_label, load_problem
from optimizer.ladder.engine import run_ladder
from optimizer.ladder.types import LadderContext
from optimizer.settings import LadderSettings

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = ROOT / "benchmarks" / "realistic" / "tutorial_softmax"
CARDS = ["cache-host-launch-setup", "fuse-launches-for-launch-bound", "kernel-chain-fusion", "elementwise-chain-fusion",
         "single-pass-fusion", "num-warps-for-row-width"]


def _card(cid: str) -> dict:
    return yaml.safe_load((ROOT / "kb" / "cards" / "patterns" / f"{cid}.yaml").read_text())


def _ctx() -> LadderContext:
    problem = load_problem(SOFTMAX)
    cases = problem.cases_for("cuda")
    ev = Evaluation(candidate=SOFTMAX / "initial.py", backend="cuda", status="ok", reason="", validation=Validation(passed=True),
                    launches=[{"kernel": "softmax_kernel", "file": str(SOFTMAX / "initial.py"), "grid": [264, 1, 1], "launches": 1,
                               "options": {"num_warps": 8}}],
                    timing_cases=[{"case": case_label(c), "stats": {"median_ms": 1.19}} for c in cases], device="NVIDIA H200")
    ctx = LadderContext(problem=problem, candidate=SOFTMAX / "initial.py", backend="cuda", kb=FakeKB([_card(c) for c in CARDS]),
                        settings=LadderSettings(), evaluation=ev, cache={"input_dtypes": ["float32"]})
    prof = [{"case": case_label(c), "kernel_fraction": 0.24, "launches_per_call": 1, "wall_ms": 1.19, "device_ms": 0.29,
             "kernels": [{"name": "softmax_kernel", "us_per_call": 290.0}]} for c in cases]
    ctx.cache |= {f"profile:{ctx.source_sha}": {"cases": prof},
                  f"ncu:{ctx.source_sha}": {"hot_kernel": "softmax_kernel", "dram_pct": 18.0, "sm_pct": 20.0, "registers": 64,
                                            "spill_bytes": 0, "occupancy_pct": 40.0}}
    return ctx


def test_per_call_host_setup_is_the_cause_and_its_cache_the_family() -> None:
    out = run_ladder(_ctx(), max_level="L2")
    l1 = out.results[0]
    assert any(f.cause == "launch_overhead" and f.structural for f in l1.findings)  # the warmup / device query lines
    assert out.levels_reached == ["L1", "L2"]  # a 0.65 prior does not stop before the profile shows the host time
    assert out.stop.cause == "launch_overhead" and out.chosen.id == "cache-host-launch-setup", out.stop.rationale
