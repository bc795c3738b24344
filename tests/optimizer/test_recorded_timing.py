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


def _split(device_fraction: float, host_over_device: float) -> dict:
    """A record whose device time puts every case at ``device_fraction`` of its roofline and whose eager-loop wall
    time per call is ``host_over_device`` x that."""
    rec = _recorded(device_fraction)
    rec["device_ms"] = dict(rec["case_ms"])
    rec["host_ms"] = {k: v * host_over_device for k, v in rec["case_ms"].items()}
    rec["case_ms"] = dict(rec["host_ms"])  # a flushed do_bench of a host-bound launcher times the host
    return rec


def test_a_host_bound_launcher_is_launch_overhead_not_at_the_roofline(client, tmp_path: Path) -> None:
    d = diagnose(FOLDER, FOLDER / "initial.py", backend="interpreter", max_level="L1", kb=client, workdir=tmp_path,
                 validate=False, recorded_timing=_split(0.9, 4.0))
    roof = _roofline(d)
    # the kernel is at its roofline on the device, the caller waits for the host: headroom per call
    assert roof and roof[0].confidence == 0.0 and "the kernel alone reaches 90%-90% on the device" in roof[0].summary
    host = [f for f in d.causes if f.cause == "launch_overhead" and f.level == "L1" and f.confidence > 0]
    assert host and host[0].confidence >= 0.85 and "host-bound launcher on every case" in host[0].summary
    assert d.decision is not None and d.decision.cause != "at_roofline"


def test_a_device_bound_kernel_keeps_its_device_roofline(client, tmp_path: Path) -> None:
    d = diagnose(FOLDER, FOLDER / "initial.py", backend="interpreter", max_level="L1", kb=client, workdir=tmp_path,
                 validate=False, recorded_timing=_split(0.9, 1.02))
    assert d.decision is not None and d.decision.cause == "at_roofline"
    refuted = [f for f in d.causes if f.cause == "launch_overhead" and f.level == "L1"]
    assert refuted and refuted[0].confidence == 0.0 and refuted[0].refute_strength > 0
