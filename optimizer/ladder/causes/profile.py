"""L2 cause findings from measured figures (CUDA: timing + roofline + torch.profiler + ncu; Ascend: msprof).

Rules (measured -> cause, confidence), calibrated on the tuning half of ``benchmarks/diagnosis``:
- every case at >= ``AT_ROOFLINE`` of its dtype-aware roofline -> ``at_roofline`` 0.85 (nothing structural left;
  the H200 copy kernel reaches ~0.89 of datasheet HBM bandwidth, so 0.75 leaves at most ~1.2x);
- the launch-overhead rule of ``classify_cuda`` on the dominant share -> ``launch_overhead`` 0.7;
- the tiny-programs rule -> ``per_element_grid`` (under 64 B per program) or ``tiny_programs`` 0.5;
- occupancy-limited with spilled bytes in ncu -> ``register_spills`` 0.5; local-memory stores (ncu ``spill_bytes``, one
  launch) of at least ``SPILL_SHARE`` of the largest case's ``bytes_moved``, whatever the class -> ``register_spills``
  0.7: the spill traffic is a sizeable part of what the memory system moves (H200:
  3.2 GB per launch on a 0.5 GB layernorm read as memory-bound, 0.65 GB on a 0.13 GB attention);
- excess traffic: DRAM busy (ncu ``dram_pct`` >= ``BUSY_DRAM_PCT``) while the useful traffic (the problem's
  ``bytes_moved`` over the time, as a fraction of peak) is at most 1/``EXCESS_TRAFFIC`` of what DRAM moves, with no
  spills and no ``tl.dot`` -> ``redundant_passes`` 0.6 (0.75 from 2.5x): the kernel moves several times the bytes it
  needs (intermediates written and re-read, the same rows read by several loops). A tiled matmul re-reads operand
  tiles by design (the H200 run saw 0.85 on an L2-unfriendly lm-head matmul), so dot kernels are left out. A
  saturated bus also refutes ``unvectorized_access`` (scalar loads starve the bus; they do not fill it);
- stalled residency: warps resident (``occupancy_pct`` >= ``STALL_OCCUPANCY_PCT``) while DRAM and SM throughput both
  stay under ``STALL_THROUGHPUT_PCT`` -> the warps wait on something serial: supports ``same_address_atomics`` 0.5 and
  refutes ``tiny_programs`` / ``per_element_grid`` 0.4 (programs with too little work finish and leave the SMs
  under-occupied; they do not sit resident).
- host-bound launcher: the launcher's steady-state host wall time per call (an eager loop's figure) at least
  ``HOST_BOUND`` x the kernel's device time (CUDA graph replay or flushed do_bench) -> ``launch_overhead`` 0.85 on every
  case, 0.6 on some (H200: the Triton tutorial softmax runs 0.20-0.30 ms on the device, 75-82% of its roofline, and
  1.18-1.27 ms per call on the host: its launcher compiles-or-looks-up a warmup kernel and queries the device on every
  call). A wall time within ``DEVICE_SET`` of the device time on every case refutes ``launch_overhead`` 0.6: the
  launches queue behind the kernel, so the host work is hidden. The host figure is the eager loop's wall time per call
  (``harness.timing.host_wall_ms``), which is the device time when the device is the slower. A roofline fraction is read
  from max(device, host) per call: a kernel at its device roofline behind a slower host is not at the roofline for its
  caller.
Measured findings are not structural: they support or refute the code/IR findings, and they decide on their own
only when no structural finding exists.
"""

from __future__ import annotations

from typing import Any

from kb.vocab import Level
from optimizer.ladder.findings import EvidenceRef, Finding, RefKind

__all__ = ["AT_ROOFLINE", "HOST_BOUND", "host_finding", "profile_findings", "roofline_finding"]

AT_ROOFLINE = 0.75
BUSY_DRAM_PCT, EXCESS_TRAFFIC = 50.0, 1.6
SPILL_SHARE = 0.25
STALL_OCCUPANCY_PCT, STALL_THROUGHPUT_PCT = 80.0, 10.0
#: host wall per call over device time from which the host, not the kernel, sets the time per call
HOST_BOUND = 1.5
#: ... and up to which the device sets it (the wall time of a device-bound loop sits a few percent above its
#: device time)
DEVICE_SET = 1.15


def _ref(kind: RefKind, reference: str, detail: str, level: Level = "L2") -> EvidenceRef:
    return EvidenceRef(level=level, kind=kind, reference=reference, detail=detail[:400])


