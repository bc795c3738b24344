"""L2 on Ascend: execution through torch-npu, and a parser for msprof op-summary output.

The parser reads ``op_summary_*.csv`` (msprof CLI, ``--aic-metrics=PipeUtilization``) and the torch-npu
profiler's ``kernel_details.csv`` (same PMU columns, different names for a few basic ones). Documented
columns used: ``Op Name``/``Name``, ``OP Type``/``Type``, ``Task Type``/``Accelerator Core``, ``Task Duration(us)``/
``Duration(us)``, ``Task Wait Time(us)``/``Wait Time(us)``, ``Block Dim``, ``Mix Block Dim``, and the ratios
``aiv_vec_ratio``, ``aiv_scalar_ratio``, ``aiv_mte2_ratio``, ``aiv_mte3_ratio``, ``aic_mac_ratio``,
``aic_scalar_ratio``, ``aic_mte1_ratio``, ``aic_mte2_ratio``, ``aic_fixpipe_ratio`` (cycle shares of each pipe),
with times ``aiv_time(us)`` / ``aicore_time(us)``. msprof's memory-bound index is mte2 / max(mac, vec).

UNTESTED ON HARDWARE: no Ascend NPU was available. The parser and the mapping into bottleneck classes are
tested on realistic sample files that follow the documented columns (tests/optimizer/data/msprof/);
``profile_cases_npu`` (torch_npu.profiler) and ``msprof_command`` follow the documented interfaces only.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, cast

from optimizer.profile.classify import Classification, classify_ascend

__all__ = [
    "OpRow",
    "classify_ops",
    "find_profile_csv",
    "msprof_command",
    "parse_op_summary",
    "profile_cases_npu",
    "summarize_ops",
]

_ALIASES: dict[str, tuple[str, ...]] = {
    "op_name": ("Op Name", "Name"),
    "op_type": ("OP Type", "Op Type", "Type"),
    "task_type": ("Task Type", "Accelerator Core"),
    "task_duration_us": ("Task Duration(us)", "Duration(us)"),
    "task_wait_us": ("Task Wait Time(us)", "Wait Time(us)"),
    "block_dim": ("Block Dim",),
    "mix_block_dim": ("Mix Block Dim",),
    "aicore_time_us": ("aicore_time(us)", "aic_time(us)"),
    "aiv_time_us": ("aiv_time(us)",),
}
_RATIOS = ("aiv_vec_ratio", "aiv_scalar_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio", "aic_mac_ratio", "aic_scalar_ratio",
           "aic_mte1_ratio", "aic_mte2_ratio", "aic_fixpipe_ratio", "aic_cube_ratio")

OpRow = dict[str, Any]


def _num(v: str | None) -> float | None:
    if v is None:
        return None
    t = v.strip().strip('"').rstrip("%")
    if not t or t.upper() in ("N/A", "NA", "-"):
        return None
    try:
        return float(t)
    except ValueError:
        return None


def parse_op_summary(source: str | Path) -> list[OpRow]:
    """Rows of an op_summary / kernel_details CSV with normalized keys; unknown columns are kept as-is."""
    text = (
        Path(source).read_text(encoding="utf-8-sig")
        if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source and Path(source).exists())
        else str(source)
    )
    reader = csv.DictReader(io.StringIO(text))
    rows: list[OpRow] = []
    for raw in reader:
        raw = {(k or "").strip(): v for k, v in raw.items()}
        row: OpRow = {}
        for key, names in _ALIASES.items():
            col = next((n for n in names if n in raw), None)
            if col is None:
                continue
            row[key] = raw[col].strip() if key in ("op_name", "op_type", "task_type") else _num(raw[col])
        for r in _RATIOS:
            if r in raw:
                v = _num(raw[r])
                if v is not None:
                    row[r] = v / 100.0 if v > 1.0 else v  # some exports print percentages
        if "cube_utilization(%)" in raw:
            row["cube_utilization_pct"] = _num(raw["cube_utilization(%)"])
        if row.get("op_name") or row.get("op_type"):
            rows.append(row)
    return rows


def summarize_ops(rows: list[OpRow], name_filter: str | None = None) -> dict[str, Any]:
    """Aggregate by op name (duration-weighted ratios); the hottest op's figures are the headline signals."""
    sel = [r for r in rows if not name_filter or name_filter in (r.get("op_name", "") + r.get("op_type", ""))]
    sel = [r for r in sel if (r.get("task_type") or "").upper() not in ("AI_CPU", "HCCL")] or sel
    groups: dict[str, list[OpRow]] = {}
    for r in sel:
        groups.setdefault(r.get("op_type") or r.get("op_name", "?"), []).append(r)
    ops = []
    for name, rs in groups.items():
        dur = [r.get("task_duration_us") or 0.0 for r in rs]
        total = sum(dur) or float(len(rs))
        agg: dict[str, Any] = {"op": name, "count": len(rs), "total_us": sum(dur), "mean_us": sum(dur) / len(rs),
                               "task_type": rs[0].get("task_type", ""), "block_dim": rs[0].get("block_dim")}
        waits = [r["task_wait_us"] for r in rs if r.get("task_wait_us") is not None]
        if waits:
            agg["mean_wait_us"] = sum(waits) / len(waits)
        for key in _RATIOS:
            vals = [(r[key], d or 1.0) for r, d in zip(rs, dur, strict=True) if key in r]
            if vals:
                agg[key] = sum(v * w for v, w in vals) / (sum(w for _, w in vals) or total)
        ops.append(agg)
    ops.sort(key=lambda o: -o["total_us"])
    all_us = sum(o["total_us"] for o in ops)
    for o in ops:
        o["share"] = o["total_us"] / all_us if all_us else None
    return {"ops": ops, "hot": ops[0] if ops else None, "total_us": all_us}


