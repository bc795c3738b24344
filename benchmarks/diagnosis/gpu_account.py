"""The measured account of the gap on a GPU (issue 30, item 1 and its target "the account covers >= 80% of the gap").

For every labelled item (the beyond-the-list set by default; ``--set listed`` for the 48 listed items) the initial
kernel and its reference fix run one forward of one full-size case under Nsight Compute
(``optimizer.harness.measure.ncu_launches``, raw metrics of the standard sections) and
``optimizer.profile.ncu_account.measured_account`` splits each case's gap to its roofline into measured parts.
Per item: coverage of the gap, the largest parts, and which part the fix removed most (``fix_removed``: the kind
whose ms dropped most from initial to fix) — the account is *on target* when that kind is among the initial
kernel's two largest parts (the defect the fix removes is where the account says the time goes); judged only where
the fix is at least ``MIN_FIX_GAIN`` x faster under ncu at the profiled case.

    PYTHONPATH=. python3 benchmarks/diagnosis/gpu_account.py OUT_DIR [--set beyond|listed] [--items a,b]
        [--split tune|eval] [--budget-s 500]
    python benchmarks/diagnosis/gpu_account.py OUT_DIR --report REPORT.md    (no GPU: from OUT_DIR/gpu_account.json)

GPU and ``ncu`` only (the device machine); resumable per item through ``OUT_DIR/rows.jsonl``. Metric names ncu
does not know on this version are dropped first (``ncu --query-metrics``), so one unknown name costs one figure.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def known_metrics(wanted: tuple[str, ...]) -> tuple[tuple[str, ...], list[str]]:
    """``wanted`` less the metrics whose base name ``ncu --query-metrics`` does not list (all kept if the query
    fails); also the dropped names."""
    try:
        out = subprocess.run(["ncu", "--query-metrics", "--chip", "gh100"], capture_output=True, text=True,
                             timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return wanted, []
    bases = {ln.split()[0] for ln in out.splitlines() if ln.strip() and "__" in ln.split()[0]}
    if not bases:
        return wanted, []
    # launch__* attributes and a few derived figures are not counters: --query-metrics does not list them
    keep = tuple(m for m in wanted if m.split(".")[0] in bases or m.startswith("launch__")
                 or m == "sm__maximum_warps_per_active_cycle_pct")
    return keep, [m for m in wanted if m not in keep]


def account_of(problem_path: Path, candidate: Path, metrics: tuple[str, ...]) -> dict[str, Any]:
    import torch

    from optimizer.harness.measure import ncu_launches
    from optimizer.harness.problem import load_problem
    from optimizer.kernel.features import kernel_compute_kind
    from optimizer.labels import case_label
    from optimizer.profile.ncu_account import measured_account
    from optimizer.profile.roofline import peaks_for
    from optimizer.settings import LadderSettings

    problem = load_problem(problem_path)
    case = problem.cases_for("cuda")[0]
    t0 = time.monotonic()
    got = ncu_launches(problem, candidate, case, settings=LadderSettings(), metrics=metrics)
    if not got.rows:
        return {"case": case_label(case), "error": got.error, "units": got.units,
                "wall_s": round(time.monotonic() - t0, 1)}
    peaks = peaks_for(torch.cuda.get_device_name(0))
    acc = measured_account(got.rows, bytes_moved=problem.bytes_moved(case), flops=problem.flops(case), peaks=peaks,
                           compute=kernel_compute_kind(candidate, None), case=case_label(case))
    return {"case": acc.case, "measured_ms": acc.measured_ms, "roofline_ms": acc.roofline_ms, "gap_ms": acc.gap_ms,
            "coverage": acc.coverage, "by_kind": acc.by_kind(), "top": [f.line() for f in acc.top(4)],
            "figures": [f.line() for f in acc.figures], "notes": acc.notes, "launches": len(got.rows),
            # ncu's own rows (converted: ms, bytes) and units, so that an account can be recomputed from the record
            "raw": got.rows, "units": got.units,
            "wall_s": round(time.monotonic() - t0, 1)}


#: the fix must be this much faster than the initial kernel under ncu (same case) for its removed part to be judged
MIN_FIX_GAIN = 1.05


def judge(row: dict[str, Any]) -> dict[str, Any]:
    """Which part the fix removed (the kind whose ms dropped most from initial to fix) and whether it is one of the
    initial account's two largest parts (``on_target``). Judged only where the fix is at least ``MIN_FIX_GAIN`` x
    faster at the profiled case: where it is not, the defect costs little there and any "largest drop" is noise."""
    ini, fix = row["initial"], row.get("fix") or {}
    a, b = ini.get("by_kind"), fix.get("by_kind")
    if not a or b is None or not ini.get("measured_ms") or not fix.get("measured_ms"):
        return {"fix_judged": False, "judge_note": "no account of the initial kernel or of the fix"}
    gain = ini["measured_ms"] / fix["measured_ms"]
    drops = {k: v - b.get(k, 0.0) for k, v in a.items()}
    removed = max(drops, key=lambda k: drops[k]) if drops else None
    out: dict[str, Any] = {"fix_gain": round(gain, 3), "fix_removed": removed,
                           "fix_removed_ms": drops.get(removed) if removed else None}
    if gain < MIN_FIX_GAIN:
        return out | {"fix_judged": False, "on_target": None,
                      "judge_note": f"the fix is {gain:.2f}x the initial kernel's speed at this case: not judged"}
    return out | {"fix_judged": True, "on_target": removed is not None and removed in list(a)[:2]}


def item_row(item: Any, metrics: tuple[str, ...]) -> dict[str, Any]:
    row: dict[str, Any] = {"item": item.name, "split": item.split, "cause": item.cause,
                           "inefficiency": getattr(item, "inefficiency", None)}
    row["initial"] = account_of(item.problem_path, item.initial_path, metrics)
    if item.fix_path != item.initial_path:
        row["fix"] = account_of(item.problem_path, item.fix_path, metrics)
    return row | judge(row)


def summarize(rows: list[dict[str, Any]], dropped: list[str]) -> dict[str, Any]:
    rows = [r | judge(r) for r in rows]  # rows recorded before the MIN_FIX_GAIN rule are judged again
    covs = [r["initial"]["coverage"] for r in rows if r["initial"].get("coverage") is not None]
    return {"items": len(rows), "with_gap": len(covs), "coverage_ge_80": sum(c >= 0.8 for c in covs),
            "median_coverage": sorted(covs)[len(covs) // 2] if covs else None,
            "fix_judged": sum(bool(r.get("fix_judged")) for r in rows),
            "on_target": sum(bool(r.get("on_target")) for r in rows), "min_fix_gain": MIN_FIX_GAIN,
            "dropped_metrics": dropped}


def render_report(record: dict[str, Any]) -> str:
    """The record (``gpu_account.json``) as a Markdown table, one row per item, with the summary and its caveats."""
    prov, s = record.get("provenance", {}), record["summary"]
    ver = prov.get("versions", {})
    lines = [
        "# The measured account of the gap on a GPU (labelled beyond-the-list set)", "",
        f"`{prov.get('command', '')}` on {prov.get('device', 'the lent GPU')}, {prov.get('date', '')}, Triton "
        f"{ver.get('triton')}, torch {ver.get('torch')}. One forward of the largest case under ncu (raw metrics of "
        "the standard sections), initial kernel and reference fix.", "",
        f"Items {s['items']}; with a gap to the roofline {s['with_gap']}; account covering >= 80% of the gap "
        f"{s['coverage_ge_80']} (median {s['median_coverage']}); fix judged (>= {s['min_fix_gain']}x faster than the "
        f"initial kernel under ncu) {s['fix_judged']}; of those, the part the fix removed is one of the account's "
        f"two largest (on target) {s['on_target']}.", "",
        "Coverage is named parts / gap. The parts split the launch time beyond its floor (DRAM bytes at peak "
        "bandwidth, or the busiest pipe) by the warp-stall samples, so where ncu sampled stalls it is close to "
        "100% by construction; *on target* is the test that the account points at the defect.", "",
        "| item | split | defect | initial ms | roofline ms | coverage | largest parts (ms) | fix ms | fix removed "
        "| on target |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in record["rows"]:
        r = r | judge(r)
        i, f = r["initial"], r.get("fix") or {}
        if "measured_ms" not in i:
            lines.append(f"| {r['item']} | {r['split']} | {r['cause']} | error: {i.get('error', '')[:80]} "
                         "| | | | | | |")
            continue
        cov = "-" if i.get("coverage") is None else f"{i['coverage']:.0%}"
        parts = ", ".join(f"{k} {v:.3g}" for k, v in list((i.get("by_kind") or {}).items())[:3])
        target = "not judged" if not r.get("fix_judged") else ("yes" if r.get("on_target") else "no")
        lines.append(f"| {r['item']} | {r['split']} | {r['cause']} | {i['measured_ms']:.4g} | "
                     f"{(i.get('roofline_ms') or 0):.4g} | {cov} | {parts} | {f.get('measured_ms', 0):.4g} | "
                     f"{r.get('fix_removed') or '-'} | {target} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--set", choices=("beyond", "listed"), default="beyond")
    ap.add_argument("--items", default="")
    ap.add_argument("--split", choices=("tune", "eval"))
    ap.add_argument("--budget-s", type=float, default=0.0)
    ap.add_argument("--report", metavar="MD", help="no GPU: judge OUT/gpu_account.json's rows again and write the "
                    "Markdown report to MD")
    a = ap.parse_args(argv)
    if a.report:
        record = json.loads((Path(a.out) / "gpu_account.json").read_text())
        record["summary"] = summarize(record["rows"], record["summary"].get("dropped_metrics", []))
        Path(a.report).write_text(render_report(record))
        print(json.dumps(record["summary"]), flush=True)
        return 0
    from benchmarks._provenance import provenance
    from benchmarks.diagnosis.dataset import load_beyond, load_items
    from optimizer.profile.ncu_account import ACCOUNT_METRICS

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    items = load_beyond(a.split) if a.set == "beyond" else load_items(a.split)
    if a.items:
        items = [i for i in items if i.name in set(a.items.split(","))]
    metrics, dropped = known_metrics(ACCOUNT_METRICS)
    if dropped:
        print(f"ncu does not list {len(dropped)} metric(s); dropped: {', '.join(dropped)}", flush=True)
    rows_path = out / "rows.jsonl"
    done = {json.loads(ln)["item"] for ln in rows_path.read_text().splitlines()} if rows_path.exists() else set()
    start = time.monotonic()
    for i, item in enumerate(items, 1):
        if item.name in done:
            continue
        if a.budget_s and time.monotonic() - start > a.budget_s:
            print(f"budget spent: {len(items) - i + 1} item(s) left for the next call", flush=True)
            break
        row = item_row(item, metrics)
        with rows_path.open("a") as f:
            f.write(json.dumps(row) + "\n")
        ini = row["initial"]
        cov = ini.get("coverage")
        print(f"[{i}/{len(items)}] {item.name} ({item.cause}): gap {ini.get('gap_ms', 0):.4g} ms of "
              f"{ini.get('measured_ms', 0):.4g}, coverage {'-' if cov is None else f'{cov:.0%}'}; "
              f"top {list((ini.get('by_kind') or {}).items())[:3]}; fix removed {row.get('fix_removed')} "
              f"({'on target' if row.get('on_target') else 'off target'}) {ini.get('error', '')}", flush=True)
    rows = [json.loads(ln) for ln in rows_path.read_text().splitlines()] if rows_path.exists() else []
    summary = summarize(rows, dropped)
    print(json.dumps(summary), flush=True)
    record = {"provenance": {**provenance(), "command": " ".join(sys.argv)}, "summary": summary, "rows": rows}
    (out / "gpu_account.json").write_text(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
