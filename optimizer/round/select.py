"""Stage 5, select: the session's best round. In: the :class:`~kb.models.Trajectory`; out: its
:class:`~kb.models.Selection` (``Selection.round`` is the best round).

The best improved rounds are re-timed interleaved with the initial candidate (more blocks) and the highest confirmed
one whose interval clears the margin wins; none confirmed -> round 0. Untimed backends keep the earliest validated
round (:func:`select_best`).
"""

from __future__ import annotations

from pathlib import Path

from kb.models import Round, Selection, Trajectory
from optimizer.harness import verdict
from optimizer.round.context import RoundSetup

__all__ = ["CONFIRM_TOP", "select", "select_best"]

#: how many of the best improved rounds are re-timed against the initial candidate before one is selected
CONFIRM_TOP = 2


def select_best(rounds: list[Round]) -> int | None:
    """Index of the best validated round by geomean speedup; ties (and untimed rounds) go to the earlier one."""
    best, best_g = None, None
    for r in rounds:
        if r.validation is None or not r.validation.passed:
            continue
        g = r.timing.geomean_speedup if r.timing else None
        if best is None or (g is not None and (best_g is None or g > best_g)):
            best, best_g = r.index, g
    return best


def _minus_speedup(r: Round) -> float:
    """Sort key, fastest first: minus the round's geomean speedup (0 where untimed)."""
    return -((r.timing.geomean_speedup if r.timing is not None else None) or 0.0)


def select(setup: RoundSetup, traj: Trajectory) -> Selection:
    """Re-time the best improved rounds interleaved with the initial candidate; the highest confirmed one wins."""
    improved = [r for r in traj.rounds[1:] if r.outcome == "improved" and r.timing and r.timing.geomean_speedup]
    if setup.floor is None or setup.initial is None:
        return Selection(round=select_best(traj.rounds), note="untimed: the earliest validated round")
    margin = max(setup.floor, setup.settings.improvement_threshold)
    top = sorted(improved, key=_minus_speedup)[:CONFIRM_TOP]
    sel = Selection(round=0, note="no improved round" if not top else "")
    for r in top:
        ev = setup.retime(Path(r.candidate_path), {"initial": setup.initial},
                          blocks=setup.settings.timing_confirm_blocks)
        pairs = ev.pairs("initial")
        if not ev.passed or not pairs:
            sel.note += f"round {r.index}: re-time failed ({ev.reason[:200]}); "
            continue
        sel.confirmed[r.index] = verdict.geomean_ratio(pairs)
    ok = {i: ci for i, ci in sel.confirmed.items() if ci.clears(margin) == 1}
    if ok:
        sel.round = max(ok, key=lambda i: ok[i].point)
        best = ok[sel.round]
        sel.note += f"round {sel.round} confirmed {best.point:.3f}x [{best.lo:.3f}, {best.hi:.3f}] vs initial"
    elif top:
        sel.note += f"no re-timed round cleared the margin {margin:.2%} vs initial: the initial candidate stays best"
    return sel
