"""Per-card usage statistics from trajectories, and deprecation proposals for cards that keep hurting.

For each card: ``cited`` (rounds that cited it), ``applied`` (rounds whose rewrite belongs to it: the rewrite
names the card, or the round was mapped to it with enough confidence), ``verified`` (applied rounds that
passed validation with no hack flag), and the measured lift of verified, timed rounds: the geometric mean of
each round's lift over its incumbent, with a 95% interval (Student t on log-lift by default; a seeded
percentile bootstrap on request). Pass the whole trajectory history: stats are recomputed, not accumulated.

Deprecation rule: an ``active`` pattern card with at least ``min_n`` timed applications whose upper lift bound
is below 1.0 (the rewrite reliably makes kernels slower) is proposed for deprecation, and only on independent
evidence: the slow applications must come from at least ``min_problems`` distinct problems (3 copies of one
0.5x round, or 3 re-runs on one problem, say one thing about one kernel, not that the rewrite hurts in general).
The proposal's confidence grows with the number of distinct problems.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

import numpy as np

from kb.models import AnyCard, CardStats
from synthesis.mining import evidence_ref, proposal_id
from synthesis.models import FamilyMapping, Proposal
from synthesis.rounds import RoundRecord, is_clean

__all__ = ["card_stats", "deprecation_proposals", "lift_interval"]

def _t975(df: int) -> float:
    """Two-sided 95% Student t quantile t_{0.975, df} (scipy is installed with sentence-transformers)."""
    from scipy.stats import t

    return float(t.ppf(0.975, df))


def lift_interval(
    lifts: Sequence[float], *, method: Literal["t", "bootstrap"] = "t", n_boot: int = 2000, seed: int = 0
) -> tuple[float | None, float | None, float | None]:
    """(geometric mean, 95% low, 95% high) of positive lifts; the interval is None with fewer than 2 values."""
    x = np.log(np.asarray([v for v in lifts if v is not None and v > 0], dtype=np.float64))
    if x.size == 0:
        return None, None, None
    mean = float(np.exp(x.mean()))
    if x.size < 2:
        return mean, None, None
    if method == "bootstrap":
        rng = np.random.default_rng(seed)
        boots = x[rng.integers(0, x.size, size=(n_boot, x.size))].mean(axis=1)
        lo, hi = np.quantile(boots, [0.025, 0.975])
        return mean, float(np.exp(lo)), float(np.exp(hi))
    half = _t975(x.size - 1) * float(x.std(ddof=1)) / math.sqrt(x.size)
    return mean, float(np.exp(x.mean() - half)), float(np.exp(x.mean() + half))


def _applied_card(rec: RoundRecord, mapping: FamilyMapping | None, ids: set[str], min_conf: float) -> str | None:
    rw = rec.round.rewrite
    if rw is None:
        return None
    if rw.family in ids:
        return rw.family
    if mapping is not None and mapping.family_id in ids and mapping.confidence >= min_conf:
        return mapping.family_id
    return None


def card_stats(
    records: Sequence[RoundRecord],
    cards: Sequence[AnyCard],
    mappings: Sequence[FamilyMapping] = (),
    *,
    min_confidence: float = 0.5,
    method: Literal["t", "bootstrap"] = "t",
    seed: int = 0,
) -> dict[str, CardStats]:
    """Recompute :class:`kb.models.CardStats` for every card in ``cards`` from ``records``."""
    ids = {c.id for c in cards}
    by_ref = {m.round_ref: m for m in mappings}
    cited = dict.fromkeys(ids, 0)
    applied = dict.fromkeys(ids, 0)
    verified = dict.fromkeys(ids, 0)
    lifts: dict[str, list[float]] = {i: [] for i in ids}
    for rec in records:
        for cid in set(rec.round.cards_cited) & ids:
            cited[cid] += 1
        card_id = _applied_card(rec, by_ref.get(rec.ref), ids, min_confidence)
        if card_id is None:
            continue
        applied[card_id] += 1
        if is_clean(rec.round):
            verified[card_id] += 1
            if rec.lift is not None:
                lifts[card_id].append(rec.lift)
    out: dict[str, CardStats] = {}

    def rnd(v: float | None) -> float | None:
        return None if v is None else round(v, 4)

    for cid in sorted(ids):
        mean, lo, hi = lift_interval(lifts[cid], method=method, seed=seed)
        out[cid] = CardStats(cited=cited[cid], applied=applied[cid], verified=verified[cid],
                             lift_mean=rnd(mean), lift_ci_low=rnd(lo), lift_ci_high=rnd(hi), lift_n=len(lifts[cid]))
    return out


def deprecation_proposals(
    stats: dict[str, CardStats],
    cards: Sequence[AnyCard],
    records: Sequence[RoundRecord] = (),
    mappings: Sequence[FamilyMapping] = (),
    *,
    now: datetime,
    min_n: int = 3,
    min_confidence: float = 0.5,
    min_problems: int = 2,
) -> list[Proposal]:
    """Propose deprecating active pattern cards whose lift interval lies wholly below 1.0 with n >= ``min_n``
    rounds from at least ``min_problems`` distinct problems."""
    ids = {c.id for c in cards}
    by_ref = {m.round_ref: m for m in mappings}
    out: list[Proposal] = []
    for card in sorted(cards, key=lambda c: c.id):
        s = stats.get(card.id)
        if card.kind != "pattern" or card.status != "active" or s is None:
            continue
        if s.lift_n < min_n or s.lift_ci_high is None or s.lift_ci_high >= 1.0:
            continue
        backing = [r for r in records if r.lift is not None and is_clean(r.round)
                   and _applied_card(r, by_ref.get(r.ref), ids, min_confidence) == card.id]
        problems = {r.problem for r in backing}
        if len(problems) < min_problems:
            continue
        refs = [r.ref for r in backing]
        draft = card.model_copy(update={"status": "deprecated", "stats": s, "version": card.version + 1})
        margin = (1.0 - s.lift_ci_high) / 0.1 * (1.0 - 0.5 ** (len(problems) - 1))
        out.append(Proposal(
            id=proposal_id("deprecation", card.id, refs), kind="deprecation", card=draft, target_family=card.id,
            base_version=card.version, confidence=round(min(1.0, 0.5 + 0.5 * margin), 4),
            evidence=[evidence_ref(r) for r in backing],
            reason=(f"lift {s.lift_mean:.3f}x over {s.lift_n} verified applications on {len(problems)} problems, "
                    f"95% interval [{s.lift_ci_low:.3f}, {s.lift_ci_high:.3f}] lies below 1.0"),
            created_at=now,
        ))
    return out
