"""L2's measured account of the gap (settings.ncu_account) as evidence, with ncu replaced by recorded rows."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace
from typing import Any

import pytest

from optimizer.harness.measure import NcuLaunches
from optimizer.ladder import l2_profile

STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"


def _ctx() -> Any:
    cases = [{"N": 1 << 20}, {"N": 1 << 24}]
    problem = SimpleNamespace(cases_for=lambda backend: cases, size=lambda c: c["N"],
                              bytes_moved=lambda c: 8.0 * c["N"], flops=lambda c: None)
    phases = SimpleNamespace(time=lambda name: contextlib.nullcontext())
    return SimpleNamespace(problem=problem, candidate="cand.py", source_sha="abc", settings=None, cache={},
                           phases=phases, evaluation=SimpleNamespace(device="NVIDIA H200", launches=[]))


def test_account_evidence_names_parts_and_what_no_listed_cause_explains(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def fake(problem: Any, candidate: Any, case: dict, **kw: Any) -> NcuLaunches:
        seen["case"] = case
        return NcuLaunches(rows=[{"kernel": "k", "gpu__time_duration.sum": 0.1, "dram__bytes_read.sum": 8.0 * (1 << 24),
                                  STALL.format("long_scoreboard"): 1.0, STALL.format("branch_resolving"): 3.0}])

    monkeypatch.setattr(l2_profile.measure, "ncu_launches", fake)
    monkeypatch.setattr("optimizer.profile.cuda.ncu_available", lambda: True)
    ctx = _ctx()
    item = l2_profile.ProfileLevel()._account(ctx)
    assert seen["case"] == {"N": 1 << 24}  # the largest case
    assert ctx.cache["account:abc"]["findings"][0]["kind"] == "control_flow"  # kept for the decision
    assert item is not None and item.kind == "gap_account"
    assert item.data["findings"][0]["kind"] == "control_flow"  # 3 of 4 stall samples
    assert item.data["unexplained"] == ["control_flow"]
    assert "not explained by a listed cause: control_flow" in item.summary


def test_no_rows_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(l2_profile.measure, "ncu_launches", lambda *a, **k: NcuLaunches(error="timeout"))
    monkeypatch.setattr("optimizer.profile.cuda.ncu_available", lambda: True)
    item = l2_profile.ProfileLevel()._account(_ctx())
    assert item is not None and "timeout" in item.summary


def test_without_ncu_no_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("optimizer.profile.cuda.ncu_available", lambda: False)
    assert l2_profile.ProfileLevel()._account(_ctx()) is None


def test_round_target_measures_the_candidate_against_the_bases_account(monkeypatch: pytest.MonkeyPatch) -> None:
    from optimizer.ladder.measured_account import round_target

    def fake(problem: Any, candidate: Any, case: dict, **kw: Any) -> NcuLaunches:
        barrier = 3.0 if candidate == "cand.py" else 0.2  # the base stalls on barriers; the candidate hardly
        return NcuLaunches(rows=[{"kernel": "k", "gpu__time_duration.sum": 0.1, "dram__bytes_read.sum": 8.0 * (1 << 24),
                                  STALL.format("long_scoreboard"): 1.0, STALL.format("barrier"): barrier}])

    monkeypatch.setattr(l2_profile.measure, "ncu_launches", fake)
    monkeypatch.setattr("optimizer.profile.cuda.ncu_available", lambda: True)
    ctx = _ctx()
    t = round_target(ctx, "round_01.py", "loop_reductions")  # L2 did not run: the base is measured here
    assert "account:abc" in ctx.cache
    assert t.cause == "loop_reductions" and t.kinds == ["barrier_sync"]
    assert t.after_ms < 0.5 * t.before_ms and t.verdict == "removed"
