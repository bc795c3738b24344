"""compare_sets: the three starting-point sets' committed reports side by side, figures taken from each report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "suite"))

import compare_sets  # noqa: E402

from benchmarks import _data  # noqa: E402


def test_every_set_is_summarized_from_its_own_report(tmp_path: Path) -> None:
    assert compare_sets.main(["--out", str(tmp_path)]) == 0
    got = json.loads((tmp_path / "first_versions.json").read_text())
    assert got["provenance"]["date"] and set(got["sets"]) == set(compare_sets.SETS)
    for name, d in compare_sets.SETS.items():
        agg = json.loads(_data.read_text(d / "report.json"))["aggregate"]  # packed (benchmarks/_data.py)
        row = got["sets"][name]
        assert row["speedup_geomean"] == agg["speedup_geomean"] and row["problems_in_set"] == agg["ops_in_suite"]
        assert row["problems_run"] <= row["problems_in_set"]
    md = (tmp_path / "first_versions.md").read_text()
    assert all(f"| {name} |" in md for name in compare_sets.SETS)


def test_a_missing_report_is_said_not_invented(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(compare_sets, "SETS", {"nowhere": tmp_path / "absent"})
    assert compare_sets.main(["--out", str(tmp_path)]) == 2
    assert "no report at" in capsys.readouterr().err and not (tmp_path / "first_versions.md").exists()