def classify_ops(summary: dict[str, Any]) -> Classification:
    """Bottleneck class of the hottest op (the kernel under optimization)."""
    hot = summary.get("hot")
    if not hot:
        return Classification(reasons=["no device ops in the profile"])
    signals = {k: hot[k] for k in _RATIOS if k in hot}
    signals["task_duration_us"] = hot.get("mean_us")
    signals["task_wait_us"] = hot.get("mean_wait_us")
    c = classify_ascend(signals)
    c.reasons.insert(
        0, f"hot op {hot['op']} ({hot.get('share') or 0:.0%} of device time, {hot['mean_us']:.1f} us mean)"
    )
    return c


def find_profile_csv(out_dir: str | Path) -> Path | None:
    """The newest op_summary_*.csv or kernel_details.csv under a profiler output directory."""
    root = Path(out_dir)
    found = sorted([*root.rglob("op_summary*.csv"), *root.rglob("kernel_details.csv")], key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def msprof_command(out_dir: str, application: list[str]) -> list[str]:
    """msprof CLI around an application (documented flags; untested without CANN)."""
    return ["msprof", f"--output={out_dir}", "--aic-metrics=PipeUtilization", "--task-time=l1",
            "--application=" + " ".join(application)]


def profile_cases_npu(
    problem: Any, cand_cls: type, cases: list[dict[str, Any]], *, out_dir: str = ".", iters: int = 10
) -> list[dict[str, Any]]:
    """Run each case under torch_npu.profiler (PipeUtilization) and parse kernel_details.csv. NPU only, untested."""
    import torch
    import torch_npu  # noqa: F401

    from optimizer.labels import case_label

    prof_mod = torch_npu.profiler
    npu = cast(Any, torch).npu  # registered by torch_npu; torch's stubs do not declare it
    out = []
    for case in cases:
        inputs = problem.make_inputs(case, 0, device="npu")
        cand = problem.instantiate(cand_cls, case, seed=0, device="npu")
        case_dir = Path(out_dir) / case_label(case).replace(",", "_").replace("=", "")
        cfg = prof_mod._ExperimentalConfig(
            aic_metrics=prof_mod.AiCMetrics.PipeUtilization, profiler_level=prof_mod.ProfilerLevel.Level1
        )
        with torch.no_grad():
            for _ in range(3):
                cand(*inputs)
            npu.synchronize()
            with prof_mod.profile(
                activities=[prof_mod.ProfilerActivity.CPU, prof_mod.ProfilerActivity.NPU],
                experimental_config=cfg,
                on_trace_ready=prof_mod.tensorboard_trace_handler(str(case_dir)),
            ):
                for _ in range(iters):
                    cand(*inputs)
                npu.synchronize()
        path = find_profile_csv(case_dir)
        summary = summarize_ops(parse_op_summary(path)) if path else {}
        out.append({"case": case_label(case), "csv": str(path) if path else None, "summary": summary,
                    "classification": classify_ops(summary).as_dict() if summary else None})
    return out
