"""L2 on CUDA: torch.profiler kernel breakdown, Nsight Compute metrics when ``ncu`` exists, roofline signals.

``profile_cases`` runs inside the sandboxed worker on the GPU; ``ncu_command`` / ``parse_ncu_csv`` wrap a
worker ``run`` task under ``ncu`` and read its CSV; ``case_signals`` merges timing, roofline, profiler and
ncu figures into the flat dict ``classify_cuda`` reads.

UNTESTED HERE: ``profile_cases`` and the ncu run need a CUDA GPU (written for torch 2.11 / Triton 3.6 on an
H200); the CSV parser and the signal merge are tested on sample files in CI.
"""

from __future__ import annotations

import csv
import io
import shutil
import time
from typing import Any

__all__ = [
    "CLASSIFIER_METRICS",
    "NCU_METRICS",
    "case_signals",
    "ncu_available",
    "ncu_command",
    "parse_ncu_csv",
    "profile_cases",
    "summarize_ncu",
]

#: ncu metric -> our signal name (percentages stay percentages).
NCU_METRICS: dict[str, str] = {
    "gpu__time_duration.sum": "ncu_time",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_pct",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm_pct",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": "tensor_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy_pct",
    "launch__registers_per_thread": "registers",
    "launch__occupancy_limit_registers": "occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem": "occupancy_limit_shared_mem",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": "barrier_stall",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "long_scoreboard_stall",
    "lts__t_sector_hit_rate.pct": "l2_hit_pct",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum": "spill_bytes",
    "launch__grid_size": "grid_size",
    "launch__block_size": "block_size",
}


#: The ncu metrics ``classify_cuda`` / ``summarize_ncu`` read (ncu_time weighs launches); the rest of NCU_METRICS is
#: for humans (``ladder diagnose``) and costs replay passes in a session.
CLASSIFIER_METRICS: tuple[str, ...] = tuple(m for m, sig in NCU_METRICS.items() if sig in {
    "ncu_time", "dram_pct", "sm_pct", "tensor_pct", "occupancy_pct", "registers", "spill_bytes", "barrier_stall"})


def ncu_available() -> bool:
    return shutil.which("ncu") is not None


def ncu_command(log_file: str, kernel_regex: str | None = None, metrics: tuple[str, ...] | None = None,
                *, ranged: bool = False, launch_count: int | None = None) -> list[str]:
    """The prefix that runs a worker under ncu, writing the metric CSV to ``log_file`` (all NCU_METRICS by default).
    ``ranged``: profile only between cudaProfilerStart/Stop (``RunRequest.profiler_range``): an autotuned kernel's
    benchmark launches run before the range and are not replayed (they took 40-50 s per round on the H200).
    ``launch_count``: profile at most this many matching launches (``--launch-count``): a kernel launched once per
    head or expert in a host loop was replayed dozens of times (ncu took 21 s of a 27 s round on the H200); the
    summary is a time-weighted mean, which the first launches of the same kernel represent."""
    cmd = ["ncu", "--csv", "--page", "raw", "--metrics", ",".join(metrics or NCU_METRICS), "--target-processes", "all",
           "--log-file", log_file]
    if ranged:
        cmd += ["--profile-from-start", "off"]
    if kernel_regex:
        cmd += ["--kernel-name", f"regex:{kernel_regex}"]
    if launch_count:
        cmd += ["--launch-count", str(int(launch_count))]
    return cmd


def _num(text: str) -> float | None:
    t = (text or "").replace(",", "").strip().strip('"')
    try:
        return float(t)
    except ValueError:
        return None


def parse_ncu_csv(text: str) -> list[dict[str, Any]]:
    """Rows of an ncu CSV (``--page raw`` wide format or ``--page details`` long format) -> one dict per launch.

    Each dict has ``kernel`` plus our signal names (``NCU_METRICS``) for the metrics present. ``==PROF==`` and
    other non-CSV lines are skipped.
    """
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    if not lines:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header = rows[0]
    if "Metric Name" in header:  # long format: one row per (launch, metric)
        i_id, i_k, i_m, i_u, i_v = (
            header.index(h) for h in ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")
        )
        launches: dict[str, dict[str, Any]] = {}
        for r in rows[1:]:
            rec = launches.setdefault(r[i_id], {"kernel": r[i_k]})
            if r[i_m] in NCU_METRICS and (v := _num(r[i_v])) is not None:
                rec[NCU_METRICS[r[i_m]]] = _scale(r[i_m], r[i_u], v)
        return list(launches.values())
    units = rows[1] if len(rows) > 1 and not rows[1][0].strip().isdigit() and rows[1][0].strip() == "" else None
    body = rows[2:] if units else rows[1:]
    out = []
    k_idx = header.index("Kernel Name") if "Kernel Name" in header else None
    for r in body:
        d: dict[str, Any] = {"kernel": r[k_idx] if k_idx is not None else "?"}
        for j, name in enumerate(header):
            if name in NCU_METRICS and j < len(r) and (v := _num(r[j])) is not None:
                d[NCU_METRICS[name]] = _scale(name, units[j] if units else "", v)
        out.append(d)
    return out


