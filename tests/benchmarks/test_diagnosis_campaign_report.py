"""The diagnosis campaign report: best against the reference fix, per item and per half."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.diagnosis import campaign_report as cr
from benchmarks.diagnosis.dataset import load_items

ITEMS = {i.name: i for i in load_items()}


def _result(initial: float, best: float, fix: float | None, families: list[str], *, status: str = "done") -> dict:
    rounds = [{"index": 0, "outcome": "baseline", "family": None}]
    rounds += [{"index": i + 1, "outcome": "improved", "family": f} for i, f in enumerate(families)]
    case = {"label": "n=1", "initial_ms": initial, "best_ms": best, "eager_ms": 1.0}
    if fix is not None:
        case["fix_ms"] = fix
    return {"status": status, "cases": [case], "session": {"rounds": rounds, "rounds_run": len(families),
                                                            "best_round": len(families), "best_family": (families or [None])[-1]}}


def test_removed_only_within_the_margin_of_the_fix_and_with_the_family_recorded() -> None:
    axpby = ITEMS["axpby"]
    row = cr.judge(axpby, _result(1.0, 0.012, 0.01, ["block-per-program"]), 1.5)
    assert row["removed"] and row["verdict"] == "removed" and row["family_ok"]
    assert abs(row["speedup"] - 1 / 0.012) < 1e-6
    slow = cr.judge(axpby, _result(1.0, 0.02, 0.01, ["launch-param-search"]), 1.5)
    assert slow["removed"] is False and "2.00x the fix" in slow["verdict"] and not slow["family_ok"]


def test_an_initial_already_within_the_margin_of_its_fix_is_not_counted_and_roofline_items_must_not_regress() -> None:
    row = cr.judge(ITEMS["axpby"], _result(1.0, 1.0, 1.0 / 1.3, []), 1.5)  # the fix gains 1.3x: 'within 1.5x' proves nothing
    assert row["removed"] is None and "cannot tell" in row["verdict"]
    roof = next(i for i in ITEMS.values() if i.cause == "at_roofline")
    assert cr.judge(roof, _result(1.0, 1.0, None, []), 1.5)["removed"] is True
    assert cr.judge(roof, _result(1.0, 1.2, None, ["launch-param-search"]), 1.5)["removed"] is False
    assert cr.judge(ITEMS["axpby"], None, 1.5)["verdict"] == "not run"


def test_report_counts_each_half_and_writes_json_and_markdown(tmp_path: Path) -> None:
    out = tmp_path / "campaign"
    for name, res in {"axpby": _result(1.0, 0.01, 0.01, ["block-per-program"]),
                      "embedding_gather": _result(1.0, 0.5, 0.01, ["launch-param-search"])}.items():
        (out / name).mkdir(parents=True)
        (out / name / "result.json").write_text(json.dumps({"op": name, **res}))
    assert cr.main(["--out", str(out)]) == 0
    data = json.loads((tmp_path / "campaign_vs_fix.json").read_text())
    ev = data["summary"]["eval"]
    assert (ev["run"], ev["judged"], ev["removed"], ev["family_ok"]) == (2, 2, 1, 1)
    assert "axpby" not in ev["not_run"] and "bmm_bf16" in ev["not_run"]
    assert "| axpby | eval | per_element_grid |" in (tmp_path / "campaign_vs_fix.md").read_text()


def test_items_re_run_after_a_change_are_marked_and_counted_apart(tmp_path: Path) -> None:
    out = tmp_path / "campaign"
    for name in ("axpby", "embedding_gather"):
        (out / name).mkdir(parents=True)
        (out / name / "result.json").write_text(json.dumps({"op": name, **_result(1.0, 0.01, 0.01, ["block-per-program"])}))
    (out / "runs.jsonl").write_text("\n".join(json.dumps(e) for e in [
        {"event": "start", "args": {"ops": ["axpby", "embedding_gather"], "redo": False}},
        {"event": "end"},
        {"event": "start", "args": {"ops": ["embedding_gather"], "redo": True}},
    ]) + "\n")
    assert cr.main(["--out", str(out)]) == 0
    ev = json.loads((tmp_path / "campaign_vs_fix.json").read_text())["summary"]["eval"]
    assert (ev["removed"], ev["removed_without_reruns"], ev["rerun"]) == (2, 1, ["embedding_gather"])
    md = (tmp_path / "campaign_vs_fix.md").read_text()
    assert "1/2 counting the items re-run after a change (embedding_gather) as not removed" in md
    assert "| removed (re-run after a change) |" in md and "| axpby |" in md
