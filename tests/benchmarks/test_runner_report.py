"""The suite report on synthetic result dirs: aggregates, target verdicts, process accounting, figures, and no
timing figures (or figures of any invented number) when the results carry no GPU timing."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "suite"))

import report  # noqa: E402
from _results import H200_DATASHEET, summarize_trajectory  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def _round(i: int, outcome: str, levels: list[str], stop: str | None, speedup: float | None) -> dict[str, Any]:
    return {"index": i, "outcome": outcome, "levels_reached": levels, "duration_s": 10.0,
            "stop": {"level": stop, "bottleneck": "memory_bound"} if stop else None,
            "rewrite": {"family": f"fam-{stop}"} if stop else None, "validation": {"passed": outcome != "failed"},
            "timing": {"geomean_speedup": speedup, "cases": []}}


def _traj(best: int, rounds: list[dict[str, Any]], timed: bool = True) -> dict[str, Any]:
    base = _round(0, "baseline", [], None, 1.0 if timed else None)
    return {"id": "t-1", "best_round": best, "finished": True, "rounds": [base, *rounds]}


def _case(label: str, n: int, initial: float, best: float | None, eager: float | None, comp: float | None,
          backend: str = "cuda") -> dict[str, Any]:
    c = {"label": label, "case": {"N": n, "dtype": "float32"}, "dtype": "float32", "flops": float(n), "bytes": 8.0 * n}
    if backend == "cuda":
        c.update(initial_ms=initial, best_ms=best, eager_ms=eager, compile_ms=comp)
    return c


def _write(out: Path, op: str, traj: dict[str, Any], cases: list[dict[str, Any]], backend: str = "cuda",
           category: str = "elementwise") -> None:
    (out / op).mkdir(parents=True)
    summary = {**summarize_trajectory(traj), "complete": True, "truncated": ""}
    r = {"op": op, "status": "done", "backend": backend, "category": category, "rounds_requested": 3,
         "session": summary, "cases": cases, "compile": {"status": "ok"} if backend == "cuda" else None}
    (out / op / "result.json").write_text(json.dumps(r))


@pytest.fixture
def gpu_dir(tmp_path: Path) -> Path:
    n = 10**9  # 8 GB per case: floor = 8e9 / 4.8e12 s = 1.6667 ms, memory-bound
    # a: 4x over initial (L2 best at round 2), reached L3; b: no round won (baseline), reached L1 only;
    # c: 6x (L3 best at round 3), reached L4.
    _write(tmp_path, "a", _traj(2, [_round(1, "neutral", ["L1"], "L1", 1.0), _round(2, "improved", ["L1", "L2"], "L2", 4.0),
                                    _round(3, "inconclusive", ["L1", "L2", "L3"], None, None)]),
           [_case("N=1", n, 8.0, 2.0, 4.0, 2.0), _case("N=2", n, 16.0, 4.0, 8.0, 4.0)])
    _write(tmp_path, "b", _traj(0, [_round(1, "regressed", ["L1"], "L1", 0.5)]),
           [_case("N=1", n, 3.0, 2.0, 3.0, None)])  # 1.5x; torch.compile not timed
    _write(tmp_path, "c", _traj(3, [_round(1, "failed", ["L1"], "L1", None), _round(2, "improved", ["L1", "L2"], "L2", 2.0),
                                    _round(3, "improved", ["L1", "L2", "L3"], "L3", 6.0),
                                    _round(4, "inconclusive", ["L1", "L2", "L3", "L4"], None, None)]),
           [_case("N=1", n, 12.0, 2.0, 2.0, 1.0)])
    return tmp_path


def test_report_aggregates_targets_and_accounting(gpu_dir: Path) -> None:
    rep = report.write_report(gpu_dir)
    a = rep["aggregate"]
    assert rep["has_timing"] and a["ops_timed"] == 3
    assert a["speedup_geomean"] == pytest.approx((4 * 1.5 * 6) ** (1 / 3))
    assert a["speedup_median"] == pytest.approx(4.0)
    assert (a["ops_over_2x"], a["ops_over_5x"]) == (2, 1)
    assert a["vs_eager_geomean"] == pytest.approx((2 * 1.5 * 1) ** (1 / 3))
    assert a["ops_with_compile"] == 2 and a["vs_compile_geomean"] == pytest.approx(math.sqrt(1 * 0.5))
    floor = 8e9 / H200_DATASHEET.hbm_bytes_per_s * 1e3
    fracs = {o["op"]: o["roofline_median"] for o in rep["per_op"]}
    assert fracs["a"] == pytest.approx(((floor / 2) + (floor / 4)) / 2) and fracs["c"] == pytest.approx(floor / 2)
    assert a["memory_bound_ops"] == 3 and a["roofline_median_memory_bound_ops"] == pytest.approx(floor / 2)
    verdict = {t["name"]: t["status"] for t in rep["targets"]}
    assert verdict == {"speedup": "met", "vs_eager": "missed", "vs_compile": "missed", "roofline": "met"}

    acc = rep["accounting"]
    assert acc["trajectories"] == 3 and acc["rounds"] == 8
    assert acc["best_level"] == {"baseline": 1, "L1": 0, "L2": 1, "L3": 1, "L4": 0}
    assert acc["max_level"] == {"none": 0, "L1": 1, "L2": 0, "L3": 1, "L4": 1}
    assert acc["trajectories_reaching_level"] == {"L1": 3, "L2": 2, "L3": 2, "L4": 1}
    assert acc["best_round_index"] == {0: 1, 2: 1, 3: 1}
    assert acc["round_stop_level"] == {"L1": 3, "L2": 2, "L3": 1, "L4": 0, "inconclusive": 2}
    assert acc["outcomes"]["improved"] == 3 and acc["improving_families"] == {"fam-L2": 2, "fam-L3": 1}

    # headroom: initial / attainable floor (no measured ceilings here, so the datasheet floor)
    assert a["headroom_geomean"] == pytest.approx((math.sqrt(8 * 16) / floor * 3 / floor * 12 / floor) ** (1 / 3))
    assert a["headroom_captured"] == pytest.approx(math.log(a["speedup_geomean"]) / math.log(a["headroom_geomean"]))
    assert a["ops_initial_near_ceiling"] == 0 and a["ops_with_headroom"] == 3
    assert a["most_headroom_left"][0] == ("a", pytest.approx(math.sqrt(2 * 4) / floor))
    assert a["ops_below_eager"] == [] and a["ops_below_compile"] == ["c"]

    assert rep["figures"] == ["fig_speedup.png", "fig_times.png", "fig_process.png"]
    for name in rep["figures"]:
        assert (gpu_dir / name).read_bytes()[:8] == PNG
    md = (gpu_dir / "report.md").read_text()
    assert "| optimized / initial geomean >= 3x | 3.30x | **met** | 3 of 3 |" in md
    assert "| >= 1.0x vs torch.compile | 0.71x | **missed** | 2 of 3 |" in md
    assert "No GPU timing" not in md
    assert "| left | mem-bound |" in md and "| 1.70x | yes |" in md  # op a: best / floor = sqrt(2 * 4) / 1.6667
    assert "## Where the targets fall short, and why" in md and "Slower than torch.compile (1): `c`" in md
    assert json.loads((gpu_dir / "report.json").read_text())["aggregate"]["ops_over_5x"] == 1


def test_report_without_gpu_timing_invents_nothing(tmp_path: Path) -> None:
    _write(tmp_path, "relu", _traj(0, [_round(1, "inconclusive", ["L1", "L2", "L3", "L4"], None, None)], timed=False),
           [_case("N=8", 8, 0, None, None, None, backend="interpreter")], backend="interpreter")
    (tmp_path / "fig_speedup.png").write_bytes(PNG)  # stale, from an earlier report: must go
    rep = report.write_report(tmp_path)
    assert not rep["has_timing"]
    assert all(t["status"] == "not evaluated" and t["value"] is None for t in rep["targets"])
    assert all(v is None for k, v in rep["aggregate"].items() if k.endswith(("geomean", "median", "_ops", "_cases"))
               and k not in ("memory_bound_ops",))
    assert rep["figures"] == ["fig_process.png"]
    assert not (tmp_path / "fig_speedup.png").exists() and not (tmp_path / "fig_times.png").exists()
    md = (tmp_path / "report.md").read_text()
    assert "No GPU timing in these results" in md and "## Per case" not in md
    assert "relu" not in rep["not_run"] and "softmax" in rep["not_run"]  # suite operators without results are named
    assert rep["accounting"]["max_level"]["L4"] == 1 and rep["accounting"]["best_level"]["baseline"] == 1


def test_report_command_needs_a_result_dir(tmp_path: Path) -> None:
    assert report.main(["--out", str(tmp_path / "missing")]) == 2


def test_report_names_the_initial_set_and_refuses_a_mixed_dir(gpu_dir: Path) -> None:
    for op in ("a", "b", "c"):
        path = gpu_dir / op / "result.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "initial": "naive"}))
    rep = report.build(gpu_dir)
    assert rep["initial_set"] == "naive"
    assert "each operator's `naive.py`" in report.render_md(rep, [])
    path = gpu_dir / "b" / "result.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "initial": "initial"}))
    with pytest.raises(ValueError, match="mixed"):
        report.build(gpu_dir)
    assert report.main(["--out", str(gpu_dir)]) == 2


def test_reports_show_no_machine_paths() -> None:
    assert report.portable_path(report.REPO / "benchmarks" / "results" / "suite") == "benchmarks/results/suite"
    assert report.portable_path("/tmp/suite_g1") == ".../suite_g1"
    cmd = "runner.py --out /tmp/suite_g1 --pack /root/out/suite_g1.tar.gz --ops relu"
    assert report.portable_command(cmd) == "runner.py --out .../suite_g1 --pack .../suite_g1.tar.gz --ops relu"
    committed = (report.REPO / "benchmarks" / "results" / "suite" / "report.md").read_text()
    assert not re.search(r"(?<![\w.])/(work|tmp|root|home)/", committed), "regenerate: python benchmarks/suite/report.py"
