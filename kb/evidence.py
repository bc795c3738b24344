"""What a trajectory proves, as opposed to what it says: the key evidence is deduplicated by, and the range a
measured speedup must fall in.

``Trajectory.content_hash`` digests the whole document (ids and times aside), so a copy that changes only its
prose (``next_recommendation``, a hypothesis, a rationale) was new evidence: 5 such copies moved a card's lift_n
from 1 to 6. ``evidence_key`` digests only what carries information: the problem (name, file hash, cases),
backend and device, and per round the candidate (rewrite diff and recipe), the measurements (every time and
speedup) and the outcome (validation verdict, hack flags, outcome). Text is left out, and so is the rewrite's
family name (the same measurement claimed for another card is the same evidence). The KB store counts one
trajectory per key, synthesis one round per ``round_key``.

``check_plausible`` refuses a trajectory whose speedups or times are outside a plausible range (a 1e300 speedup
made a live card's interval bound 1.6e74): ``InvalidArgument`` naming the field, before anything is stored.
"""

from __future__ import annotations

import math
from typing import Any

from kb.errors import InvalidArgument
from kb.models import Round, Trajectory
from kb.models.trajectory import content_digest

__all__ = ["MAX_MS", "MAX_SPEEDUP", "check_plausible", "evidence_key", "plausible_speedup", "round_evidence",
           "round_key"]

#: the largest speedup (and 1 / the smallest) a round may report; a real rewrite of a naive kernel rarely passes 100x
MAX_SPEEDUP = 1000.0
#: the longest time a case may report (ms): one call of over 10 minutes is not a kernel timing
MAX_MS = 600_000.0


def round_evidence(r: Round) -> dict[str, Any]:
    """The informative content of a round: candidate, measurements and outcome; no prose."""
    rw = r.rewrite
    v, t = r.validation, r.timing
    return {
        "candidate": None if rw is None else {"diff": rw.diff, "recipe": rw.recipe},
        "comparison": r.comparison_target,
        "outcome": r.outcome,
        "validation": None if v is None else {"passed": v.passed, "hack_flags": sorted(v.hack_flags),
                                              "cases": sorted((c.case, c.passed) for c in v.cases)},
        "timing": None if t is None else {
            "speedup": t.geomean_speedup,
            "ci": None if t.geomean_ci is None else [t.geomean_ci.lo, t.geomean_ci.point, t.geomean_ci.hi],
            "vs_base": None if t.vs_base is None else [t.vs_base.lo, t.vs_base.point, t.vs_base.hi],
            "cases": sorted((c.case, c.ms, c.baseline_ms) for c in t.cases),
        },
    }


def evidence_key(t: Trajectory) -> str:
    """SHA-256 of what ``t`` proves (see the module docstring): equal for copies that differ only in prose, ids,
    times of day or the family names they claim."""
    p = t.problem
    return content_digest({
        "problem": [p.name, p.sha256, p.cases], "backend": t.backend, "device": t.device,
        "initial_ms": t.initial_ms, "best_ms": t.best_ms,
        "rounds": [round_evidence(r) for r in sorted(t.rounds, key=lambda x: x.index)],
    })


def round_key(problem: str, backend: str, device: str, r: Round, lift: float | None) -> str:
    """What makes two rounds (of any trajectories) the same evidence for synthesis."""
    return content_digest([problem, backend, device, round_evidence(r), lift])


def plausible_speedup(value: float | None, max_speedup: float = MAX_SPEEDUP) -> bool:
    """True for None or a finite speedup in [1/max_speedup, max_speedup]."""
    return value is None or (math.isfinite(value) and 1.0 / max_speedup <= value <= max_speedup)


def check_plausible(t: Trajectory, field: str = "trajectory", *, max_speedup: float = MAX_SPEEDUP) -> None:
    """Raise InvalidArgument naming the first speedup outside [1/max_speedup, max_speedup] or time outside
    (0, MAX_MS] in ``t`` (rounds, their timings and intervals, the selection and the unseen report)."""
    def ratio(value: float | None, where: str) -> None:
        if not plausible_speedup(value, max_speedup):
            raise InvalidArgument(f"speedup {value:.6g} is outside the plausible range [{1 / max_speedup:g}, "
                                  f"{max_speedup:g}]; a measurement this far out is an error in the harness or "
                                  "the data. Fix the timing and resubmit", field=where)

    def ms(value: float | None, where: str) -> None:
        if value is not None and not (math.isfinite(value) and 0 < value <= MAX_MS):
            raise InvalidArgument(f"time {value:.6g} ms is outside the plausible range (0, {MAX_MS:g}] ms", field=where)

    def timing(tm: Any, where: str) -> None:
        if tm is None:
            return
        ratio(tm.geomean_speedup, f"{where}.geomean_speedup")
        for name in ("geomean_ci", "vs_base"):
            ci = getattr(tm, name)
            if ci is not None:
                for part in ("point", "lo", "hi"):
                    ratio(getattr(ci, part), f"{where}.{name}.{part}")
        for i, c in enumerate(tm.cases):
            ms(c.ms, f"{where}.cases.{i}.ms")
            ms(c.baseline_ms, f"{where}.cases.{i}.baseline_ms")
            if c.speedup_ci is not None:
                for part in ("point", "lo", "hi"):
                    ratio(getattr(c.speedup_ci, part), f"{where}.cases.{i}.speedup_ci.{part}")

    ms(t.initial_ms, f"{field}.initial_ms")
    ms(t.best_ms, f"{field}.best_ms")
    for i, r in enumerate(t.rounds):
        timing(r.timing, f"{field}.rounds.{i}.timing")
    if t.selection is not None:
        for k, ci in t.selection.confirmed.items():
            ratio(ci.point, f"{field}.selection.confirmed.{k}.point")
    if t.unseen is not None:
        ratio(t.unseen.seen_speedup, f"{field}.unseen.seen_speedup")
        ratio(t.unseen.unseen_speedup, f"{field}.unseen.unseen_speedup")
        timing(t.unseen.timing, f"{field}.unseen.timing")