def roofline_finding(cases: list[dict[str, Any]], *, level: Level = "L2") -> Finding | None:
    """``at_roofline`` from the cases' roofline fractions (``signals.mem_fraction`` / ``compute_fraction``), or None
    when a case has neither. The fractions come from the round's timing and the problem's bytes/flops alone, so L1
    reads the same figure before any profiler runs (``level="L1"``); L2 reads it again beside its counters."""
    fracs = []
    for c in cases:
        s = c.get("signals") or {}
        vals = [v for v in (s.get("mem_fraction"), s.get("compute_fraction")) if isinstance(v, (int, float))]
        fracs.append((c["case"], max(vals) if vals else None))
    known = [f for _, f in fracs if f is not None]
    if not known or len(known) != len(fracs):
        return None
    worst = min(known)
    detail = ", ".join(f"{case} {f:.0%}" for case, f in fracs)
    ref = _ref("roofline", "roofline_fraction", detail, level)
    if worst >= AT_ROOFLINE:
        return Finding(cause="at_roofline", level=level, confidence=0.85, supporting=[ref],
                       summary=f"every case runs at >= {worst:.0%} of its roofline: nothing structural to gain")
    return Finding(cause="at_roofline", level=level, confidence=0.0, refute_strength=0.9 if worst < 0.5 else 0.5,
                   refuting=[ref], summary=f"the slowest case reaches {worst:.0%} of its roofline: headroom exists")


def host_finding(cases: list[dict[str, Any]], *, level: Level = "L2") -> Finding | None:
    """``launch_overhead`` from per-case ``{"case", "device_ms", "host_ms"}`` (device time of the kernels a call
    launches, and the eager loop's steady-state wall time per call); None unless every case has both figures, or
    when they point neither way (host-bound nowhere, device-set not everywhere)."""
    rows = [
        (c["case"], float(c["device_ms"]), float(c["host_ms"]))
        for c in cases
        if isinstance(c.get("device_ms"), (int, float))
        and isinstance(c.get("host_ms"), (int, float))
        and c["device_ms"] > 0
    ]
    if not rows or len(rows) != len(cases):
        return None
    detail = ", ".join(f"{case} host {h:.3g} ms / device {d:.3g} ms ({h / d:.1f}x)" for case, d, h in rows)
    ref = _ref("timing", "host_wall_ms/device_ms", detail, level)
    bound = [case for case, d, h in rows if h >= HOST_BOUND * d]
    if bound:
        every = len(bound) == len(rows)
        return Finding(
            cause="launch_overhead",
            level=level,
            confidence=0.85 if every else 0.6,
            supporting=[ref],
            summary=(
                f"host-bound launcher on {'every case' if every else ', '.join(bound)}: "
                f"the host's wall time per call is >= {HOST_BOUND}x the kernel's device "
                "time, so the per-call host work sets the time"
            ),
        )
    if all(h <= DEVICE_SET * d for _, d, h in rows):
        return Finding(cause="launch_overhead", level=level, confidence=0.0, refute_strength=0.6,
                       refuting=[ref], summary="the wall time per call is the kernel's device time on every case: "
                                               "launches queue behind the kernel, the host work is hidden")
    return None


def effective_ms(device_ms: float, host_ms: float | None) -> float:
    """The steady-state cost of one call: the slower of the device and the host (launches queue behind either)."""
    return max(device_ms, host_ms) if isinstance(host_ms, (int, float)) else device_ms


def profile_findings(cases: list[dict[str, Any]], dominant: str, share: float, *, dots: bool = False) -> list[Finding]:
    """``cases``: per case ``{"case", "ms", "class", "signals": {...}, "figures": {...}}`` as L2 builds them;
    ``dots``: the kernel has a ``tl.dot`` (a tiled matmul re-reads its operand tiles by design, so DRAM traffic above
    the problem's minimum bytes is no sign of redundant passes there)."""
    out: list[Finding] = []
    if (roof := roofline_finding(cases)) is not None:
        out.append(roof)
    classes = [c.get("class") for c in cases]
    if dominant == "launch_bound":
        out.append(Finding(cause="launch_overhead", level="L2", confidence=0.7,
                           supporting=[_ref("counter", "kernel_fraction", f"launch_bound on {share:.0%} of the time")],
                           summary="launch / host overhead dominates the measured time"))
    tiny = [c for c in cases if "programs_per_wave" in ((c.get("signals") or {}).get("tokens") or [])]
    if tiny:
        bpp = min(float((c.get("figures") or {}).get("bytes_per_program", 1e9)) for c in tiny)
        cause = "per_element_grid" if bpp < 64 else "tiny_programs"
        out.append(
            Finding(
                cause=cause,
                level="L2",
                confidence=0.5,
                supporting=[_ref("counter", "bytes_per_program", f"{bpp:.0f} B per program in {len(tiny)} case(s)")],
                summary=f"{bpp:.0f} B of work per program: per-program overhead dominates",
            )
        )
    spilled = [c for c in cases if (c.get("signals") or {}).get("spill_bytes")]
    # ncu's spill_bytes is one launch's (the largest over the launches it profiled: the largest case), so it is set
    # against the largest case's bytes
    spill = max((v for c in cases if (v := _num(c, "spill_bytes")) is not None), default=None)
    sizes = [(c["case"], b) for c in cases if (b := _num(c, "bytes_moved"))]
    if spill is not None and sizes and spill >= SPILL_SHARE * max(b for _, b in sizes):
        case, b = max(sizes, key=lambda cb: cb[1])
        detail = f"{spill:.3g} B of spill stores in one launch, {spill / b:.1f}x the problem's bytes of {case}"
        out.append(Finding(cause="register_spills", level="L2", confidence=0.7,
                           supporting=[_ref("counter", "spill_bytes/bytes_moved", detail)],
                           summary="ncu sees local-memory spill traffic on the scale of the data the kernel must move"))
    elif "occupancy_limited" in classes and spilled:
        out.append(
            Finding(
                cause="register_spills",
                level="L2",
                confidence=0.5,
                supporting=[
                    _ref("counter", "spill_bytes", f"{spilled[0]['signals']['spill_bytes']:.0f} B spilled (ncu)")
                ],
                summary="ncu sees local-memory spills and low occupancy",
            )
        )
    out += _traffic_findings(cases, dots=dots)
    return out


