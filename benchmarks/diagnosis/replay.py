"""Replay recorded GPU diagnoses through the current decision rules, on a machine without a GPU.

    python benchmarks/diagnosis/replay.py ROWS.jsonl [ROWS.jsonl ...] [--out DIR]   (ladder bench diagnosis --replay)

A GPU row (``benchmarks/diagnosis_bench.py --backend cuda``) keeps the raw L2 figures it measured (per-case
roofline fractions, classification tokens, ncu counters). Replaying one re-derives the L1/L3/L4 findings from the
code and the compiler here (``ladder diagnose`` static mode: the interpreter records the launches of a full-size
case without executing a kernel; L3 compiles for sm_90), rebuilds the L2 findings from the recorded figures with the
current ``profile_findings`` rules, and decides again with ``optimizer.ladder.decide``.

What a replay is not: a fresh measurement. The counters are the ones recorded; L3 comes from this machine's Triton
(its version is in the provenance), which may differ from the GPU host's. A replay says what the current rules
decide on the evidence of that run, so a change to a rule can be checked against real counters before GPU time is
spent. Report replayed accuracy as such, next to the run's own.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._data import read_text  # noqa: E402
from benchmarks._provenance import RESULTS, write_result  # noqa: E402

__all__ = ["l2_cases", "replay_rows"]


def l2_cases(l2_raw: list[dict[str, Any]], bytes_moved: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """The per-case rows ``profile_findings`` reads, rebuilt from a row's recorded L2 evidence; ``bytes_moved`` (case
    label -> the problem's bytes) fills in what rows recorded before L2 kept it in its signals."""
    ncu = next((e["data"] for e in l2_raw if e["kind"] == "ncu"), {}) or {}
    timing = next((e["data"] for e in l2_raw if e["kind"] == "timing"), {}) or {}
    roof = {e["reference"]: e["data"] for e in l2_raw if e["kind"] == "roofline"}
    out = []
    for e in (x for x in l2_raw if x["kind"] == "classification"):
        label, data = e["reference"], e.get("data") or {}
        signals: dict[str, Any] = {k: v for k, v in ncu.items() if isinstance(v, (int, float))}
        signals |= {k: v for k, v in (roof.get(label) or {}).items() if isinstance(v, (int, float))}
        signals["tokens"] = list(data.get("signals") or [])
        if (bytes_moved or {}).get(label) and "bytes_moved" not in signals:
            signals["bytes_moved"] = bytes_moved[label]  # type: ignore[index]
        out.append(
            {
                "case": label,
                "ms": (timing.get("ms") or {}).get(label),
                "class": data.get("bottleneck", "unknown"),
                "figures": data.get("figures") or {},
                "signals": signals,
            }
        )
    return out


