"""Flatten trajectories into round records and sort each round into what synthesis may do with it.

Categories (one per round):

- ``improved``: validated, no hack flag, measured, lift above ``1 + tol`` -> pattern example / new family
- ``slower``: validated and measured but lift below ``1 - tol`` -> anti-signal ("correct but slower")
- ``incorrect``: validation ran and failed, no hack flag -> anti-signal ("produces wrong results")
- ``failed``: no validation (the candidate did not compile or crashed) and outcome ``failed`` -> anti-signal
- ``hack``: a hack check fired -> never mined into anything
- ``neutral`` (within tolerance), ``unmeasured`` (validated, no timing), ``baseline`` (no rewrite),
  ``inconclusive`` -> not mined
- ``implausible``: a speedup outside ``kb.evidence.plausible_speedup``'s range (submissions are refused, but a
  store may hold older ones) -> never mined, and no incumbent

*Lift* is what the round's rewrite added: when the speedup is measured against the initial kernel, it is
divided by the best validated speedup of the earlier rounds of the same trajectory (the incumbent).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

from kb.evidence import evidence_key, plausible_speedup, round_key
from kb.models import Round, Trajectory
from kb.vocab import blocking_hack_flags

__all__ = ["PATTERN_CATEGORIES", "RoundCategory", "RoundRecord", "categorize", "collect_rounds", "is_clean",
           "unique_rounds", "unique_trajectories"]

RoundCategory = Literal[
    "improved", "slower", "incorrect", "failed", "hack", "neutral", "unmeasured", "baseline", "inconclusive",
    "implausible",
]
PATTERN_CATEGORIES: frozenset[str] = frozenset({"improved"})
ANTI_CATEGORIES: frozenset[str] = frozenset({"slower", "incorrect", "failed"})


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """A round with the context synthesis needs from its trajectory."""

    ref: str
    trajectory_id: str
    round: Round
    problem: str
    backend: str
    device: str
    speedup: float | None
    lift: float | None
    category: RoundCategory
    copies: int = 1  # rounds with the same content that were folded into this one (``unique_rounds``)

    def content_key(self) -> str:
        """What makes two rounds the same evidence: the problem, backend and device, the round's candidate,
        measurements and outcome (``kb.evidence.round_key``: prose and family names aside) and its lift."""
        return round_key(self.problem, self.backend, self.device, self.round, self.lift)


def is_clean(r: Round) -> bool:
    """Validated and passed with no blocking hack flag: the only rounds that may back a pattern.

    Review-only flags (``kb.vocab.REVIEW_ONLY_HACK_FLAGS``, e.g. a >10x speedup that stayed inside the roofline)
    do not disqualify a round; the mined example names them for the curator."""
    return r.validation is not None and r.validation.passed and not blocking_hack_flags(r.validation.hack_flags)


def categorize(r: Round, lift: float | None, *, tol: float = 0.03) -> RoundCategory:
    v = r.validation
    if v is not None and blocking_hack_flags(v.hack_flags):
        return "hack"
    if r.rewrite is None or r.outcome == "baseline":
        return "inconclusive" if r.outcome == "inconclusive" else "baseline"
    if v is None:
        return "failed" if r.outcome == "failed" else "inconclusive"
    if not v.passed:
        return "incorrect"
    if lift is None:
        return "unmeasured"
    if r.timing is not None and r.timing.vs_base is not None:
        # measured with an interval: the session's verdict decides
        return "improved" if r.outcome == "improved" else "slower" if r.outcome == "regressed" else "neutral"
    if lift > 1.0 + tol:
        return "improved"
    if lift < 1.0 - tol:
        return "slower"
    return "neutral"


def _speedup(r: Round) -> float | None:
    s = r.timing.geomean_speedup if r.timing is not None else None
    return s if s is not None and s > 0 and plausible_speedup(s) else None


def _implausible(r: Round) -> bool:
    return r.timing is not None and not plausible_speedup(r.timing.geomean_speedup)


def collect_rounds(trajectories: Iterable[Trajectory], *, tol: float = 0.03) -> list[RoundRecord]:
    """All rounds of ``trajectories`` in order, each with its lift and category."""
    out: list[RoundRecord] = []
    for t in trajectories:
        incumbent = 1.0
        for r in sorted(t.rounds, key=lambda x: x.index):
            s = _speedup(r)
            lift: float | None = None
            if s is not None and r.rewrite is not None:
                lift = s / incumbent if r.comparison_target == "initial" else s
            cat: RoundCategory = "implausible" if _implausible(r) else categorize(r, lift, tol=tol)
            out.append(
                RoundRecord(
                    ref=f"{t.id}#{r.index}",
                    trajectory_id=t.id,
                    round=r,
                    problem=t.problem.name,
                    backend=t.backend,
                    device=t.device,
                    speedup=s,
                    lift=lift,
                    category=cat,
                )
            )
            if s is not None and is_clean(r):
                incumbent = max(incumbent, s if r.comparison_target == "initial" else incumbent * s)
    return out


def unique_trajectories(trajectories: Iterable[Trajectory]) -> list[Trajectory]:
    """The first trajectory of each evidence key (``kb.evidence.evidence_key``), in order: a copy submitted under
    another id, or with other prose, is the same evidence and counts once."""
    seen: set[str] = set()
    out: list[Trajectory] = []
    for t in trajectories:
        h = evidence_key(t)
        if h not in seen:
            seen.add(h)
            out.append(t)
    return out


def unique_rounds(records: Iterable[RoundRecord]) -> list[RoundRecord]:
    """One record per round content (``RoundRecord.content_key``), the first one kept, with ``copies`` counting
    the records folded into it: the same round pasted into several trajectories backs a card once."""
    first: dict[str, int] = {}
    out: list[RoundRecord] = []
    for rec in records:
        key = rec.content_key()
        if key in first:
            kept = out[first[key]]
            out[first[key]] = replace(kept, copies=kept.copies + rec.copies)
        else:
            first[key] = len(out)
            out.append(rec)
    return out
