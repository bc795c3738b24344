"""Did the optimizer remove the planted cause? The diagnosis set's campaign against each item's reference fix.

``runner.py --set diagnosis`` runs an ordinary optimizer session on each labelled item's ``initial.py`` (the session
never sees ``label.yaml`` or ``fix.py``) and then times initial, best, the reference ``fix.py`` and torch eager in one
worker per item. This report reads those result dirs and, per item, says whether the planted cause was removed: the
best is within ``--within`` (default 1.5x) of the reference fix, geomean over the item's cases (issue 15's target:
>= 80% of the evaluation half). Where the reference fix is no faster than the initial kernel the item cannot show a
removal and is listed apart rather than counted as a success: that is every item whose initial kernel is already
within the margin of its fix (the fix gains less than ``--within``), since there "within 1.5x" holds with no change
at all. ``at_roofline`` items have no fix and pass when the session selected nothing slower than the initial kernel.
Each row also says whether the session's first structural choice (the family of round 1) was one the label accepts.
Items whose committed session comes from a ``--redo`` run (``runs.jsonl``: re-run after a change, typically a
transform extended for what the first run showed) are marked: the summary also counts the removals without them,
so a figure that learned from its own items is not passed off as blind.

    python benchmarks/diagnosis/campaign_report.py [--out benchmarks/results/diagnosis/campaign]

Writes ``campaign_vs_fix.json`` and ``campaign_vs_fix.md`` next to the result dir.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
for _p in (REPO, REPO / "benchmarks" / "suite", REPO / "benchmarks"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import _data  # noqa: E402
from _results import geomean, load_results  # noqa: E402

from benchmarks.diagnosis.dataset import load_items  # noqa: E402

DEFAULT_OUT = REPO / "benchmarks" / "results" / "diagnosis" / "campaign"


def _ratio(cases: list[dict[str, Any]], num: str, den: str) -> float | None:
    return geomean([c[num] / c[den] for c in cases if c.get(num) and c.get(den)])


def judge(item: Any, r: dict[str, Any] | None, within: float) -> dict[str, Any]:
    """One item's row: speedups, best vs fix, the verdict and the families the session applied."""
    row: dict[str, Any] = {"item": item.name, "split": item.split, "cause": item.cause, "families": list(item.families)}
    if not r or r.get("status") != "done":
        return {**row, "verdict": "not run" if not r else f"{r.get('status')}: {str(r.get('error'))[:160]}"}
    cases, s = r.get("cases") or [], r.get("session") or {}
    improved = [x["family"] for x in s.get("rounds", []) if x.get("outcome") == "improved" and x.get("family")]
    tried = [x.get("family") for x in s.get("rounds", []) if x.get("index", 0) >= 1]
    row.update(
        rounds_run=s.get("rounds_run"), best_round=s.get("best_round"), best_level=s.get("best_level"),
        best_family=s.get("best_family"), improved_families=improved, first_family=tried[0] if tried else None,
        first_outcome=next((x.get("outcome") for x in s.get("rounds", []) if x.get("index") == 1), None),
        # at the roofline the right first move is none (a stop); elsewhere a family the label accepts
        family_ok=(tried[0] in item.families) if item.families and tried else (not item.families and not any(tried)),
        first_valid=next((x.get("passed") for x in s.get("rounds", []) if x.get("index") == 1), None),
        speedup=_ratio(cases, "initial_ms", "best_ms"), fix_speedup=_ratio(cases, "initial_ms", "fix_ms"),
        best_over_fix=_ratio(cases, "best_ms", "fix_ms"), vs_eager=_ratio(cases, "eager_ms", "best_ms"),
        truncated=bool(s.get("truncated")),
    )
    if row["speedup"] is None:  # an interpreter run: validated, not timed
        row["verdict"], row["removed"] = "not timed", None
    elif item.cause == "at_roofline":
        ok = row["speedup"] >= 0.97
        row["verdict"] = "kept (nothing to remove)" if ok else "regressed"
        row["removed"] = ok
    elif row["fix_speedup"] is None or row["best_over_fix"] is None:
        row["verdict"], row["removed"] = "fix not timed", None
    elif row["fix_speedup"] <= within:
        row["verdict"], row["removed"] = f"cannot tell: the fix gains only {row['fix_speedup']:.2f}x", None
    else:
        row["removed"] = row["best_over_fix"] <= within
        row["verdict"] = "removed" if row["removed"] else f"not removed (best {row['best_over_fix']:.2f}x the fix's time)"
    return row


