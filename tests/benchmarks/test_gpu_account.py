"""benchmarks/diagnosis/gpu_account.py without a GPU: the per-item judgement over recorded accounts."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from benchmarks.diagnosis import gpu_account


def _item(fix: str = "fix.py") -> Any:
    return SimpleNamespace(name="k", split="eval", cause="tail_wave", inefficiency="wave_quantization",
                           problem_path="problem.py", initial_path="initial.py", fix_path=fix)


def test_on_target_when_the_fix_removes_one_of_the_two_largest_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    accounts = {"initial.py": {"by_kind": {"idle_sms": 0.05, "memory_latency": 0.02, "instruction_issue": 0.01}},
                "fix.py": {"by_kind": {"idle_sms": 0.005, "memory_latency": 0.02}}}
    monkeypatch.setattr(gpu_account, "account_of", lambda p, c, m: accounts[c])
    row = gpu_account.item_row(_item(), ())
    assert row["fix_removed"] == "idle_sms" and row["on_target"]
    assert row["fix_removed_ms"] == pytest.approx(0.045)


def test_off_target_when_the_fix_removes_a_small_part(monkeypatch: pytest.MonkeyPatch) -> None:
    accounts = {"initial.py": {"by_kind": {"idle_sms": 0.05, "memory_latency": 0.02, "instruction_issue": 0.01}},
                "fix.py": {"by_kind": {"idle_sms": 0.05, "memory_latency": 0.02}}}
    monkeypatch.setattr(gpu_account, "account_of", lambda p, c, m: accounts[c])
    row = gpu_account.item_row(_item(), ())
    assert row["fix_removed"] == "instruction_issue" and not row["on_target"]


def test_no_fix_no_judgement(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_account, "account_of", lambda p, c, m: {"by_kind": {"idle_sms": 0.01}})
    row = gpu_account.item_row(_item(fix="initial.py"), ())
    assert "fix" not in row and "on_target" not in row


def test_unknown_metrics_are_dropped_by_base_name(monkeypatch: pytest.MonkeyPatch) -> None:
    listing = "Device GH100\ndram__bytes_read   Counter   # of bytes read from DRAM\nsm__cycles_active  Counter  x\n"
    monkeypatch.setattr(gpu_account.subprocess, "run", lambda *a, **k: SimpleNamespace(stdout=listing))
    keep, dropped = gpu_account.known_metrics(("dram__bytes_read.sum", "sm__cycles_active.avg", "no__such.sum"))
    assert keep == ("dram__bytes_read.sum", "sm__cycles_active.avg") and dropped == ["no__such.sum"]


def test_launch_attributes_are_kept_although_not_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_account.subprocess, "run", lambda *a, **k: SimpleNamespace(stdout="dram__bytes_read x\n"))
    keep, dropped = gpu_account.known_metrics(("launch__grid_size", "sm__maximum_warps_per_active_cycle_pct"))
    assert dropped == [] and len(keep) == 2
