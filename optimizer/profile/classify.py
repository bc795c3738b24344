"""Map profile signals (CUDA or Ascend) into the shared bottleneck classes (``kb.vocab.BottleneckClass``).

Pure functions over a flat ``signals`` dict so that CUDA (timing, roofline, torch.profiler, ncu) and Ascend
(msprof op-summary ratios) land in the same vocabulary. Each rule that fires names the profile signal it
used; those names become ``Symptoms.profile_signals`` for card matching.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Classification", "classify_ascend", "classify_cuda", "dominant_class", "tiny_programs"]


@dataclass
class Classification:
    bottleneck: str = "unknown"
    reasons: list[str] = field(default_factory=list)
    signals: list[str] = field(default_factory=list)  # profile-signal tokens that support the class
    figures: dict[str, float] = field(default_factory=dict)  # the measured figures a rule used (evidence)

    def as_dict(self) -> dict[str, Any]:
        return {
            "bottleneck": self.bottleneck,
            "reasons": self.reasons,
            "signals": self.signals,
            "figures": self.figures,
        }


#: Per-program overhead rule: both roofline fractions below LOW_ROOFLINE, at least OVERSUBSCRIBED times more
#: programs than the GPU holds at once, and each program moving under TINY_PROGRAM_BYTES (and, when flops are
#: known, doing under TINY_PROGRAM_FLOPS). SM "throughput" of such a launch is instruction-issue overhead of
#: the program prologue/epilogue, not useful compute.
LOW_ROOFLINE = 0.25
OVERSUBSCRIBED = 8.0
TINY_PROGRAM_BYTES = 4096.0
TINY_PROGRAM_FLOPS = 65536.0


def tiny_programs(s: dict[str, Any]) -> dict[str, float] | None:
    """The figures showing too little work per program, or None when the rule does not hold (or lacks figures)."""
    mem, comp = _get(s, "mem_fraction"), _get(s, "compute_fraction")
    progs, resident, bpp, fpp = (
        _get(s, "programs"),
        _get(s, "resident_programs"),
        _get(s, "bytes_per_program"),
        _get(s, "flops_per_program"),
    )
    if mem is None or progs is None or not resident or bpp is None:
        return None
    if mem >= LOW_ROOFLINE or (comp is not None and comp >= LOW_ROOFLINE):
        return None
    if (
        progs < OVERSUBSCRIBED * resident
        or bpp >= TINY_PROGRAM_BYTES
        or (fpp is not None and fpp >= TINY_PROGRAM_FLOPS)
    ):
        return None
    out = {"programs": progs, "resident_programs": resident, "waves": progs / resident, "bytes_per_program": bpp,
           "mem_fraction": mem}
    out |= {k: v for k, v in (("compute_fraction", comp), ("flops_per_program", fpp), ("dram_pct", _get(s, "dram_pct")),
                              ("sm_pct", _get(s, "sm_pct"))) if v is not None}
    return out


def _get(s: dict[str, Any], key: str) -> float | None:
    v = s.get(key)
    return float(v) if isinstance(v, (int, float)) else None


def classify_cuda(s: dict[str, Any]) -> Classification:
    """Rules, in order: launch overhead, tiny programs, DRAM, compute, occupancy, barriers, else latency.

    Signals used (any may be missing): ``kernel_fraction`` (GPU busy / host wall per call, torch.profiler),
    ``launches_per_call``, ``ms``, ``mem_fraction`` / ``compute_fraction`` (roofline), and ncu percentages
    ``dram_pct``, ``sm_pct``, ``tensor_pct``, ``occupancy_pct``, ``registers``, ``spill_bytes``, ``barrier_stall``, and
    the launch shape of the hot kernel ``programs`` / ``resident_programs`` / ``bytes_per_program`` /
    ``flops_per_program``.
    """
    c = Classification()
    kf, lpc, ms = _get(s, "kernel_fraction"), _get(s, "launches_per_call"), _get(s, "ms")
    mem, comp = _get(s, "mem_fraction"), _get(s, "compute_fraction")
    dram, sm, tensor = _get(s, "dram_pct"), _get(s, "sm_pct"), _get(s, "tensor_pct")
    occ, regs, spill, barrier = (
        _get(s, "occupancy_pct"),
        _get(s, "registers"),
        _get(s, "spill_bytes"),
        _get(s, "barrier_stall"),
    )
    if kf is not None and kf < 0.5:
        c.bottleneck = "launch_bound"
        c.reasons.append(f"GPU busy only {kf:.0%} of the host wall time per call")
        c.signals += ["kernel_fraction", "launch_overhead"]
    elif ms is not None and lpc is not None and ms < 0.015 and lpc >= 2:
        c.bottleneck = "launch_bound"
        c.reasons.append(f"{lpc:.0f} launches in {ms * 1e3:.1f} us per call")
        c.signals += ["kernel_launches", "launch_overhead"]
    elif (tiny := tiny_programs(s)) is not None:
        c.bottleneck, c.figures = "latency_bound", tiny
        sm_note = (
            f"; SM throughput {tiny['sm_pct']:.0f}% is issue overhead of tiny programs, not compute"
            if "sm_pct" in tiny
            else ""
        )
        c.reasons.append(
            f"{tiny['programs']:.0f} programs = {tiny['waves']:.0f} waves of the {tiny['resident_programs']:.0f} "
            f"the GPU holds at once, {tiny['bytes_per_program']:.0f} B per program; "
            f"memory {tiny['mem_fraction']:.0%} / compute {tiny.get('compute_fraction', 0.0):.0%} of the roofline"
            f"{sm_note}: per-program overhead dominates"
        )
        c.signals += ["roofline_fraction", "dram_throughput_pct", "launch_overhead", "programs_per_wave"]
    elif (dram is not None and dram >= 60) or (mem is not None and mem >= 0.6):
        c.bottleneck = "memory_bound"
        c.reasons.append(
            f"DRAM throughput {dram:.0f}% of peak" if dram is not None else f"{mem:.0%} of the HBM roofline"
        )
        c.signals += ["dram_throughput" if dram is not None else "roofline_memory"]
    elif (sm is not None and sm >= 60) or (tensor is not None and tensor >= 60) or (comp is not None and comp >= 0.6):
        c.bottleneck = "compute_bound"
        c.reasons.append(
            f"SM throughput {sm:.0f}% of peak" if sm is not None else f"{(comp or 0):.0%} of the compute roofline"
        )
        c.signals += ["sm_throughput" if sm is not None else "roofline_compute"]
    elif occ is not None and occ < 25 and ((spill or 0) > 0 or (regs or 0) >= 128):
        c.bottleneck = "occupancy_limited"
        c.reasons.append(
            f"achieved occupancy {occ:.0f}% with {regs or 0:.0f} registers/thread, {spill or 0:.0f} B spilled"
        )
        c.signals += ["achieved_occupancy", "registers_per_thread"] + (["register_spill"] if spill else [])
    elif barrier is not None and barrier >= 0.3:
        c.bottleneck = "sync_bound"
        c.reasons.append(f"warps stalled on barriers {barrier:.2f} cycles per issue")
        c.signals += ["barrier_stall"]
    elif (mem is not None and mem < 0.3 and (comp is None or comp < 0.3)) or (
        dram is not None and dram < 30 and (sm is None or sm < 30)
    ):
        c.bottleneck = "latency_bound"
        what = f"{mem:.0%} of the HBM roofline" if mem is not None else f"DRAM {dram:.0f}% / SM {sm or 0:.0f}%"
        c.reasons.append(f"neither bound: {what}; too little parallelism or serial dependencies")
        c.signals += ["low_roofline_fraction"]
    else:
        c.reasons.append("not enough profile figures to classify (need timing with flops/bytes, or ncu)")
    return c


def classify_ascend(s: dict[str, Any]) -> Classification:
    """msprof PipeUtilization ratios -> class. ``memory_bound_index`` is msprof's mte2 / max(mac, vec)."""
    c = Classification()
    scalar = max(_get(s, "aiv_scalar_ratio") or 0.0, _get(s, "aic_scalar_ratio") or 0.0)
    vec, mac = _get(s, "aiv_vec_ratio") or 0.0, _get(s, "aic_mac_ratio") or 0.0
    mte2 = max(_get(s, "aiv_mte2_ratio") or 0.0, _get(s, "aic_mte2_ratio") or 0.0)
    dur, wait = _get(s, "task_duration_us"), _get(s, "task_wait_us")
    if not any(
        _get(s, k) is not None
        for k in ("aiv_scalar_ratio", "aic_scalar_ratio", "aiv_vec_ratio", "aic_mac_ratio", "aiv_mte2_ratio")
    ):
        c.reasons.append("no PipeUtilization ratios in the profile (collect with aic-metrics=PipeUtilization)")
        return c
    mem_index = mte2 / max(vec, mac) if max(vec, mac) > 0 else (float("inf") if mte2 > 0 else 0.0)
    if dur is not None and dur < 10 and wait is not None and wait > dur:
        c.bottleneck = "launch_bound"
        c.reasons.append(f"task {dur:.1f} us with {wait:.1f} us wait between tasks")
        c.signals += ["task_wait_time", "launch_overhead"]
    elif scalar >= 0.4 and scalar >= max(vec, mac, mte2):
        c.bottleneck = "scalar_bound"
        c.reasons.append(f"scalar pipe {scalar:.0%} of cycles (vector {vec:.0%}, mte2 {mte2:.0%})")
        c.signals += ["aiv_scalar_ratio"]
    elif mem_index > 1 and mte2 >= 0.4:
        c.bottleneck = "memory_bound"
        c.reasons.append(f"mte2 {mte2:.0%} of cycles, memory-bound index {mem_index:.2f} > 1")
        c.signals += ["aiv_mte2_ratio", "mte2_bound"]
    elif vec >= 0.6 or mac >= 0.6:
        c.bottleneck = "compute_bound"
        c.reasons.append(f"vector {vec:.0%} / cube {mac:.0%} of cycles")
        c.signals += ["aiv_vec_ratio" if vec >= mac else "aic_mac_ratio"]
    elif max(scalar, vec, mac, mte2) < 0.3:
        c.bottleneck = "latency_bound"
        c.reasons.append(f"no pipe above 30% (scalar {scalar:.0%}, vector {vec:.0%}, mte2 {mte2:.0%}): waits dominate")
        c.signals += ["low_pipe_utilization"]
    else:
        c.reasons.append(f"mixed utilisation (scalar {scalar:.0%}, vector {vec:.0%}, cube {mac:.0%}, mte2 {mte2:.0%})")
    return c


def dominant_class(per_case: list[tuple[str, float, str]], coverage: float = 0.75) -> tuple[str, float]:
    """(class, share of time) for the class covering >= ``coverage`` of the time over (case, ms, class) rows."""
    total = sum(ms for _, ms, _ in per_case if ms)
    if not total:
        classes = {c for _, _, c in per_case}
        return (classes.pop(), 1.0) if len(classes) == 1 and per_case else ("unknown", 0.0)
    share: dict[str, float] = {}
    for _, ms, cls in per_case:
        share[cls] = share.get(cls, 0.0) + (ms or 0.0) / total
    best = max(share, key=lambda k: share[k])
    return (best, share[best]) if share[best] >= coverage and best != "unknown" else ("unknown", share[best])
