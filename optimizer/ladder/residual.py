"""The part of a measured gap that the static account does not attribute (issue 30: causes beyond the list).

When no cause is decided, a kernel whose recorded or measured time sits well above its roofline must not come out
of the ladder as a bare "undecided": the gap is a measurement, and what the static levels could and could not
attribute of it is evidence too. ``residual_evidence`` reads

- the gap: ``1 - f`` of the case that loses the most time to its roofline (``keys.LOST_ROOF``, set by L1 from the
  round's timing or a recorded one), as a fraction of that case's time; with a dry record of one case
  (``keys.LAUNCH_CASE``), of that case, since the accounts are of its launches;
- what the static account attributes of it: the estimated shares (``GapFinding.share``) of the significant findings
  of the diagnosed configuration's account, combined as independent parts (``1 - prod(1 - s)``) and capped at the
  gap; significant findings without a static cost model (a needless mask, an occupancy limit) are named, their cost
  stays inside the remainder;
- the remainder, as a share of the gap, reported as an ``unexplained`` L3 item of kind ``unattributed_gap`` when it
  is at least ``MIN_RESIDUAL`` of a gap of at least ``MIN_GAP``: never forced onto the nearest listed cause, and
  naming what a GPU would have to measure to attribute it (per roof the case is measured against), and whether the
  loss is size-dependent: another timed case of the same kernel at least ``SIZE_SPREAD`` nearer its roofline.

Domain: an undecided L3 with a roofline fraction for its lost case. Without one (no timing, no known peaks) there is
no gap to split and nothing is reported; a decided cause explains the gap itself (its own share, where L2's measured
account gives one, is the decision's business, ``optimizer.ladder.decide``).
"""

from __future__ import annotations

import math
from typing import Any

from kb.models import EvidenceItem
from optimizer.ir.gap_account import GapAccount
from optimizer.ladder import keys

__all__ = ["GPU_MEASURES", "MIN_GAP", "MIN_RESIDUAL", "SIZE_SPREAD", "residual_evidence"]

#: a lost case at least this far below its roofline (fraction of its time) has a gap worth splitting
MIN_GAP = 0.1
#: a remainder at least this share of the gap is reported
MIN_RESIDUAL = 0.1
#: a best case this much nearer its roofline than the lost one makes the loss size-dependent (reported as such)
SIZE_SPREAD = 0.3
#: what a GPU must measure to attribute a remainder, per roof the lost case is measured against (ncu metric names)
GPU_MEASURES: dict[str, str] = {
    "memory": ("achieved DRAM throughput (dram__throughput.avg.pct_of_peak_sustained_elapsed), sectors per request "
               "and L2 hit rate (lts__t_sector_hit_rate.pct), achieved occupancy "
               "(sm__warps_active.avg.pct_of_peak_sustained_active), warp stall reasons "
               "(smsp__pcsamp_warps_issue_stalled_*), and the configuration the autotuner keeps on the GPU"),
    "compute": ("tensor-pipe utilization (sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active), "
                "issue-slot use (sm__inst_issued.avg.pct_of_peak_sustained_active), warp stall reasons "
                "(smsp__pcsamp_warps_issue_stalled_*), achieved occupancy and the per-SM balance of the programs' "
                "work (sm__cycles_active.max vs .avg)"),
}


def residual_evidence(ctx: Any, accounts: list[GapAccount], *, decided: bool,
                      unavailable: str = "") -> list[EvidenceItem]:
    """The ``unattributed_gap`` item of an undecided L3 (empty when out of the domain or the remainder is small).
    ``accounts``: the L3 accounts, the diagnosed configuration's first; ``unavailable``: why there is no static account
    (the compile failed, a target without one)."""
    roof = ctx.cache.get(keys.LOST_ROOF) if hasattr(ctx, "cache") else None
    if decided or not isinstance(roof, dict) or not isinstance(roof.get("fraction"), (int, float)):
        return []
    roof = _accounted_case(ctx, roof)
    gap = 1.0 - max(0.0, min(1.0, float(roof["fraction"])))
    if gap < MIN_GAP:
        return []
    sig = accounts[0].significant if accounts else []
    priced = [(f.kind, float(f.share)) for f in sig if f.share is not None and f.share > 0]
    unpriced = sorted({f.kind for f in sig if f.share is None})
    attributed = min(gap, 1.0 - math.prod(1.0 - s for _, s in priced))
    of_gap = (gap - attributed) / gap
    if of_gap < MIN_RESIDUAL:
        return []
    bound = str(roof.get("bound") or "memory")
    measures = GPU_MEASURES.get(bound, GPU_MEASURES["memory"])
    if unavailable:
        what = f"no static account ({_brief(unavailable)})"
    elif priced:
        what = "the static account attributes " + ", ".join(f"{k} ~{s:.0%}" for k, s in priced) + " of the time"
    else:
        what = "the static account prices no inefficiency at the diagnosed configuration"
    if unpriced:
        what += f"; it names {', '.join(unpriced)} without a static cost model (their cost is inside the remainder)"
    best, best_f = roof.get("best_case"), roof.get("best_fraction")
    sized = (f"; the same kernel reaches {best_f:.0%} at case {best}, so the loss depends on the sizes (a fixed or "
             f"latency cost, the configuration kept for them), not on work every element pays"
             if isinstance(best_f, (int, float)) and best != roof.get("case") and best_f - (1.0 - gap) >= SIZE_SPREAD
             else "")
    summary = (f"case {roof.get('case')}: {gap:.0%} of the measured time is above its {bound} roofline{sized}; "
               f"{what}; {of_gap:.0%} of that gap is attributed to no listed cause and no static finding. To "
               f"attribute it a GPU must measure: {measures}")
    data = {"kind": "unattributed_gap", "share": round(of_gap, 3), "gap": round(gap, 3),
            "attributed": round(attributed, 3), "case": roof.get("case"), "bound": bound, "priced": dict(priced),
            "unpriced": unpriced, "size_dependent": bool(sized),
            "static_account": _brief(unavailable) or f"{len(accounts)} configuration(s)",
            "needs_gpu": measures}
    return [EvidenceItem(level="L3", kind="unexplained", reference="unattributed_gap", summary=summary[:1500],
                         data=data)]


def _brief(reason: str) -> str:
    """A multi-line failure (a compile error quoting the kernel) as its first and last lines."""
    lines = [ln.strip() for ln in reason.splitlines() if ln.strip()]
    return (lines[0][:160] + (f" ... {lines[-1][:200]}" if len(lines) > 1 else "")) if lines else ""


def _accounted_case(ctx: Any, roof: dict[str, Any]) -> dict[str, Any]:
    """``roof`` read at the case the accounts describe: a dry record's launches are of one case
    (``keys.LAUNCH_CASE``, chosen by the lowest roofline fraction), which need not be the case losing the most time
    (``roof["case"]``); the gap is split at the case whose compile was accounted."""
    from optimizer.harness.problem import case_label

    launch = ctx.cache.get(keys.LAUNCH_CASE)
    fractions, bounds = roof.get("fractions") or {}, roof.get("bounds") or {}
    label = case_label(launch) if isinstance(launch, dict) and launch else None
    if label is None or label == roof.get("case") or label not in fractions:
        return roof
    return {**roof, "case": label, "fraction": fractions[label], "bound": bounds.get(label, roof.get("bound"))}
