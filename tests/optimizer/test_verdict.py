"""The improved/neutral/regressed rule on synthetic timing blocks and the intervals it writes into Timing."""

from __future__ import annotations

from pathlib import Path

import pytest
from timing_fakes import blocks, timed_case, timed_eval

from benchmarks import _data
from kb.models import Round, Timing, TimingProtocol, Trajectory, Validation
from optimizer.harness import verdict
from optimizer.harness.evaluation import to_timing
from optimizer.harness.problem import load_problem

DATA = Path(__file__).parent / "data"


def pairs(ref_ms: float, cand_ms: float, noise: float, cases: int = 2) -> dict[str, tuple[list[float], list[float]]]:
    return {f"c{i}": (blocks(ref_ms, noise, seed=2 * i), blocks(cand_ms, noise, seed=2 * i + 1)) for i in range(cases)}


def test_identical_kernels_are_neutral_and_give_the_noise_floor() -> None:
    aa = verdict.noise_floor(pairs(1.0, 1.0, 0.01))
    assert 0 < aa.floor < 0.05 and aa.aa.lo < 1 < aa.aa.hi and set(aa.cases) == {"c0", "c1"}
    exact = verdict.noise_floor({"c": ([2.0] * 8, [2.0] * 8)})
    assert exact.floor == 0 and exact.aa.point == 1
    assert verdict.judge(verdict.geomean_ratio(pairs(1.0, 1.0, 0.01)), aa.floor, 0.02) == "neutral"


def test_clear_gains_and_losses_are_called_small_ones_are_not() -> None:
    floor = verdict.noise_floor(pairs(1.0, 1.0, 0.01)).floor
    assert verdict.judge(verdict.geomean_ratio(pairs(1.0, 0.8, 0.01)), floor, 0.02) == "improved"
    assert verdict.judge(verdict.geomean_ratio(pairs(1.0, 1.25, 0.01)), floor, 0.02) == "regressed"
    assert verdict.judge(verdict.geomean_ratio(pairs(1.0, 0.99, 0.03)), floor, 0.02) == "neutral"  # 1% in 3% noise
    gain = verdict.geomean_ratio(pairs(1.0, 1 / 1.04, 0.002))  # a tight 4% gain
    assert gain.lo > 1.03
    assert verdict.judge(gain, 0.005, 0.02) == "improved"
    assert verdict.judge(gain, 0.05, 0.02) == "neutral"  # ... inside a 5% noise floor
    assert verdict.judge(gain, 0.005, 0.06) == "neutral"  # ... below the threshold
    assert verdict.judge(None, 0.01, 0.02) == verdict.judge(gain, None, 0.02) == "neutral"


def test_interval_is_reproducible_and_blocks_must_pair() -> None:
    p = pairs(1.0, 0.9, 0.02)
    assert verdict.geomean_ratio(p) == verdict.geomean_ratio(p)
    ci = verdict.geomean_ratio(p)
    assert ci.lo <= ci.point <= ci.hi and ci.blocks == 8
    with pytest.raises(ValueError, match="pair up"):
        verdict.case_ratio([1.0, 1.0], [1.0])
    with pytest.raises(ValueError, match="positive"):
        verdict.case_ratio([1.0, 0.0], [1.0, 1.0])
    assert "1.020" in verdict.rule_text(0.01, 0.02) and "1.050" in verdict.rule_text(0.05, 0.02)


def test_to_timing_attaches_intervals_vs_initial_and_base() -> None:
    problem = load_problem(DATA / "softmax")
    cases = [timed_case(f"M={c['M']},N={c['N']}", {"candidate": blocks(0.5, 0.01, seed=i), "initial": blocks(1.0, 0.01, seed=10 + i),
                                               "base": blocks(0.55, 0.01, seed=20 + i)}) for i, c in enumerate(problem.cases)]
    t = to_timing(timed_eval(cases), None, backend="cuda", problem=problem)
    assert t.geomean_ci is not None and t.geomean_speedup == t.geomean_ci.point and 1.9 < t.geomean_speedup < 2.1
    assert t.vs_base is not None and 1.05 < t.vs_base.point < 1.15  # over the round's base, not the initial
    assert all(c.speedup_ci and c.method == "cudagraph" and c.baseline_ms for c in t.cases)
    no_base = to_timing(timed_eval([{**c, "blocks": {k: v for k, v in c["blocks"].items() if k != "base"}} for c in cases]), None,
                        backend="cuda", problem=problem)
    assert no_base.vs_base == no_base.geomean_ci  # the base is the initial candidate


def test_committed_trajectories_still_load() -> None:
    root = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "suite"
    files = _data.glob(root, "*/session/trajectory.json")  # committed ones are packed (benchmarks/_data.py)
    assert files, "no committed suite trajectories"
    for f in files[:10]:
        t = Trajectory.model_validate_json(_data.read_text(f))
        assert t.noise_floor is None and t.selection is None and all(r.phase_s == {} for r in t.rounds)


def test_synthesis_follows_the_interval_verdict_not_the_raw_ratio() -> None:
    from kb.models import RatioCI, RoundRewrite
    from synthesis.rounds import categorize

    def rnd(outcome: str, ci: RatioCI | None) -> Round:
        t = Timing(protocol=TimingProtocol(method="interleaved-blocks"), geomean_speedup=1.2, vs_base=ci)
        return Round(index=1, outcome=outcome, rewrite=RoundRewrite(family="f"), validation=Validation(passed=True), timing=t)

    noisy = RatioCI(point=1.2, lo=0.9, hi=1.5)
    assert categorize(rnd("neutral", noisy), 1.2) == "neutral"  # a 1.2x point inside the noise is no pattern evidence
    assert categorize(rnd("improved", RatioCI(point=1.2, lo=1.15, hi=1.25)), 1.2) == "improved"
    assert categorize(rnd("regressed", RatioCI(point=0.8, lo=0.75, hi=0.85)), 0.8) == "slower"
    assert categorize(rnd("neutral", None), 1.2) == "improved"  # old trajectories keep the 3% tolerance


def test_to_timing_reports_host_time_and_flags_a_host_regression() -> None:
    problem = load_problem(DATA / "softmax")
    label = f"M={problem.cases[0]['M']},N={problem.cases[0]['N']}"
    case = {**timed_case(label, {"candidate": blocks(0.5, 0.01), "initial": blocks(1.0, 0.01, seed=3)}),
            "host": {"candidate": {"wall_ms": 0.9, "launch_ms": 0.9}, "initial": {"wall_ms": 1.0, "launch_ms": 0.02}}}
    t = to_timing(timed_eval([case]), None, backend="cuda", problem=problem)
    assert t.cases[0].host_ms == 0.9 and t.cases[0].baseline_host_ms == 1.0 and t.host_regressed == []
    case["host"]["candidate"]["wall_ms"] = 1.3  # faster on the device, slower per call from Python
    t = to_timing(timed_eval([case]), None, backend="cuda", problem=problem)
    assert t.geomean_speedup > 1.5 and t.host_regressed == [label]