def _scale(metric: str, unit: str, v: float) -> float:
    """Durations to ms; everything else as reported."""
    if metric == "gpu__time_duration.sum":
        return v * {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0}.get(
            unit.strip(), 1e-6
        )
    return v


def summarize_ncu(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Time-weighted averages of the percentages over launches; max registers / spills; the hottest kernel."""
    if not rows:
        return {}
    weights = [r.get("ncu_time", 1.0) or 1.0 for r in rows]
    total = sum(weights)
    out: dict[str, Any] = {"launches": len(rows)}
    for key in (
        "dram_pct",
        "sm_pct",
        "tensor_pct",
        "occupancy_pct",
        "barrier_stall",
        "long_scoreboard_stall",
        "l2_hit_pct",
    ):
        vals = [(r[key], w) for r, w in zip(rows, weights, strict=True) if key in r]
        if vals:
            out[key] = sum(v * w for v, w in vals) / sum(w for _, w in vals)
    for key in ("registers", "spill_bytes"):
        vals = [r[key] for r in rows if key in r]
        if vals:
            out[key] = max(vals)
    by_kernel: dict[str, float] = {}
    for r, w in zip(rows, weights, strict=True):
        by_kernel[r["kernel"]] = by_kernel.get(r["kernel"], 0.0) + w
    out["hot_kernel"] = max(by_kernel, key=lambda k: by_kernel[k])
    out["kernel_share"] = {k: v / total for k, v in sorted(by_kernel.items(), key=lambda kv: -kv[1])}
    return out


def profile_cases(
    problem: Any, cand_cls: type, cases: list[dict[str, Any]], *, iters: int = 20
) -> list[dict[str, Any]]:
    """torch.profiler per case: kernels (device time per call, launches per call) and host wall per call. GPU only."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from optimizer.labels import case_label

    out = []
    for case in cases:
        inputs = problem.make_inputs(case, 0, device="cuda")
        cand = problem.instantiate(cand_cls, case, seed=0, device="cuda")
        with torch.no_grad():
            for _ in range(3):  # compile, autotune, warm caches
                cand(*inputs)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(iters):
                cand(*inputs)
            torch.cuda.synchronize()
            wall_ms = (time.perf_counter() - t0) / iters * 1e3
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                for _ in range(iters):
                    cand(*inputs)
                torch.cuda.synchronize()
        kernels = []
        for e in prof.key_averages():
            dev = getattr(e, "self_device_time_total", None)
            if dev is None:
                dev = getattr(e, "self_cuda_time_total", 0.0)
            on_device = str(getattr(e, "device_type", "")).endswith("CUDA") or (
                dev and not getattr(e, "self_cpu_time_total", 0)
            )
            if dev and on_device:
                kernels.append({"name": e.key, "us_per_call": dev / iters, "launches_per_call": e.count / iters})
        kernels.sort(key=lambda k: -k["us_per_call"])
        device_ms = sum(k["us_per_call"] for k in kernels) / 1e3
        out.append({
            "case": case_label(case), "wall_ms": wall_ms, "device_ms": device_ms,
            "kernel_fraction": device_ms / wall_ms if wall_ms and kernels else None,  # None: no kernel seen, not 0
            "launches_per_call": sum(k["launches_per_call"] for k in kernels), "kernels": kernels[:10],
        })
    return out


def case_signals(ms: float | None, flops: float | None, bytes_moved: float | None, peaks: Any,
                 prof: dict[str, Any] | None, ncu: dict[str, Any] | None, *, compute: str = "fp32") -> dict[str, Any]:
    """Flat signals for ``classify_cuda`` from timing, roofline (with the peak of ``compute``, see
    ``roofline.compute_kind``), profiler and ncu figures (any may be None)."""
    from optimizer.profile.roofline import roofline_split

    s: dict[str, Any] = {"ms": ms, "bytes_moved": bytes_moved}
    if peaks is not None and ms:
        c, m = roofline_split(flops, bytes_moved, peaks, compute=compute)
        s["compute_fraction"] = c / ms if c is not None else None
        s["mem_fraction"] = m / ms if m is not None else None
    if prof:
        s["kernel_fraction"] = prof.get("kernel_fraction")
        s["launches_per_call"] = prof.get("launches_per_call")
    for k, v in (ncu or {}).items():
        if isinstance(v, (int, float)):
            s[k] = v
    return {k: v for k, v in s.items() if v is not None}
