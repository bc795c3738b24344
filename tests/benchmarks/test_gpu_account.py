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
    accounts = {"initial.py": {"measured_ms": 0.1, "by_kind": {"idle_sms": 0.05, "memory_latency": 0.02,
                                                                "instruction_issue": 0.01}},
                "fix.py": {"measured_ms": 0.055, "by_kind": {"idle_sms": 0.005, "memory_latency": 0.02}}}
    monkeypatch.setattr(gpu_account, "account_of", lambda p, c, m: accounts[c])
    row = gpu_account.item_row(_item(), ())
    assert row["fix_removed"] == "idle_sms" and row["on_target"] and row["fix_judged"]
    assert row["fix_removed_ms"] == pytest.approx(0.045)


def test_off_target_when_the_fix_removes_a_small_part(monkeypatch: pytest.MonkeyPatch) -> None:
    accounts = {"initial.py": {"measured_ms": 0.1, "by_kind": {"idle_sms": 0.05, "memory_latency": 0.02,
                                                                "instruction_issue": 0.01}},
                "fix.py": {"measured_ms": 0.09, "by_kind": {"idle_sms": 0.05, "memory_latency": 0.02}}}
    monkeypatch.setattr(gpu_account, "account_of", lambda p, c, m: accounts[c])
    row = gpu_account.item_row(_item(), ())
    assert row["fix_removed"] == "instruction_issue" and row["fix_judged"] and not row["on_target"]


def test_a_fix_no_faster_at_the_profiled_case_is_not_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    accounts = {"initial.py": {"measured_ms": 0.268, "by_kind": {"memory_latency": 0.03, "idle_sms": 0.007}},
                "fix.py": {"measured_ms": 0.277, "by_kind": {"memory_latency": 0.02, "idle_sms": 0.01}}}
    monkeypatch.setattr(gpu_account, "account_of", lambda p, c, m: accounts[c])
    row = gpu_account.item_row(_item(), ())
    assert not row["fix_judged"] and row["on_target"] is None and "not judged" in row["judge_note"]
    summary = gpu_account.summarize([row], [])
    assert summary["fix_judged"] == 0 and summary["on_target"] == 0


def test_report_renders_every_item_and_the_caveat(tmp_path) -> None:
    ini = {"case": "N=1", "measured_ms": 0.4, "roofline_ms": 0.1, "gap_ms": 0.3, "coverage": 1.0,
           "by_kind": {"memory_latency": 0.25, "idle_sms": 0.05}}
    rows = [{"item": "a", "split": "eval", "cause": "tail_wave", "initial": ini,
             "fix": {"measured_ms": 0.12, "by_kind": {"memory_latency": 0.01, "idle_sms": 0.01}}},
            {"item": "b", "split": "tune", "cause": "strided_lanes", "initial": {"case": "N=1", "error": "ncu failed"}}]
    record = {"provenance": {"command": "gpu_account.py out", "date": "2026-12-06"}, "rows": rows,
              "summary": gpu_account.summarize(rows, [])}
    (tmp_path / "gpu_account.json").write_text(__import__("json").dumps(record))
    assert gpu_account.main([str(tmp_path), "--report", str(tmp_path / "r.md")]) == 0
    md = (tmp_path / "r.md").read_text()
    assert "| a | eval | tail_wave | 0.4 | 0.1 | 100% | memory_latency 0.25, idle_sms 0.05 | 0.12 | memory_latency | yes |" in md
    assert "| b | tune | strided_lanes | error: ncu failed" in md and "by construction" in md


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
