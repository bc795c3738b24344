"""``ladder bench diagnosis``: accuracy of cause, class and rewrite family on the labelled diagnosis set.

Runs ``ladder diagnose`` (``optimizer.diagnosis.diagnose``) on every item's ``initial.py`` of
``benchmarks/diagnosis/`` and compares the ladder's decision with the label, per split (tune / eval) and per
level (the decision after L1, L2, L3, L4), with a cause confusion table.

- CPU (default): ``--backend interpreter``, L1 + L3 (static: code features and IR of the first full-size case,
  recorded without executing a kernel; validation is skipped, the set's own test validates every kernel).
- GPU: run with ``--backend cuda --max-level L4 --out DIR`` on the GPU host (writes ``diagnosis_runs.json``), then
  here ``--from DIR/diagnosis_runs.json`` recomputes the tables from the committed rows.

Statically provable causes (the CPU target's denominator): per-element grids, same-address atomics, passes,
dot precision, divisibility, spills, dot tiles.

    ladder bench diagnosis [--split eval] [--backend interpreter] [--max-level L3] [--items a,b] [--out DIR]
    ladder bench diagnosis --from benchmarks/results/diagnosis/gpu/diagnosis_runs.json
    ladder bench diagnosis --replay benchmarks/results/diagnosis/gpu/rows_h200_recorded.jsonl   (see diagnosis/replay.py)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._data import read_text  # noqa: E402  (committed results, packed or not)
from benchmarks._provenance import RESULTS, write_result  # noqa: E402

STATIC_CAUSES = frozenset({"per_element_grid", "same_address_atomics", "redundant_passes", "fma_dot",
                           "unvectorized_access", "register_spills", "small_dot_tiles"})


def _row(item: Any, d: dict[str, Any], wall_s: float) -> dict[str, Any]:
    from kb.vocab import CAUSE_CLASS

    per_level = {}
    for lv in d.get("levels") or []:
        dec = lv.get("decision")
        if dec is None:  # the level did not run its decision (L2 on the interpreter measures nothing)
            continue
        per_level[lv["level"]] = {"cause": dec.get("cause") if dec.get("decided") else "unknown",
                                  "class": lv.get("bottleneck", "unknown"),
                                  "family": (lv.get("chosen") or lv.get("best") or {}).get("id")}
    dec = d.get("decision") or {}
    cause = dec.get("cause") if dec.get("decided") else "unknown"
    from kb.vocab import CAUSE_FAMILIES

    actionable = (d.get("chosen") or {}).get("id")
    # the diagnosed family: the one the decided cause calls for (applicable or not); else what the ladder chose
    chosen = (actionable if actionable in CAUSE_FAMILIES.get(cause, ()) else CAUSE_FAMILIES.get(cause, (None,))[0]
              if cause != "unknown" and CAUSE_FAMILIES.get(cause) else actionable)
    measured = next((lv.get("bottleneck") for lv in d.get("levels") or [] if lv["level"] == "L2"), "unknown")
    # the raw L2 figures (classification per case, roofline, ncu), kept for calibrating the L2 rules offline
    l2_raw = [{"kind": e["kind"], "reference": e.get("reference", ""), "data": e.get("data", {})}
              for lv in d.get("levels") or [] if lv["level"] == "L2"
              for e in lv.get("evidence", []) if e["kind"] in ("classification", "roofline", "ncu", "timing")]
    cls = measured if measured not in (None, "unknown") else CAUSE_CLASS.get(cause, "unknown")
    # the static account of the gap (L3 evidence, issue 30): its significant finding kinds and the unexplained ones
    ev3 = [e for lv in d.get("levels") or [] if lv["level"] == "L3" for e in lv.get("evidence", [])]
    account = sorted({f["kind"] for e in ev3 if e["kind"] == "gap_account"
                      for f in (e.get("data") or {}).get("findings", []) if f.get("significant")})
    unexplained = sorted({e.get("reference", "") for e in ev3 if e["kind"] == "unexplained"})
    return {"item": item.name, "split": item.split, "label_cause": item.cause, "label_class": item.bottleneck_class,
            "label_families": list(item.families), "secondary": list(item.secondary), "cause": cause, "class": cls,
            "measured_class": measured, "family": chosen, "actionable_family": actionable, "per_level": per_level, "stop": d.get("stop"),
            "overruled": dec.get("overruled", []), "decided_by": [r.get("reference") for r in dec.get("decided_by", [])],
            "error": d.get("error", ""), "notes": d.get("notes", []), "wall_s": round(wall_s, 1), "phase_s": d.get("phase_s", {}),
            "l2_raw": l2_raw, "listed": getattr(item, "listed", True), "inefficiency": getattr(item, "inefficiency", None),
            "account": account, "unexplained": unexplained,
            "account_named": getattr(item, "inefficiency", None) in account if getattr(item, "inefficiency", None) else None}


def _acc(rows: list[dict[str, Any]], key: str) -> float | None:
    if not rows:
        return None
    if key == "family":
        ok = [r["family"] in r["label_families"] if r["label_families"] else r["family"] is None for r in rows]
    elif key == "actionable":  # what a session would apply now: the chosen family, not the diagnosed one
        ok = [r.get("actionable_family") in r["label_families"] if r["label_families"] else r.get("actionable_family") is None
              for r in rows]
    elif key == "class":
        ok = [r["class"] == r["label_class"] for r in rows]
    else:
        ok = [r["cause"] == r["label_cause"] for r in rows]
    return round(sum(ok) / len(ok), 3)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split in ("tune", "eval", "all"):
        rs = [r for r in rows if split == "all" or r["split"] == split]
        static = [r for r in rs if r["label_cause"] in STATIC_CAUSES]
        levels = sorted({lv for r in rs for lv in r["per_level"]})
        per_level = {}
        for lv in levels:
            got = [r for r in rs if lv in r["per_level"]]
            per_level[lv] = round(sum(r["per_level"][lv]["cause"] == r["label_cause"] for r in got) / len(got), 3) if got else None
        both = [r for r in rs if r["cause"] == r["label_cause"] and (r["family"] in r["label_families"] or
                                                                      (not r["label_families"] and r["family"] is None))]
        out[split] = {"n": len(rs), "cause": _acc(rs, "cause"), "class": _acc(rs, "class"), "family": _acc(rs, "family"),
                      "actionable_family": _acc(rs, "actionable"),
                      "cause_and_family": round(len(both) / len(rs), 3) if rs else None,
                      "static_n": len(static), "static_cause": _acc(static, "cause"), "cause_per_level": per_level,
                      "account_named": sum(bool(r.get("account_named")) for r in rs if r.get("inefficiency")),
                      "account_n": sum(1 for r in rs if r.get("inefficiency")),
                      "confusion": dict(Counter(f"{r['label_cause']} -> {r['cause']}" for r in rs if r["cause"] != r["label_cause"]))}
    return out


def print_tables(summary: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    print(f"{'split':6} {'n':>3} {'cause':>6} {'class':>6} {'family':>7} {'c+f':>6} {'acted':>6} {'static':>10}  per level")
    for split, s in summary.items():
        per = " ".join(f"{lv} {v:.2f}" for lv, v in s["cause_per_level"].items() if v is not None)
        st = f"{s['static_cause']:.2f}/{s['static_n']}" if s["static_cause"] is not None else "-"
        print(f"{split:6} {s['n']:>3} {s['cause'] or 0:>6.2f} {s['class'] or 0:>6.2f} {s['family'] or 0:>7.2f} "
              f"{s['cause_and_family'] or 0:>6.2f} {s['actionable_family'] or 0:>6.2f} {st:>10}  {per}"
              + (f"  account names the planted inefficiency {s['account_named']}/{s['account_n']}" if s.get("account_n") else ""))
    print("(family: the family the decided cause calls for; acted: the family the ladder would apply now, which\n"
          " differs when every family of the cause refused the kernel and a class-based family was chosen instead)")
    print("\nmisses (label -> decided, family):")
    for r in rows:
        if r["cause"] != r["label_cause"] or (r["label_families"] and r["family"] not in r["label_families"]):
            print(f"  [{r['split']}] {r['item']}: {r['label_cause']} -> {r['cause']} family {r['family']} "
                  f"(want {', '.join(r['label_families'][:2]) or 'none'}){' ERROR ' + r['error'][:80] if r['error'] else ''}")


def run(items: list[Any], backend: str, max_level: str, validate: bool, *, budget_s: float = 0.0,
        partial: Path | None = None) -> list[dict[str, Any]]:
    """Diagnose each item; stop starting new items after ``budget_s`` (0: no limit); rows are appended to
    ``partial`` (JSON lines) as they finish, so a run cut short still leaves its rows."""
    from benchmarks.suite.runner import connect_kb
    from optimizer.diagnosis import diagnose

    kb = connect_kb(None, None)  # the snapshot KB on a GPU host whose grpcio is older than the stubs
    rows: list[dict[str, Any]] = []
    start = time.monotonic()
    for i, item in enumerate(items, 1):
        if budget_s and time.monotonic() - start > budget_s:
            print(f"budget of {budget_s:.0f} s spent: {len(items) - i + 1} item(s) not run", file=sys.stderr)
            break
        t0 = time.monotonic()
        try:
            d = diagnose(item.problem_path, item.initial_path, backend=backend, max_level=max_level, kb=kb,
                         workdir=tempfile.mkdtemp(prefix=f"diag-{item.name}-"),
                         validate=validate).model_dump(mode="json")  # the rows read the `ladder diagnose --json` shape
        except Exception as exc:  # one broken item must not end the benchmark; it counts as a miss
            d = {"error": f"{type(exc).__name__}: {exc}"[:400], "levels": []}
        row = _row(item, d, time.monotonic() - t0)
        rows.append(row)
        if partial is not None:
            with partial.open("a") as fh:
                fh.write(json.dumps(row, default=str) + "\n")
        mark = "ok" if row["cause"] == row["label_cause"] else "MISS"
        print(f"[{i}/{len(items)}] {item.name}: {row['label_cause']} -> {row['cause']} / {row['family']} {mark} "
              f"({row['wall_s']} s)", file=sys.stderr, flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ladder bench diagnosis", description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("tune", "eval", "all"), default="all")
    ap.add_argument("--backend", default="interpreter")
    ap.add_argument("--max-level", default=None, help="default: L3 on the interpreter, L4 elsewhere")
    ap.add_argument("--items", default="", help="comma-separated item names")
    ap.add_argument("--set", dest="item_set", choices=("listed", "beyond"), default="listed",
                    help="beyond: the items whose defect is not a listed cause (benchmarks/diagnosis/beyond)")
    ap.add_argument("--validate", action="store_true", help="validate each candidate first (slow on CPU)")
    ap.add_argument("--from", dest="from_file", default=None, help="summarize committed rows instead of running")
    ap.add_argument("--budget-s", type=float, default=0.0, help="stop starting items after this many seconds")
    ap.add_argument("--out", default=None, help="folder for the result file (default benchmarks/results/diagnosis)")
    ap.add_argument("--replay", nargs="+", default=None, metavar="ROWS",
                    help="re-decide recorded GPU rows with the current rules (recorded counters; L1/L3/L4 re-derived here)")
    a = ap.parse_args(argv)
    if a.replay:
        from benchmarks.diagnosis.replay import main as replay_main

        return replay_main([*a.replay, *(["--out", a.out] if a.out else [])])
    from benchmarks.diagnosis.dataset import load_items

    out_dir = Path(a.out) if a.out else RESULTS / "diagnosis"
    if a.from_file and a.from_file.endswith(".jsonl"):  # rows of a run cut short
        rows = [json.loads(ln) for ln in read_text(Path(a.from_file)).splitlines() if ln.strip()]
        source, name = {"from": str(a.from_file), "partial": True}, "diagnosis_partial_summary"
    elif a.from_file:
        payload = json.loads(read_text(Path(a.from_file)))
        rows, source = payload["rows"], {"from": str(a.from_file), "run_provenance": payload.get("provenance")}
        name = Path(a.from_file).stem.replace("_runs", "") + "_summary"
    else:
        if a.item_set == "beyond":
            from benchmarks.diagnosis.dataset import load_beyond

            items = load_beyond(None if a.split == "all" else a.split)
        else:
            items = load_items(None if a.split == "all" else a.split)
        if a.items:
            want = set(a.items.split(","))
            items = [i for i in items if i.name in want]
        level = a.max_level or ("L3" if a.backend == "interpreter" else "L4")
        out_dir.mkdir(parents=True, exist_ok=True)
        rows = run(items, a.backend, level, a.validate or a.backend != "interpreter", budget_s=a.budget_s,
                   partial=out_dir / "diagnosis_rows.jsonl")
        source = {"backend": a.backend, "max_level": level, "validated": a.validate or a.backend != "interpreter"}
        name = f"diagnosis_{'beyond_' if a.item_set == 'beyond' else ''}{'cpu' if a.backend == 'interpreter' else a.backend}"
    summary = summarize(rows)
    print_tables(summary, rows)
    path = write_result(name, {"source": source, "summary": summary, "rows": rows}, out_dir)
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