def _num(c: dict[str, Any], key: str) -> float | None:
    v = (c.get("signals") or {}).get(key)
    return float(v) if isinstance(v, (int, float)) else None


def _traffic_findings(cases: list[dict[str, Any]], *, dots: bool) -> list[Finding]:
    """Counter patterns (ncu) that point at a cause: more DRAM traffic than the work needs; resident warps idle."""
    out: list[Finding] = []
    ratios = []
    for c in cases:
        dram, useful, spill = _num(c, "dram_pct"), _num(c, "mem_fraction"), _num(c, "spill_bytes") or 0.0
        if dram is not None and useful and dram >= BUSY_DRAM_PCT and not spill:
            ratios.append((c["case"], dram, useful, dram / 100.0 / useful))
    if ratios and not dots and all(r >= EXCESS_TRAFFIC for *_, r in ratios):
        worst = min(r for *_, r in ratios)
        detail = ", ".join(
            f"{case}: DRAM {d:.0f}% busy, useful traffic {u:.0%} of peak ({r:.1f}x)" for case, d, u, r in ratios
        )
        out.append(Finding(cause="redundant_passes", level="L2", confidence=0.75 if worst >= 2.5 else 0.6,
                           supporting=[_ref("counter", "dram_pct/mem_fraction", detail)],
                           summary=f"DRAM moves {worst:.1f}x the bytes the problem needs: data is written and re-read "
                                   "or read in several passes"))
    if ratios and all(d >= 75.0 for _, d, _, _ in ratios):
        out.append(Finding(cause="unvectorized_access", level="L2", confidence=0.0, refute_strength=0.6,
                           refuting=[_ref("counter", "dram_pct", f"DRAM {min(d for _, d, _, _ in ratios):.0f}% busy")],
                           summary="the memory bus is saturated: narrow loads are not what limits this kernel"))
    stalled = []
    for c in cases:
        occ, dram, sm = _num(c, "occupancy_pct"), _num(c, "dram_pct"), _num(c, "sm_pct")
        if (
            occ is not None
            and dram is not None
            and sm is not None
            and occ >= STALL_OCCUPANCY_PCT
            and dram < STALL_THROUGHPUT_PCT
            and sm < STALL_THROUGHPUT_PCT
        ):
            stalled.append((c["case"], occ, dram, sm))
    if stalled and len(stalled) == len([c for c in cases if _num(c, "occupancy_pct") is not None]):
        case, occ, dram, sm = stalled[0]
        ref = _ref(
            "counter", "occupancy_pct/dram_pct/sm_pct", f"{case}: {occ:.0f}% occupancy, DRAM {dram:.1f}%, SM {sm:.1f}%"
        )
        out.append(
            Finding(
                cause="same_address_atomics",
                level="L2",
                confidence=0.5,
                supporting=[ref],
                summary="warps stay resident but move no data and issue little: they wait on serialized updates",
            )
        )
        for cause in ("tiny_programs", "per_element_grid"):
            out.append(
                Finding(
                    cause=cause,
                    level="L2",
                    confidence=0.0,
                    refute_strength=0.4,
                    refuting=[ref],
                    summary="the SMs are fully occupied by waiting warps: per-program overhead is not the limit",
                )
            )
    return out
