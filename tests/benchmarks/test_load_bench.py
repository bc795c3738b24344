"""``ladder bench load`` end to end at toy scale (2 clients, 2 s): the runner starts a real server, drives the
RPC mix, stops it, and proves every acknowledged trajectory was stored. A smoke test of the runner, not a
speed test: it asserts no figure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_load_runner_smoke(tmp_path: Path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("ladder_bench_load_test", ROOT / "benchmarks" / "load.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert mod.main(["--clients", "2", "--procs", "2", "--duration", "2", "--warmup", "1", "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "load.json").read_text())
    assert res["errors"] == 0 and res["acknowledged_trajectories_lost"] == 0
    assert res["requests"] > 0 and set(res["per_rpc"]) <= {"Search", "QuickMatch", "GetCard", "SubmitTrajectory"}
    assert res["server_rss_mib"]["before"] > 0 and res["provenance"]["command"]
