"""``ladder bench rounds`` summarises the parent's wall-clock stages (``Round.stages``): p50/p90 per stage path."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _rounds():
    spec = importlib.util.spec_from_file_location("ladder_bench_rounds_stages_test", ROOT / "benchmarks" / "rounds.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_stage_p50_p90_and_share_on_a_fixture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = _rounds()
    rounds = [{"index": 0, "outcome": "baseline", "duration_s": 9.0, "stages": {"evaluate": 9.0, "other": 0.0}}]
    # ten rounds: evaluate 1..10 s with a judge of half of it, persist 0.1 s, other 1 s
    for i in range(1, 11):
        rounds.append({"index": i, "outcome": "neutral", "duration_s": i + 1.1,
                       "stages": {"evaluate": float(i), "evaluate/candidate/judge": i / 2, "persist": 0.1, "other": 1.0}})
    rounds.append({"index": 11, "outcome": "inconclusive", "duration_s": 2.0})  # recorded before issue 31: no stages
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "trajectory.json").write_text(json.dumps({"rounds": rounds}))
    out = tmp_path / "rounds.json"
    assert mod.main([str(tmp_path), "--label", "cpu", "--out", str(out)]) == 0
    s = json.loads(out.read_text())["runs"]["cpu"]
    assert s["rounds"] == 11 and s["rounds_with_stages"] == 10
    ev = s["stages"]["evaluate"]
    assert ev["n"] == 10 and ev["median_s"] == 5.5 and ev["p90_s"] == pytest.approx(9.1) and ev["max_s"] == 10.0
    assert s["stages"]["evaluate/candidate/judge"]["median_s"] == 2.75
    assert s["stages"]["other"]["share"] == pytest.approx(10.0 / 66.0, abs=1e-3)  # of the stage rounds' wall time
    assert s["stages"]["evaluate"]["share"] == pytest.approx(55.0 / 66.0, abs=1e-3)
    assert "provenance" in s and "baseline" not in s["stages"]  # round 0 is reported apart
    text = capsys.readouterr().out
    lines = text.splitlines()
    tree = [ln.split()[0] for ln in lines[lines.index(next(ln for ln in lines if ln.startswith("stage "))) + 1:]
            if ln and not ln.startswith("written")]
    assert tree == ["evaluate", "judge", "persist", "other"]  # nested under its parent, other last
    assert "  judge" in text
