"""``ladder bench rounds`` on written trajectories, and ``benchmarks/aa.py``'s plumbing with the GPU timing faked."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"ladder_bench_{name}_test", ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_rounds_summary_keeps_labels_and_reads_phases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = _load("rounds")
    rounds = [{"index": 0, "outcome": "baseline", "duration_s": 5.0}]
    rounds += [{"index": i, "outcome": "neutral", "duration_s": float(10 * i),
                "phase_s": {"timing": float(i), "ir_capture": 2.0, "other": 10 * i - i - 2.0}} for i in (1, 2, 3)]
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "trajectory.json").write_text(json.dumps({"rounds": rounds}))
    out = tmp_path / "rounds.json"
    out.write_text(json.dumps({"runs": {"before": {"rounds": 126}}}))
    assert mod.main([str(tmp_path), "--label", "after", "--out", str(out)]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert runs["before"] == {"rounds": 126}  # the other label survives
    s = runs["after"]
    assert s["rounds"] == 3 and s["round_wall"]["median_s"] == 20.0 and s["baseline_round_wall"]["median_s"] == 5.0
    assert s["phases"]["timing"]["median_s"] == 2.0 and s["phases"]["ir_capture"]["share"] == pytest.approx(0.1)
    assert s["session_wall"]["total_s"] == 65.0 and s["rounds_per_gpu_hour"] == 180.0
    assert "rounds per GPU-hour" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="neither"):
        mod.main([str(tmp_path / "missing"), "--no-save"])


def test_aa_runs_the_session_verdict_on_identical_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    rng = random.Random(0)

    from optimizer.harness.contracts import TimingResult

    def fake_time_cases(run_cases, t, problem, cls, device, backend):
        roles = ["candidate", *t.against, *(["aa"] if t.aa else [])]
        cases = []
        for c in run_cases:
            blocks = {r: [1.0 + rng.gauss(0, 0.01) for _ in range(8)] for r in roles}
            cases.append({"case": ",".join(f"{k}={c[k]}" for k in sorted(c)), "stats": {"median_ms": 1.0}, "blocks": blocks,
                          "role_stats": {r: {"median_ms": 1.0} for r in roles}, "method": "do_bench", "method_note": ""})
        return TimingResult.model_validate({"protocol": {"method": "interleaved-blocks", "blocks": 8}, "cases": cases})

    monkeypatch.setattr("optimizer.harness.worker.time_cases", fake_time_cases)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "fake")
    r = _load("aa").run_operator("softmax", 20, 2, old_rule=False)
    assert r["n"] == 20 and sum(r["calls"].values()) == 20 and len(r["cases"]) == 2
    assert r["calls"].get("neutral", 0) >= 19 and r["noise_floor"]["floor"] > 0 and r["methods"] == {"do_bench": 40}
