"""L2 cause findings from measured figures (CUDA: timing + roofline + torch.profiler + ncu; Ascend: msprof).

Rules (measured -> cause, confidence), calibrated on the tuning half of ``benchmarks/diagnosis``:
- every case at >= ``AT_ROOFLINE`` of its dtype-aware roofline -> ``at_roofline`` 0.85 (nothing structural left;
  the H200 copy kernel reaches ~0.89 of datasheet HBM bandwidth, so 0.75 leaves at most ~1.2x);
- the launch-overhead rule of ``classify_cuda`` on the dominant share -> ``launch_overhead`` 0.7;
- the tiny-programs rule -> ``per_element_grid`` (under 64 B per program) or ``tiny_programs`` 0.5;
- occupancy-limited with spilled bytes in ncu -> ``register_spills`` 0.5.
Measured findings are not structural: they support or refute the code/IR findings, and they decide on their own
only when no structural finding exists.
"""

from __future__ import annotations

from typing import Any

from optimizer.ladder.findings import EvidenceRef, Finding

__all__ = ["AT_ROOFLINE", "profile_findings"]

AT_ROOFLINE = 0.75


def _ref(kind: str, reference: str, detail: str) -> EvidenceRef:
    return EvidenceRef(level="L2", kind=kind, reference=reference, detail=detail[:400])  # type: ignore[arg-type]


def profile_findings(cases: list[dict[str, Any]], dominant: str, share: float) -> list[Finding]:
    """``cases``: per case ``{"case", "ms", "class", "signals": {...}, "figures": {...}}`` as L2 builds them."""
    out: list[Finding] = []
    fracs = []
    for c in cases:
        s = c.get("signals") or {}
        vals = [v for v in (s.get("mem_fraction"), s.get("compute_fraction")) if isinstance(v, (int, float))]
        fracs.append((c["case"], max(vals) if vals else None))
    known = [f for _, f in fracs if f is not None]
    if known and len(known) == len(fracs):
        worst = min(known)
        detail = ", ".join(f"{case} {f:.0%}" for case, f in fracs)
        if worst >= AT_ROOFLINE:
            out.append(Finding(cause="at_roofline", level="L2", confidence=0.85, supporting=[_ref("roofline", "roofline_fraction", detail)],
                               summary=f"every case runs at >= {worst:.0%} of its roofline: nothing structural to gain"))
        else:
            out.append(Finding(cause="at_roofline", level="L2", confidence=0.0, refute_strength=0.9 if worst < 0.5 else 0.5,
                               refuting=[_ref("roofline", "roofline_fraction", detail)],
                               summary=f"the slowest case reaches {worst:.0%} of its roofline: headroom exists"))
    classes = [c.get("class") for c in cases]
    if dominant == "launch_bound":
        out.append(Finding(cause="launch_overhead", level="L2", confidence=0.7,
                           supporting=[_ref("counter", "kernel_fraction", f"launch_bound on {share:.0%} of the time")],
                           summary="launch / host overhead dominates the measured time"))
    tiny = [c for c in cases if "programs_per_wave" in ((c.get("signals") or {}).get("tokens") or [])]
    if tiny:
        bpp = min(float((c.get("figures") or {}).get("bytes_per_program", 1e9)) for c in tiny)
        cause = "per_element_grid" if bpp < 64 else "tiny_programs"
        out.append(Finding(cause=cause, level="L2", confidence=0.5,  # type: ignore[arg-type]
                           supporting=[_ref("counter", "bytes_per_program", f"{bpp:.0f} B per program in {len(tiny)} case(s)")],
                           summary=f"{bpp:.0f} B of work per program: per-program overhead dominates"))
    spilled = [c for c in cases if (c.get("signals") or {}).get("spill_bytes")]
    if "occupancy_limited" in classes and spilled:
        out.append(Finding(cause="register_spills", level="L2", confidence=0.5,
                           supporting=[_ref("counter", "spill_bytes", f"{spilled[0]['signals']['spill_bytes']:.0f} B spilled (ncu)")],
                           summary="ncu sees local-memory spills and low occupancy"))
    return out
