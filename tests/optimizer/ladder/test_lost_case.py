"""Diagnose where the time is lost: L1 names the case that loses the most time to its roofline, validation records
which cases launched each specialization, and L3 compiles the one that case launched."""

from __future__ import annotations

from pathlib import Path

from optimizer.ir.cached import hot_launch
from optimizer.ladder.l1_triage import lost_case

ROOT = Path(__file__).resolve().parents[3]


def _row(case: str, mem: float | None, comp: float | None) -> dict:
    return {"case": case, "signals": {"mem_fraction": mem, "compute_fraction": comp}}


def test_the_case_losing_most_time_wins_not_the_slowest_fraction_alone() -> None:
    # the Triton tutorial matmul on an H100: three aligned shapes at 60-65% of the tensor peak, an unaligned one at 12%
    case_ms = {"aligned4k": 0.213, "aligned8k": 0.463, "tall": 0.227, "unaligned": 1.063}
    rows = [_row("aligned4k", 0.14, 0.65), _row("aligned8k", 0.13, 0.60), _row("tall", 0.23, 0.61),
            _row("unaligned", 0.03, 0.12)]
    assert lost_case(rows, case_ms, {}) == "unaligned"
    # a slow case close to its roofline loses less than a short one far from it
    assert lost_case([_row("big", 0.95, None), _row("small", 0.2, None)], {"big": 10.0, "small": 1.0}, {}) == "small"
    # a host-bound launcher: the per-call time is the host's
    assert lost_case([_row("a", 0.5, None), _row("b", 0.5, None)], {"a": 1.0, "b": 1.0}, {"b": 3.0}) == "b"
    assert lost_case([_row("a", None, None)], {"a": 1.0}, {}) is None


def test_hot_launch_prefers_the_record_the_lost_case_made() -> None:
    aligned = {"kernel": "matmul_kernel", "launches": 12, "cases": ["aligned4k", "aligned8k"], "grid": [256]}
    unaligned = {"kernel": "matmul_kernel", "launches": 3, "cases": ["unaligned"], "grid": [240]}
    other = {"kernel": "helper", "launches": 40, "cases": ["unaligned"], "grid": [1]}
    recs = [aligned, unaligned, other]
    assert hot_launch(recs, "matmul_kernel") is aligned  # most launched, as before
    assert hot_launch(recs, "matmul_kernel", "unaligned") is unaligned
    assert hot_launch(recs, "matmul_kernel", "no_such_case") is aligned  # no record of that case: as before
    assert hot_launch([{"kernel": "k", "launches": 2}], None, "unaligned")["kernel"] == "k"  # records without cases


def test_validation_records_which_cases_launched_each_specialization() -> None:
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import case_label, load_problem
    from optimizer.settings import LadderSettings

    folder = ROOT / "benchmarks" / "realistic" / "tutorial_vector_add"
    problem = load_problem(folder / "problem.py")
    ev = evaluate(problem, folder / "initial.py", backend="interpreter", settings=LadderSettings(validation_seeds=[0]),
                  timing=False)
    assert ev.passed, ev.reason
    labels = {case_label(c) for c in problem.cases_for("interpreter")}
    recorded = [c for r in ev.launches for c in r.get("cases", [])]
    assert recorded and set(recorded) == labels, (recorded, labels)
