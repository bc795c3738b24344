"""Does the static account of the gap name each planted defect beyond the listed causes? (issue 30, CPU)

For every item of ``benchmarks/diagnosis/beyond/`` the initial kernel and the reference fix are dry-recorded at the
representative case (no kernel runs) and each recorded launch configuration is compiled for cuda:90 and accounted
(``optimizer.ladder.gap_account.static_accounts``). An item counts as *named* when the label's ``inefficiency``
is a significant finding of the initial kernel's account, and *discriminated* when it is also absent from the
fix's account (the static levels then tell the defect from its fix).

    PYTHONPATH=. python benchmarks/diagnosis/beyond_account.py [--split eval] [--items a,b] [--per-case] [--out DIR]

``--per-case`` also accounts the initial kernel and the fix at every full-size case (``named_every_case``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._provenance import RESULTS, write_result  # noqa: E402


def account_row(item: Any, per_case: bool = False) -> dict[str, Any]:
    """One item's row: significant findings of initial and fix, named / discriminated, the planted finding's line."""
    from optimizer.ladder.gap_account import static_accounts

    row: dict[str, Any] = {"item": item.name, "split": item.split, "cause": item.cause, "inefficiency": item.inefficiency}
    for which, path in (("initial", item.initial_path), ("fix", item.fix_path)):
        t0 = time.monotonic()
        try:
            accounts, meta = static_accounts(item.problem_path, path)
        except Exception as exc:  # noqa: BLE001 -- a failed item counts as not named
            row[which] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            continue
        sig = [f for a in accounts for f in a.significant]
        planted = [f for f in sig if f.kind == item.inefficiency]
        row[which] = {"case": meta["case"], "significant": sorted({f.kind for f in sig}),
                      "planted": [f.line() for f in planted], "notes": meta["notes"],
                      "accounts": [a.model_dump(mode="json") for a in accounts], "wall_s": round(time.monotonic() - t0, 1)}
    if per_case:  # the same at every full-size case (waves and masks change with the sizes)
        from optimizer.ladder.gap_account import case_accounts

        for which, path in (("initial", item.initial_path), ("fix", item.fix_path)):
            try:
                accs = case_accounts(item.problem_path, path)
                row[f"{which}_per_case"] = {lab: sorted({f.kind for a in al for f in a.significant})
                                            for lab, al in accs.items()}
            except Exception as exc:  # noqa: BLE001
                row[f"{which}_per_case"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        pc = row["initial_per_case"]
        row["named_every_case"] = "error" not in pc and bool(pc) and all(item.inefficiency in v for v in pc.values())
    ini, fix = row.get("initial", {}), row.get("fix", {})
    row["named"] = item.inefficiency in ini.get("significant", [])
    row["discriminated"] = row["named"] and "error" not in fix and item.inefficiency not in fix.get("significant", [])
    return row


def listed_row(item: Any) -> dict[str, Any]:
    """A LISTED item's initial kernel: which significant findings its own labelled cause does not explain (what the
    account would report as unexplained even when the ladder decides the label's cause: its false alarms)."""
    from optimizer.ladder.gap_account import static_accounts

    try:
        accounts, meta = static_accounts(item.problem_path, item.initial_path)
    except Exception as exc:  # noqa: BLE001
        return {"item": item.name, "cause": item.cause, "error": f"{type(exc).__name__}: {exc}"[:300]}
    sig = [f for a in accounts for f in a.significant]
    causes = {item.cause, *item.secondary}
    return {"item": item.name, "split": item.split, "cause": item.cause, "case": meta["case"],
            "significant": sorted({f.kind for f in sig}),
            "unexplained_given_label": sorted({f.kind for f in sig if not set(f.explained_by) & causes})}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out = {}
    for split in ("tune", "eval", "all"):
        rs = [r for r in rows if split == "all" or r["split"] == split]
        n = len(rs)
        out[split] = {"n": n, "named": sum(r["named"] for r in rs), "discriminated": sum(r["discriminated"] for r in rs),
                      "named_rate": round(sum(r["named"] for r in rs) / n, 3) if n else None,
                      "discriminated_rate": round(sum(r["discriminated"] for r in rs) / n, 3) if n else None,
                      "named_every_case": sum(bool(r.get("named_every_case")) for r in rs)
                      if any("named_every_case" in r for r in rs) else None}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("tune", "eval", "all"), default="all")
    ap.add_argument("--items", default="")
    ap.add_argument("--out", default=None)
    ap.add_argument("--listed", action="store_true", help="account the 48 listed items' initial kernels instead "
                    "(what would be reported unexplained although the label's cause is known)")
    ap.add_argument("--per-case", action="store_true", help="also account every full-size case (one dry record each)")
    a = ap.parse_args(argv)
    from benchmarks.diagnosis.dataset import load_beyond

    if a.listed:
        from collections import Counter

        from benchmarks.diagnosis.dataset import load_items

        rows = []
        listed = load_items(None if a.split == "all" else a.split)
        listed = [i for i in listed if not a.items or i.name in set(a.items.split(","))]
        for i, item in enumerate(listed, 1):
            rows.append(listed_row(item))
            print(f"[{i}] {item.name} ({item.cause}): unexplained {rows[-1].get('unexplained_given_label', rows[-1])}",
                  flush=True)
        counts = Counter(k for r in rows for k in r.get("unexplained_given_label", []))
        summary = {"n": len(rows), "with_any_unexplained": sum(bool(r.get("unexplained_given_label")) for r in rows),
                   "per_kind": dict(counts.most_common())}
        print(summary)
        path = write_result("listed_account_cpu", {"command": " ".join(["beyond_account.py", *(argv or sys.argv[1:])]),
                                                   "summary": summary, "rows": rows},
                            Path(a.out) if a.out else RESULTS / "diagnosis")
        print(f"wrote {path}")
        return 0
    items = load_beyond(None if a.split == "all" else a.split)
    if a.items:
        items = [i for i in items if i.name in set(a.items.split(","))]
    rows = []
    for i, item in enumerate(items, 1):
        row = account_row(item, per_case=a.per_case)
        rows.append(row)
        mark = "named" if row["named"] else "MISSED"
        print(f"[{i}/{len(items)}] [{item.split}] {item.name}: {item.inefficiency} {mark}"
              f"{', not in fix' if row['discriminated'] else ''}; initial {row['initial'].get('significant', row['initial'])}"
              f"; fix {row['fix'].get('significant', row['fix'])}"
              + (f"; per case {row['initial_per_case']}" if a.per_case else ""), flush=True)
    summary = summarize(rows)
    for split, s in summary.items():
        print(f"{split:5} n={s['n']:2} named {s['named']}/{s['n']} discriminated {s['discriminated']}/{s['n']}")
    path = write_result("beyond_account_cpu" + ("_per_case" if a.per_case else ""), {"command": " ".join(["beyond_account.py", *(argv or sys.argv[1:])]),
                                               "summary": summary, "rows": rows},
                        Path(a.out) if a.out else RESULTS / "diagnosis")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
