"""A static diagnosis given recorded GPU times (``ladder.keys.RECORDED_TIMING``): L1 reads the roofline fraction from
them, so a kernel measured at its roofline stops with ``at_roofline`` and one with headroom has it refuted."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.diagnosis import diagnose
from optimizer.harness.problem import case_label, load_problem
from optimizer.profile.roofline import peaks_for

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "benchmarks" / "suite" / "swiglu"


@pytest.fixture
def client(kb):
    from retrieval.client import LocalKBClient

    return LocalKBClient(kb=kb)


def _recorded(fraction: float) -> dict:
    """Times that put every full-size case at ``fraction`` of its H200 memory roofline."""
    prob, peaks = load_problem(FOLDER), peaks_for("NVIDIA H200")
    assert peaks is not None
    ms = {case_label(c): prob.bytes_moved(c) / (peaks.hbm_gbps * 1e9) * 1e3 / fraction for c in prob.cases}
    return {"device": "NVIDIA H200", "case_ms": ms, "source": "test record"}


def _roofline(d) -> list:
    return [f for f in d.causes if f.cause == "at_roofline" and f.level == "L1"]


def test_recorded_times_at_the_roofline_stop_the_ladder(client, tmp_path: Path) -> None:
    d = diagnose(FOLDER, FOLDER / "initial.py", backend="interpreter", max_level="L1", kb=client, workdir=tmp_path,
                 validate=False, recorded_timing=_recorded(0.9))
    roof = _roofline(d)
    assert roof and roof[0].confidence > 0.5 and "recorded on NVIDIA H200: test record" in roof[0].summary
    assert d.decision is not None and d.decision.cause == "at_roofline"


def test_recorded_times_with_headroom_refute_at_roofline(client, tmp_path: Path) -> None:
    d = diagnose(FOLDER, FOLDER / "naive.py", backend="interpreter", max_level="L1", kb=client, workdir=tmp_path,
                 validate=False, recorded_timing=_recorded(0.2))
    roof = _roofline(d)
    assert roof and roof[0].confidence == 0.0 and roof[0].refute_strength >= 0.9
    assert d.decision is None or d.decision.cause != "at_roofline"


def test_a_record_missing_a_case_is_not_read(client, tmp_path: Path) -> None:
    rec = _recorded(0.9)
    rec["case_ms"]["no such case"] = 1.0
    d = diagnose(FOLDER, FOLDER / "initial.py", backend="interpreter", max_level="L1", kb=client, workdir=tmp_path,
                 validate=False, recorded_timing=rec)
    assert not _roofline(d)
