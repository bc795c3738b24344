"""The agreement check's bookkeeping on CPU: which sessions it finds, which session figure it holds the independent
re-time to, and the report pass beside it (the re-time itself needs a GPU: benchmarks/timing_agreement.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import timing_agreement as ta  # noqa: E402


def _traj(best: int | None, confirmed: dict | None = None) -> dict:
    case = {"case": "n=8", "ms": 0.5, "baseline_ms": 1.0, "speedup_ci": {"point": 1.9, "lo": 1.8, "hi": 2.0},
            "method": "cudagraph", "host_ms": 0.02}
    rounds = [{"index": 0, "timing": {"cases": []}},
              {"index": 1, "timing": {"geomean_speedup": 2.2, "cases": [case]}}]
    return {"problem": {"name": "relu", "path": "/nowhere/relu/problem.py", "cases": [{"n": 8}]}, "best_round": best,
            "rounds": rounds, "selection": {"confirmed": confirmed or {}}}


def test_the_session_figure_is_the_selection_retime_when_there_is_one() -> None:
    s = ta.session_figures(_traj(1, {"1": {"point": 2.05, "lo": 2.0, "hi": 2.1}}))
    assert s["speedup"] == 2.05 and s["source"] == "selection re-time"
    assert s["cases"]["n=8"] == {"speedup": 1.9, "best_ms": 0.5, "initial_ms": 1.0, "method": "cudagraph", "host_ms": 0.02}
    assert ta.session_figures(_traj(1))["speedup"] == 2.2  # no re-time: the best round's own geomean
    assert ta.session_figures(_traj(0))["speedup"] == 1.0 and ta.session_figures(_traj(None))["speedup"] == 1.0


def test_sessions_are_found_in_session_folders_and_result_dirs(tmp_path: Path) -> None:
    for op in ("relu", "gelu"):
        d = tmp_path / "res" / op / "session"
        d.mkdir(parents=True)
        (d / "trajectory.json").write_text(json.dumps(_traj(1)))
    (tmp_path / "res" / "relu" / "result.json").write_text(json.dumps(
        {"cases": [{"label": "n=8", "initial_ms": 1.0, "best_ms": 0.4}]}))
    found = ta.find_sessions([tmp_path / "res", tmp_path / "res" / "gelu" / "session"])
    assert [p.parent.name for p in found] == ["gelu", "relu", "gelu"]
    assert ta.report_figures(tmp_path / "res" / "relu" / "session") == {"n=8": {"initial_ms": 1.0, "best_ms": 0.4}}
    assert ta.report_figures(tmp_path / "res" / "gelu" / "session") == {}


def test_a_problem_is_found_by_name_when_its_recorded_path_is_elsewhere() -> None:
    assert ta.problem_path(_traj(1)) == ROOT / "benchmarks" / "suite" / "relu" / "problem.py"
    assert ta.problem_path({"problem": {"name": "no_such_problem"}}) is None


def test_bands_split_us_mid_and_ms_kernels() -> None:
    assert ta.band(0.005) == "us (<20 us)" and ta.band(0.03) == "short (20-50 us)"
    assert ta.band(0.2) == "mid (50-500 us)" and ta.band(2.0) == "ms (>=500 us)" and ta.band(None) == "?"


def _case(**ratios: float | None) -> dict:
    base = {"speedup_ratio": None, "best_ms_ratio": None, "initial_ms_ratio": None, "report_ratio": None}
    return {**base, **ratios}


def test_a_session_whose_initial_stayed_best_is_judged_on_its_report_pass() -> None:
    stayed = {"session_over_independent": 1.0, "cases": [_case(report_ratio=0.99), _case(report_ratio=1.02)]}
    assert ta.judge_row(stayed)["cases_within_5pct"]
    off = {"session_over_independent": 1.0, "cases": [_case(report_ratio=0.99), _case(report_ratio=1.08)]}
    assert not ta.judge_row(off)["cases_within_5pct"], "a report-pass case 8% off is off"
    rounds = {"session_over_independent": 1.01, "cases": [_case(speedup_ratio=1.058, report_ratio=1.0)]}
    assert ta.judge_row(rounds)["within_5pct"] and not ta.judge_row(rounds)["cases_within_5pct"]


def test_saved_runs_combine_into_one_table(tmp_path: Path) -> None:
    import json

    row = {"problem": "p", "band": "mid (50-500 us)", "session_over_independent": 1.2, "cases": [_case(report_ratio=1.0)]}
    (tmp_path / "a.json").write_text(json.dumps({"rows": [row, {"session": "s", "error": "budget spent"}]}))
    assert ta.main([str(tmp_path / "all.json"), str(tmp_path / "a.json"), "--combine"]) == 0
    summary = json.loads((tmp_path / "all.json").read_text())["summary"]
    assert summary == {"sessions": 1, "compared": 1, "within_5pct": 0, "cases_within_5pct": 1,
                       "bands": {"mid (50-500 us)": 1}}
