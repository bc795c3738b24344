"""GPU paths of the optimizer (do_bench timing, torch.profiler, ncu, a timed session). Skipped without CUDA.

Written for torch 2.11 / Triton 3.6 on an H200; run with ``pytest -m gpu tests/optimizer/test_gpu.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from ladder_fakes import LADDER_CARDS, FakeKB

from optimizer.diagnosis import diagnose
from optimizer.harness.evaluation import evaluate, to_timing
from optimizer.harness.problem import load_problem
from optimizer.proposers.offline import OfflineProposer
from optimizer.session import Session
from optimizer.settings import LadderSettings

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]
DATA = Path(__file__).parent / "data"
SETTINGS = LadderSettings(validation_seeds=[0, 1], timing_rep_ms=10, timing_warmup_ms=10, timing_blocks=4, timing_confirm_blocks=6)


def test_cuda_evaluation_is_validated_and_timed() -> None:
    problem = load_problem(DATA / "softmax")
    ev = evaluate(problem, DATA / "softmax" / "initial.py", backend="cuda", settings=SETTINGS)
    assert ev.passed, ev.reason
    assert ev.protocol is not None and ev.protocol.method == "interleaved-blocks" and ev.protocol.blocks == 4
    assert all(c.method in ("cudagraph", "do_bench") and len(c.blocks["candidate"]) == 4 for c in ev.timing_cases)
    assert ev.phase_s["timing"] > 0 and ev.phase_s["process_start"] > 0
    ms, ref = ev.case_ms(), ev.reference_ms()
    assert set(ms) == {"M=4096,N=1024", "M=8192,N=512"} and all(v > 0 for v in ms.values()) and set(ref) == set(ms)
    timing = to_timing(ev, ms, backend="cuda", problem=problem)
    assert timing.geomean_speedup == pytest.approx(1.0)
    assert all(c.roofline_fraction is not None and 0 < c.roofline_fraction < 1.5 for c in timing.cases)
    assert ev.launches and ev.launches[0]["options"].get("num_warps") == 4
    # every launch record names the cases that made it (L3 compiles the one of the case losing the most time)
    assert {c for r in ev.launches for c in r.get("cases", [])} == set(ms)


@pytest.mark.parametrize(("name", "kind"), [("nan", "nan"), ("reference_op", "reference_op_call"), ("cache", "result_caching"),
                                            ("wrong_shape", "wrong_shape"), ("global_patch", "global_patch")])
def test_cuda_planted_faults(name: str, kind: str) -> None:
    problem = load_problem(DATA / "softmax")
    ev = evaluate(problem, DATA / "faulty" / f"{name}.py", backend="cuda", settings=SETTINGS, timing=False)
    assert not ev.passed and ev.failure_kind == kind, ev.reason


def test_cuda_diagnose_profiles_at_l2(tmp_path: Path) -> None:
    d = diagnose(DATA / "softmax", None, backend="cuda", max_level="L2", kb=FakeKB(LADDER_CARDS), workdir=tmp_path)
    l2 = d.levels[1]
    kinds = {e.kind for e in l2.evidence}
    assert {"timing", "classification", "profiler", "roofline"} <= kinds, kinds
    assert all(c["class"] != "unknown" for c in l2.data["per_case"]), l2.data


def test_cuda_session_is_timed(tmp_path: Path) -> None:
    session = Session(DATA / "softmax", None, kb=FakeKB(LADDER_CARDS), settings=SETTINGS, backend="cuda",
                      proposer=OfflineProposer(), out_dir=tmp_path)
    traj = session.run(2)
    assert traj.rounds[0].timing.geomean_speedup == pytest.approx(1.0)
    timed = [r for r in traj.rounds[1:] if r.validation and r.validation.passed]
    assert timed and all(r.timing.geomean_speedup for r in timed)
    assert traj.best_round is not None and traj.initial_ms and traj.best_ms
    assert traj.noise_floor is not None and traj.noise_floor.floor >= 0 and traj.timing_env["gpu_key"]
    assert all(r.timing.vs_base and r.timing.geomean_ci and r.timing.verdict.startswith(r.outcome) for r in timed)
    assert all(r.phase_s.get("timing", 0) > 0 for r in timed) and traj.selection is not None


def test_cuda_aa_comparison_is_neutral() -> None:
    problem = load_problem(DATA / "softmax")
    cand = DATA / "softmax" / "initial.py"
    from optimizer.harness import verdict

    base = evaluate(problem, cand, backend="cuda", settings=SETTINGS, aa=True)
    floor = verdict.noise_floor(base.pairs("aa")).floor
    ev = evaluate(problem, cand, backend="cuda", settings=SETTINGS, against={"initial": cand})
    t = to_timing(ev, base.case_ms(), backend="cuda", problem=problem)
    assert floor < 0.2 and verdict.judge(t.vs_base, floor, SETTINGS.improvement_threshold) == "neutral", (floor, t.vs_base)