def reruns(out: Path) -> set[str]:
    """Items a ``--redo`` run re-ran (their earlier record replaced), from the result dir's ``runs.jsonl``."""
    path = out / "runs.jsonl"
    names: set[str] = set()
    for line in _data.read_text(path).splitlines() if _data.exists(path) else []:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        args = event.get("args") or {}
        if event.get("event") == "start" and args.get("redo"):
            names |= set(args.get("ops") or [])
    return names


def summarize(rows: list[dict[str, Any]], within: float) -> dict[str, Any]:
    out: dict[str, Any] = {"within": within}
    for split in ("eval", "tune"):
        rs = [x for x in rows if x["split"] == split]
        run = [x for x in rs if "speedup" in x]
        judged = [x for x in run if x.get("removed") is not None]
        out[split] = {
            "items": len(rs), "run": len(run), "judged": len(judged),
            "removed": sum(bool(x["removed"]) for x in judged),
            "removed_share": round(sum(bool(x["removed"]) for x in judged) / len(judged), 3) if judged else None,
            "rerun": sorted(x["item"] for x in run if x.get("rerun")),
            "removed_without_reruns": sum(bool(x["removed"]) and not x.get("rerun") for x in judged),
            "unjudgeable": [x["item"] for x in run if x.get("removed") is None],
            "family_ok": sum(bool(x.get("family_ok")) for x in run),
            "first_valid": sum(bool(x.get("first_valid")) for x in run),
            "geomean_speedup": geomean([x["speedup"] for x in run if x.get("speedup")]),
            "not_run": [x["item"] for x in rs if "speedup" not in x],
        }
    return out


def markdown(rows: list[dict[str, Any]], summary: dict[str, Any]) -> str:
    f = lambda v: f"{v:.2f}x" if isinstance(v, float) else "-"  # noqa: E731
    lines = ["# Diagnosis set: the optimizer's best against each item's reference fix", "",
             f"An item's planted cause counts as removed when the best is within {summary['within']}x of the "
             "reference fix's time (geomean over its cases, timed in one worker). Items whose fix gains no more than "
             "that over the initial kernel cannot show a removal and are not counted. 'first family ok': round 1 "
             "applied a family the label accepts.", ""]
    for split in ("eval", "tune"):
        s = summary[split]
        lines.append(f"- **{split}**: {s['removed']}/{s['judged']} judged items removed"
                     + (f" ({s['removed_share']:.0%})" if s["removed_share"] is not None else "")
                     + (f", {s['removed_without_reruns']}/{s['judged']} counting the items re-run after a change "
                        f"({', '.join(s['rerun'])}) as not removed" if s["rerun"] else "")
                     + f"; {s['run']}/{s['items']} run; first family ok in {s['family_ok']}, its candidate valid in "
                     f"{s['first_valid']}; "
                     f"initial->best geomean {f(s['geomean_speedup'])}"
                     + (f"; not run: {', '.join(s['not_run'])}" if s["not_run"] else ""))
    lines += ["", "| item | split | cause | rounds | round 1 family -> outcome | best family | initial->best | fix | "
              "best/fix | vs eager | verdict |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for x in rows:
        first = f"{x.get('first_family') or '-'} -> {x.get('first_outcome') or '-'}" if "speedup" in x else "-"
        lines.append(f"| {x['item']} | {x['split']} | {x['cause']} | {x.get('rounds_run', '-')} | {first} | "
                     f"{x.get('best_family') or '-'} | {f(x.get('speedup'))} | {f(x.get('fix_speedup'))} | "
                     f"{f(x.get('best_over_fix'))} | {f(x.get('vs_eager'))} | {x['verdict']}"
                     + (" (re-run after a change)" if x.get("rerun") else "") + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(DEFAULT_OUT), help="the campaign's result dir")
    p.add_argument("--within", type=float, default=1.5, help="best/fix time ratio that counts as removed")
    p.add_argument("--name", default="campaign_vs_fix", help="file stem of the report, written next to --out")
    p.add_argument("--to", help="write the report files into this folder instead of next to --out")
    a = p.parse_args(argv)
    out = Path(a.out)
    results = load_results(out) if _data.is_dir(out) else {}
    again = reruns(out)
    rows = [judge(i, results.get(i.name), a.within) | ({"rerun": True} if i.name in again else {})
            for i in sorted(load_items(), key=lambda i: (i.split, i.name))]
    summary = summarize(rows, a.within)
    from benchmarks._provenance import provenance

    doc = {"provenance": provenance(), "source": str(out), "summary": summary, "items": rows}
    to = Path(a.to) if a.to else out.parent
    to.mkdir(parents=True, exist_ok=True)
    (to / f"{a.name}.json").write_text(json.dumps(doc, indent=1))
    (to / f"{a.name}.md").write_text(markdown(rows, summary))
    print(markdown(rows, summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
