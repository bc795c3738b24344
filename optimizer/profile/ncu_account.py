"""The measured account of the gap (issue 30, item 1): where a kernel's time goes, from Nsight Compute counters.

For one forward of one case, every launch ncu saw is read from the standard sections' raw metrics (launch
statistics, occupancy, memory workload, compute workload, instruction statistics, warp state) and the case's gap to
its roofline (``T - T_roof``, the dtype-aware floor of the problem's declared flops and bytes) is split into
measured parts, each a :class:`MeasuredFinding` with its value and its share of the gap:

- ``excess_dram_bytes``: DRAM bytes beyond the problem's minimum, at the peak bandwidth (``(dram - min) / bw``):
  second passes, strided or uncoalesced fetches, re-reads an L2 miss forces. Local-memory (spill) traffic is
  reported beside it (``register_spills``) and not counted twice.
- per launch, the time beyond its own floor (``t - max(dram_bytes / bw, t * busiest pipe %)``) is split into
  ``idle_sms`` (the fraction of cycles the average SM had no resident warp: grids smaller than the GPU, tail
  waves, serial launches) and, for the rest, the warp-stall reasons in proportion to their samples per issued
  instruction (``smsp__average_warps_issue_stalled_*_per_issue_active.ratio``, Nsight Compute's warp state
  section): memory latency (long scoreboard), the load/store queue (lg throttle: too many narrow accesses),
  barriers, the shared-memory/MIO pipe, a saturated math pipe, instruction issue, and the rest.

Figures beside the split (no share): achieved vs theoretical occupancy and its limiter, sectors per global request,
L2 hit rate, predicated-off thread instructions, tensor vs FMA pipe utilisation.

The model and what it cannot see, plainly: the split apportions measured time by measured proportions; it does not
prove that removing a stall reason would give back its share (stalls overlap). ncu serialises launches, so host
gaps between launches are not here (``optimizer.profile.cuda.profile_cases`` gives device vs host time). Coverage
is the named parts over the gap; what the metrics do not reach is ``unattributed``. Needs a GPU and ``ncu``; the
parsing and the arithmetic are pure and tested on recorded CSV text.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kb.errors import ToolchainError

__all__ = [
    "ACCOUNT_METRICS",
    "STALL_REASONS",
    "MeasuredAccount",
    "MeasuredFinding",
    "account_command",
    "measured_account",
    "NcuUnitError",
    "parse_raw_metrics",
    "raw_units",
]

#: warp-stall reason (the ncu metric's middle part) -> (finding kind, listed causes that can produce it)
STALL_REASONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "long_scoreboard": ("memory_latency", ("per_element_grid", "tiny_programs", "register_spills", "serial_tail")),
    "lg_throttle": ("narrow_memory_instructions", ("unvectorized_access", "per_element_grid")),
    "barrier": ("barrier_sync", ("loop_reductions",)),
    "membar": ("memory_barrier", ("same_address_atomics",)),
    "mio_throttle": ("shared_memory_pipe", ("loop_reductions", "small_dot_tiles")),
    "short_scoreboard": ("shared_memory_pipe", ("loop_reductions", "small_dot_tiles")),
    "math_pipe_throttle": ("math_pipe", ("fma_dot",)),
    "wait": ("instruction_issue", ("fma_dot",)),
    "not_selected": ("instruction_issue", ()),
    "selected": ("instruction_issue", ()),
    "dispatch_stall": ("instruction_issue", ()),
    "branch_resolving": ("control_flow", ()),
    "no_instruction": ("control_flow", ()),
    "drain": ("store_drain", ()),
    "imc_miss": ("constant_cache", ()),
    "tex_throttle": ("memory_pipe", ()),
    "sleeping": ("sleeping", ()),
}

_STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"

#: The raw metrics the account reads (all from the default-installed sections; the device filters the list with
#: ``ncu --query-metrics`` so an unknown name on another ncu version drops one figure instead of failing the run).
ACCOUNT_METRICS: tuple[str, ...] = (
    "gpu__time_duration.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    "sm__cycles_active.avg", "sm__cycles_elapsed.avg",
    "launch__grid_size", "launch__block_size", "launch__waves_per_multiprocessor", "launch__registers_per_thread",
    "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks", "sm__maximum_warps_per_active_cycle_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__inst_executed.sum", "smsp__thread_inst_executed_pred_on.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
    "lts__t_sector_hit_rate.pct",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
    *(_STALL.format(r) for r in STALL_REASONS),
)

_PIPES = ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
          "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
          "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
          "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active")

# ncu names units both ways across versions ("nsecond" / "ns"); durations -> ms, byte counts -> bytes
_TIME_UNIT = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0,
              "second": 1e3, "s": 1e3}
_BYTE_UNIT = {"byte": 1.0, "b": 1.0, "kbyte": 1e3, "kb": 1e3, "mbyte": 1e6, "mb": 1e6, "gbyte": 1e9, "gb": 1e9}
_UNIT = {**_TIME_UNIT, **_BYTE_UNIT}


class NcuUnitError(ToolchainError, ValueError):
    """ncu reported a duration or a byte count in a unit the account cannot convert (its numbers would be off by
    orders of magnitude); the message names the metric and the unit so that _TIME_UNIT/_BYTE_UNIT can learn it."""


def _scale(name: str, unit: str) -> float:
    if "pct" in name or "per_second" in name or "/" in unit or "%" in unit:
        return 1.0  # a ratio or a rate: used as printed
    if "duration" in name or name.endswith("_ns") or "bytes" in name:
        table = _TIME_UNIT if ("duration" in name or name.endswith("_ns")) else _BYTE_UNIT
        if unit not in table:
            raise NcuUnitError(f"ncu reported {name} in unit {unit!r}, which the account cannot convert "
                               f"(known: {', '.join(table)}); add it to optimizer/profile/ncu_account.py")
        return table[unit]
    return _UNIT.get(unit, 1.0)


def account_command(log_file: str, metrics: tuple[str, ...] = ACCOUNT_METRICS, *, kernel_regex: str | None = None,
                    launch_count: int | None = None) -> list[str]:
    """The ncu prefix for a worker whose measured forward sits between cudaProfilerStart/Stop: raw page, base units
    (bytes, nanoseconds), clocks left alone (the device's METHOD.md: ``--clock-control none``)."""
    cmd = ["ncu", "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
           "--metrics", ",".join(metrics), "--target-processes", "all", "--profile-from-start", "off",
           "--log-file", log_file]
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


def parse_raw_metrics(text: str) -> list[dict[str, Any]]:
    """An ncu ``--csv --page raw`` log -> one dict per launch: ``kernel`` and every numeric metric by its raw name,
    durations in ms and byte counts in bytes (whatever unit the units row names). Non-CSV lines are skipped."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    if not lines:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header = rows[0]
    k_idx = header.index("Kernel Name") if "Kernel Name" in header else None
    # the units row: the one after the header whose kernel-name (else first) column is empty
    probe = k_idx if k_idx is not None else 0
    has_units = len(rows) > 1 and bool(rows[1]) and probe < len(rows[1]) and rows[1][probe].strip() == ""
    units = rows[1] if has_units else [""] * len(header)
    out = []
    for r in rows[2 if has_units else 1:]:
        d: dict[str, Any] = {"kernel": r[k_idx] if k_idx is not None and k_idx < len(r) else "?"}
        for j, name in enumerate(header):
            if "__" not in name or j >= len(r) or (v := _num(r[j])) is None:
                continue
            unit = units[j].strip().lower() if j < len(units) else ""
            d[name] = v * _scale(name, unit)
        out.append(d)
    return out


def raw_units(text: str) -> dict[str, str]:
    """The unit ncu printed for each metric of a ``--csv --page raw`` log (recorded beside an account, so that a
    unit the parser misread can be corrected from the record)."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines[:2]))))
    if len(rows) < 2:
        return {}
    return {name: unit for name, unit in zip(rows[0], rows[1], strict=False) if "__" in name and unit.strip()}


class MeasuredFinding(BaseModel):
    """One measured part of the gap (``share`` of it) or a figure beside the split (``share`` None)."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    kernel: str = ""
    value: float
    unit: str
    summary: str
    ms: float | None = Field(default=None, description="the time this part accounts for")
    share: float | None = Field(default=None, ge=0.0, description="ms / the case's gap to its roofline")
    explained_by: list[str] = Field(default_factory=list, description="listed causes that can produce it")

    def line(self) -> str:
        share = f" — {self.share:.0%} of the gap ({self.ms:.4g} ms)" if self.share is not None and self.ms else ""
        by = f" [{', '.join(self.explained_by)}]" if self.explained_by else " [no listed cause]"
        return f"{self.kind}: {self.summary}{share}{by}"


class MeasuredAccount(BaseModel):
    """The gap of one case, split over measured parts; ``coverage`` = named parts / gap."""

    model_config = ConfigDict(extra="forbid")

    case: str = ""
    device: str = ""
    measured_ms: float
    roofline_ms: float | None
    gap_ms: float
    findings: list[MeasuredFinding] = Field(default_factory=list)
    figures: list[MeasuredFinding] = Field(default_factory=list)
    unattributed_ms: float = 0.0
    notes: list[str] = Field(default_factory=list)

    @property
    def coverage(self) -> float | None:
        if self.gap_ms <= 0:
            return None
        return min(1.0, sum(f.ms or 0.0 for f in self.findings) / self.gap_ms)

    def top(self, n: int = 3) -> list[MeasuredFinding]:
        return sorted(self.findings, key=lambda f: -(f.ms or 0.0))[:n]

    def by_kind(self) -> dict[str, float]:
        """ms per finding kind (summed over launches)."""
        out: dict[str, float] = {}
        for f in self.findings:
            out[f.kind] = out.get(f.kind, 0.0) + (f.ms or 0.0)
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def _launch_parts(r: dict[str, Any], t: float, bw: float) -> tuple[list[MeasuredFinding], list[MeasuredFinding],
                                                                     float]:
    """A launch's time beyond its own floor, split into idle SMs and warp-stall reasons; its figures; the
    remainder no metric reached."""
    k = str(r.get("kernel", "?"))
    dram = (r.get("dram__bytes_read.sum") or 0.0) + (r.get("dram__bytes_write.sum") or 0.0)
    busiest = max((r.get(p) or 0.0) for p in _PIPES) / 100.0
    floor = max(dram / bw if bw else 0.0, t * busiest)
    rest = max(0.0, t - floor)
    parts: list[MeasuredFinding] = []
    figures: list[MeasuredFinding] = []
    active, elapsed = r.get("sm__cycles_active.avg"), r.get("sm__cycles_elapsed.avg")
    if active is not None and elapsed:
        idle = max(0.0, 1.0 - active / elapsed)
        idle_ms = min(rest, t * idle)
        if idle_ms > 0:
            grid, waves = r.get("launch__grid_size"), r.get("launch__waves_per_multiprocessor")
            parts.append(MeasuredFinding(
                kind="idle_sms", kernel=k, value=idle * 100, unit="% of cycles", ms=idle_ms,
                summary=f"the average SM idle {idle:.0%} of the launch (grid {grid:g}, {waves:.2f} waves)"
                if grid is not None and waves is not None else f"the average SM idle {idle:.0%} of the launch",
                explained_by=["serial_tail", "launch_overhead", "tiny_programs"]))
            rest -= idle_ms
    stalls = {reason: r[_STALL.format(reason)] for reason in STALL_REASONS if r.get(_STALL.format(reason))}
    total = sum(stalls.values())
    if rest > 0 and total > 0:
        by_kind: dict[str, tuple[float, set[str], list[str]]] = {}
        for reason, v in stalls.items():
            kind, causes = STALL_REASONS[reason]
            ms, cs, rs = by_kind.get(kind, (0.0, set(), []))
            by_kind[kind] = (ms + rest * v / total, cs | set(causes), [*rs, f"{reason} {v:.2f}"])
        for kind, (ms, cs, rs) in by_kind.items():
            if ms <= 0:
                continue
            parts.append(MeasuredFinding(
                kind=kind, kernel=k, value=ms / t * 100, unit="% of the launch", ms=ms,
                summary=f"warp stalls per issued instruction: {', '.join(rs)}", explained_by=sorted(cs)))
        rest = 0.0
    # figures beside the split
    ach = r.get("sm__warps_active.avg.pct_of_peak_sustained_active")
    theo = r.get("sm__maximum_warps_per_active_cycle_pct")
    if ach is not None:
        limits = {n: r.get(f"launch__occupancy_limit_{n}") for n in ("registers", "shared_mem", "warps", "blocks")}
        known = {n: v for n, v in limits.items() if v is not None}
        limiter = min(known, key=lambda n: known[n]) if known else "?"
        figures.append(MeasuredFinding(
            kind="occupancy", kernel=k, value=ach, unit="% of peak warps",
            summary=f"achieved occupancy {ach:.0f}%" + (f" of a theoretical {theo:.0f}%" if theo is not None else "")
            + f", limited by {limiter} ({known.get(limiter, 0):g} blocks/SM)", explained_by=["register_spills"]))
    for op in ("ld", "st"):
        sec = r.get(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum")
        req = r.get(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum")
        if sec and req:
            what = "load" if op == "ld" else "store"
            figures.append(MeasuredFinding(
                kind=f"sectors_per_{what}", kernel=k, value=sec / req, unit="sectors/request",
                summary=f"{sec / req:.1f} sectors per global {what} request (a warp's "
                        f"128-bit accesses of contiguous data: 16; 32-bit: 4)"))
    inst, pred_on = r.get("smsp__inst_executed.sum"), r.get("smsp__thread_inst_executed_pred_on.sum")
    if inst and pred_on is not None:
        off = max(0.0, 1.0 - pred_on / (inst * 32))
        figures.append(MeasuredFinding(kind="predicated_lanes", kernel=k, value=off * 100, unit="% of thread slots",
                                       summary=f"{off:.0%} of thread-instruction slots inactive or predicated off"))
    if (hit := r.get("lts__t_sector_hit_rate.pct")) is not None:
        figures.append(MeasuredFinding(kind="l2_hit_rate", kernel=k, value=hit, unit="%",
                                       summary=f"L2 hit rate {hit:.0f}%", explained_by=["l2_unfriendly_order"]))
    tensor = max(r.get(_PIPES[0]) or 0.0, r.get(_PIPES[1]) or 0.0)
    fma = r.get(_PIPES[2])
    if tensor or fma:
        figures.append(MeasuredFinding(kind="pipes", kernel=k, value=tensor, unit="% tensor pipe",
                                       summary=f"tensor pipe {tensor:.0f}%, FMA pipe {fma or 0:.0f}% of peak "
                                               "while active",
                                       explained_by=["fma_dot", "small_dot_tiles"]))
    return parts, figures, rest


def measured_account(rows: list[dict[str, Any]], *, bytes_moved: float | None, flops: float | None,
                     peaks: Any, compute: str = "fp32", case: str = "") -> MeasuredAccount:
    """Split one case's gap to its roofline over the launches of one forward (``parse_raw_metrics`` rows).

    ``peaks``: ``optimizer.profile.roofline.DevicePeaks`` of the GPU; ``compute``: the kernel's compute kind
    (``roofline.compute_kind``). The parts are in ms; shares are of ``gap_ms``."""
    from optimizer.profile.roofline import roofline_ms

    times = [float(r.get("gpu__time_duration.sum") or 0.0) for r in rows]
    total = sum(times)
    roof = roofline_ms(flops, bytes_moved, peaks, compute=compute) if peaks is not None else None
    gap = total - roof if roof is not None else total
    acc = MeasuredAccount(case=case, device=getattr(peaks, "name", ""), measured_ms=total, roofline_ms=roof,
                          gap_ms=max(0.0, gap))
    if not rows:
        acc.notes.append("ncu saw no launch")
        return acc
    if roof is None:
        acc.notes.append("the problem declares no flops/bytes_moved: the whole time is the gap")
    bw = peaks.hbm_gbps * 1e9 / 1e3 if peaks is not None else 0.0  # bytes per ms
    dram = sum((r.get("dram__bytes_read.sum") or 0.0) + (r.get("dram__bytes_write.sum") or 0.0) for r in rows)
    local = sum((r.get("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum") or 0.0)
                + (r.get("l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum") or 0.0) for r in rows)
    found: list[MeasuredFinding] = []
    if bytes_moved and bw and dram > bytes_moved:
        ms = (dram - bytes_moved) / bw
        found.append(MeasuredFinding(
            kind="excess_dram_bytes", value=dram / bytes_moved, unit="x the minimum bytes", ms=ms,
            summary=f"{dram / 1e6:.4g} MB moved to/from DRAM for a minimum of {bytes_moved / 1e6:.4g} MB "
                    f"({dram / bytes_moved:.2f}x)", explained_by=["redundant_passes", "l2_unfriendly_order"]))
    if local:
        acc.figures.append(MeasuredFinding(kind="register_spills", value=local, unit="bytes",
                                           summary=f"{local / 1e6:.4g} MB of local-memory (spill) traffic",
                                           explained_by=["register_spills"]))
    unattributed = 0.0
    for r, t in zip(rows, times, strict=True):
        parts, figures, rest = _launch_parts(r, t, bw)
        found += parts
        acc.figures += figures
        unattributed += rest
    if len(rows) > 1:
        acc.notes.append(f"{len(rows)} launches in one forward; host gaps between them are not measured by ncu")
    named = sum(f.ms or 0.0 for f in found)
    if acc.gap_ms > 0:
        scale = min(1.0, acc.gap_ms / named) if named else 1.0  # parts can overlap the floors' difference
        for f in found:
            f.share = (f.ms or 0.0) * scale / acc.gap_ms
        acc.unattributed_ms = max(0.0, acc.gap_ms - named * scale)
    else:
        acc.notes.append("measured at or under the roofline: no gap to account for")
    if unattributed > 0:
        acc.notes.append(f"{unattributed:.4g} ms of launch time beyond the floors had no stall samples to split it")
    acc.findings = sorted(found, key=lambda f: -(f.ms or 0.0))
    return acc