def replay_rows(rows: list[dict[str, Any]], *, max_level: str = "L4") -> list[dict[str, Any]]:
    from benchmarks.diagnosis.dataset import load_items
    from benchmarks.suite.runner import connect_kb
    from kb.vocab import CAUSE_FAMILIES
    from optimizer.diagnosis import diagnose
    from optimizer.kernel.features import extract_features
    from optimizer.harness.problem import case_label, load_problem
    from optimizer.ladder.causes import profile_findings, roofline_finding
    from optimizer.ladder.decide import decide, early_stop

    items = {i.name: i for i in load_items(None)}
    kb = connect_kb(None, None)
    out = []
    for n, row in enumerate(rows, 1):
        item = items.get(row["item"])
        if item is None:
            print(f"[{n}/{len(rows)}] {row['item']}: not in the labelled set, skipped", file=sys.stderr)
            continue
        t0 = time.monotonic()
        d = diagnose(
            item.problem_path,
            item.initial_path,
            backend="interpreter",
            max_level=max_level,
            kb=kb,
            workdir=tempfile.mkdtemp(prefix=f"replay-{item.name}-"),
            validate=False,
        )
        static = [f for f in d.causes if f.level != "L2"]
        measured = row.get("measured_class") or "unknown"
        dots = "tl.dot" in extract_features(item.initial_path.read_text()).tokens
        problem = load_problem(item.problem_path)
        nbytes = {case_label(c): b for c in problem.cases if (b := problem.bytes_moved(c))}
        l2 = profile_findings(l2_cases(row.get("l2_raw") or [], nbytes), measured, 1.0, dots=dots)
        dec = decide(static + l2, measured=measured, measured_any=bool(l2))
        cause = dec.cause if dec.decided else "unknown"
        # what L1 alone would do in a session round: its code findings + the timing roofline, then ``early_stop``
        roof = roofline_finding(l2_cases(row.get("l2_raw") or []), level="L1")
        l1 = decide([f for f in d.causes if f.level == "L1"] + ([roof] if roof else []), measured_any=roof is not None)
        stops, why = early_stop(l1, headroom_measured=roof is not None)
        fams = CAUSE_FAMILIES.get(cause, ())
        new = dict(
            row,
            cause=cause,
            family=(row["family"] if row.get("family") in fams else fams[0] if fams else None),
            overruled=dec.overruled,
            decided_by=[r.reference for r in dec.decided_by],
            replay={
                "recorded_cause": row["cause"],
                "recorded_family": row.get("family"),
                "reason": dec.reason,
                "ranking": [s.model_dump(mode="json") for s in dec.ranking[:5]],
                "static_seconds": round(time.monotonic() - t0, 1),
                "early_stop": {"stops": stops, "cause": l1.cause if l1.decided else "unknown", "why": why,
                               "right": stops and l1.cause == row["label_cause"]},
            },
        )
        # per-level figures stay those of the recorded run; the final decision is the replayed one
        out.append(new)
        mark = "ok" if cause == row["label_cause"] else "MISS"
        print(
            f"[{n}/{len(rows)}] {row['item']}: {row['label_cause']} -> {cause} (recorded {row['cause']}) {mark}",
            file=sys.stderr,
            flush=True,
        )
    return out


def early_stop_summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per split: kernels, how many L1 would stop before profiling, and how many of those name the labelled cause."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        e = r["replay"]["early_stop"]
        for key in (r.get("split", "?"), "all"):
            s = out.setdefault(key, {"n": 0, "stops": 0, "right": 0})
            s["n"] += 1
            s["stops"] += bool(e["stops"])
            s["right"] += bool(e["right"])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ladder bench diagnosis --replay", description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", nargs="+", type=Path, help="diagnosis_rows.jsonl / diagnosis_cuda.json files of GPU runs")
    ap.add_argument("--max-level", default="L4")
    ap.add_argument("--out", type=Path, default=RESULTS / "diagnosis" / "gpu")
    a = ap.parse_args(argv)
    from benchmarks.diagnosis_bench import print_tables, summarize

    rows: list[dict[str, Any]] = []
    for p in a.rows:
        text = read_text(p)  # a committed file may sit in a campaign archive (benchmarks/_data.py)
        rows += (
            json.loads(text)["rows"]
            if p.suffix == ".json"
            else [json.loads(ln) for ln in text.splitlines() if ln.strip()]
        )
    new = replay_rows(rows, max_level=a.max_level)
    summary = summarize(new)
    print_tables(summary, new)
    summary["early_stop"] = early_stop_summary(new)
    print("\nL1 stops before profiling (decide.early_stop): " + "; ".join(
        f"{k} {v['stops']}/{v['n']} kernels, {v['right']} of them right" for k, v in summary["early_stop"].items()))
    recorded = summarize(rows)
    path = write_result(
        "diagnosis_replay",
        {
            "source": {
                "replayed": [str(p) for p in a.rows],
                "max_level": a.max_level,
                "note": "recorded L2 counters, L1/L3/L4 re-derived here",
            },
            "summary": summary,
            "recorded_summary": recorded,
            "rows": new,
        },
        a.out,
    )
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
