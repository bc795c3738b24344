"""Replay of recorded GPU diagnoses: the L2 rows are rebuilt from the recorded evidence exactly as L2 built them."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import _data
from benchmarks.diagnosis.replay import l2_cases
from optimizer.ladder.causes import profile_findings

ROWS = Path(__file__).resolve().parents[2] / "benchmarks/results/diagnosis/gpu/rows_eval.jsonl"


def test_recorded_l2_evidence_rebuilds_per_case_signals() -> None:
    row = next(json.loads(ln) for ln in _data.read_text(ROWS).splitlines() if '"bias_gelu_residual"' in ln)
    cases = l2_cases(row["l2_raw"])
    assert [c["case"] for c in cases] == ["M=8192,N=8192", "M=16384,N=2048"]
    s = cases[0]["signals"]
    assert s["dram_pct"] > 80 and 0.2 < s["mem_fraction"] < 0.3 and s["tokens"] == ["dram_throughput"]
    assert cases[0]["class"] == "memory_bound" and cases[0]["ms"] > 0
    # the recorded counters carry the excess-traffic pattern of a three-kernel chain through fp32 intermediates
    assert any(f.cause == "redundant_passes" and f.confidence > 0 for f in profile_findings(cases, "memory_bound", 1.0))
