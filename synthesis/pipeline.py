"""One synthesis run: trajectories + current cards -> review proposals and refreshed card statistics.

Steps: flatten and categorise rounds; map every round with a rewrite (hack-tripped rounds excepted) to the
active pattern families; improved rounds that map become ``example`` proposals, the unmatched ones are
clustered into ``new_family`` drafts; an unexplained inefficiency a family removed becomes a ``new_cause``
proposal (``synthesis.causes``); slower/incorrect/failed rounds become ``anti_signal`` drafts (or examples
of an existing anti-signal); card stats are recomputed and cards that reliably hurt get ``deprecation``
proposals. Deterministic for a deterministic ``embed`` and a fixed ``now``; the optional LLM polish is off by
default.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kb.models import AntiSignalCard, AnyCard, CauseRecord, PatternCard, Trajectory
from synthesis.anti import anti_signal_proposals
from synthesis.causes import find_removals, new_cause_proposals
from synthesis.clustering import new_family_proposals
from synthesis.mining import Embed, FamilyIndex, MiningConfig, example_proposals
from synthesis.models import SynthesisReport, SynthesisResult
from synthesis.rounds import (
    ANTI_CATEGORIES,
    collect_rounds,
    unique_rounds,
    unique_trajectories,
)
from synthesis.stats import card_stats, deprecation_proposals

__all__ = ["Progress", "SynthesisConfig", "synthesize"]

#: progress(stage, done, total); stages: "rounds", "mapping", "causes", "clustering", "anti_signals", "stats", "polish"
Progress = Callable[[str, int, int], None]

_EXCLUDED = {
    "hack": "a hack check fired: never mined",
    "incorrect": "validation failed: anti-signal only",
    "failed": "no validation (build or run failed): anti-signal only",
    "slower": "correct but slower: anti-signal only",
    "neutral": "lift within tolerance: not mined",
    "unmeasured": "no timing: not mined",
    "inconclusive": "inconclusive round: not mined",
    "implausible": "speedup outside the plausible range: never mined",
}


class SynthesisConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mining: MiningConfig = Field(default_factory=MiningConfig)
    improve_tol: float = Field(default=0.03, description="lift must leave [1-tol, 1+tol] to count as faster/slower")
    family_statuses: tuple[str, ...] = Field(default=("active",), description="pattern cards that count as families")
    example_min_confidence: float = 0.0
    cluster_threshold: float = 0.55
    min_cluster_size: int = Field(default=2, ge=1, description="smaller clusters wait for a later batch")
    anti_min_confidence: float = Field(default=0.5, description="mapping confidence to name an anti-signal's family")
    anti_merge_threshold: float = 0.6
    stats_method: Literal["t", "bootstrap"] = "t"
    stats_seed: int = 0
    stats_min_confidence: float = 0.5
    deprecation_min_n: int = Field(default=3, ge=2)
    deprecation_min_problems: int = Field(default=2, ge=1, description="distinct problems a deprecation needs")
    polish: bool = False


def synthesize(
    trajectories: Iterable[Trajectory],
    cards: Sequence[AnyCard],
    embed: Embed,
    *,
    config: SynthesisConfig | None = None,
    progress: Progress | None = None,
    now: datetime | None = None,
    llm_client: Any = None,
    index: FamilyIndex | None = None,
    reserved_ids: Iterable[str] = (),
    causes: Sequence[CauseRecord] = (),
    reserved_causes: Iterable[str] = (),
) -> SynthesisResult:
    """Mine ``trajectories`` against ``cards`` (all current cards, any kind and status).

    ``embed`` maps a list of texts to unit-norm vectors (``kb.search.embedding.Embedder().encode``). Pass the
    whole trajectory history to get correct stats; proposal ids are stable, so re-running on the same rounds
    yields the same proposals. ``llm_client`` (an OpenAI-compatible client) is only used when
    ``config.polish`` is true; without one, a client is built from the ``LADDER_LLM_*`` settings.
    ``index``: a :class:`FamilyIndex` built earlier from the same active pattern cards (a server keeps one and
    rebuilds it when cards change) so that families are not re-embedded on every batch.
    ``reserved_ids``: card ids a new family or anti-signal must not take besides those of ``cards`` (the cards
    of earlier proposals), so ids stay unique across runs.
    ``causes``: the KB's cause records; an unexplained inefficiency that none of the active or proposed ones
    explains and that a family removed becomes a ``new_cause`` proposal (``synthesis.causes``), under an id neither
    they nor ``reserved_causes`` (the causes of earlier proposals) hold.
    """
    cfg = config or SynthesisConfig()
    stamp = now or datetime.now(timezone.utc)
    report_progress = progress or (lambda stage, done, total: None)
    t0 = time.perf_counter()
    trajs = unique_trajectories(trajectories)  # evidence counts unique content: a copy adds nothing
    records = unique_rounds(collect_rounds(trajs, tol=cfg.improve_tol))
    report_progress("rounds", len(records), len(records))

    families = [c for c in cards if isinstance(c, PatternCard) and c.status in cfg.family_statuses]
    if index is None:
        index = FamilyIndex.build(families, embed, cfg.mining)
    else:
        families = index.families
    anti_cards = [c for c in cards if isinstance(c, AntiSignalCard) and c.status in ("active", "proposed")]
    taken = {c.id for c in cards} | set(reserved_ids)
    to_map = [r for r in records if r.round.rewrite is not None and r.category not in ("hack", "baseline")]
    vectors = index.embed_rounds(to_map, embed)
    mappings = index.map_embedded(to_map, vectors)
    report_progress("mapping", len(to_map), len(to_map))

    improved = [i for i, r in enumerate(to_map) if r.category == "improved"]
    matched = [i for i in improved if mappings[i].family_id is not None]
    unmatched = [i for i in improved if mappings[i].family_id is None]
    proposals = example_proposals(
        [to_map[i] for i in matched], [mappings[i] for i in matched], families,
        now=stamp, min_confidence=cfg.example_min_confidence,
    )
    # a new cause drafts the new family of its rounds itself: those rounds are not clustered again
    explained = {k for c in causes if c.status in ("active", "proposed") for k in c.explains}
    removals = find_removals(trajs, {r.ref: r for r in records}, explained)
    fresh_causes = new_cause_proposals(removals, families, taken_causes={c.id for c in causes} | set(reserved_causes),
                                       taken_cards=taken, now=stamp)
    proposals += fresh_causes
    claimed = {e.round_ref for p in fresh_causes if p.target_family is None for e in p.evidence}
    unmatched = [i for i in unmatched if to_map[i].ref not in claimed]
    report_progress("causes", len(removals), len(removals))
    fresh, pending = new_family_proposals(
        [to_map[i] for i in unmatched], [mappings[i] for i in unmatched], vectors[unmatched],
        matcher=index.matcher, taken_ids=taken, now=stamp,
        threshold=cfg.cluster_threshold, min_size=cfg.min_cluster_size,
    )
    proposals += fresh
    taken |= {p.card.id for p in fresh}
    report_progress("clustering", len(unmatched), len(unmatched))

    anti_recs = [r for r in to_map if r.category in ANTI_CATEGORIES]
    proposals += anti_signal_proposals(
        anti_recs, mappings, anti_cards, embed, matcher=index.matcher, taken_ids=taken, now=stamp,
        family_titles={f.id: f.title for f in families}, min_confidence=cfg.anti_min_confidence,
        merge_threshold=cfg.anti_merge_threshold,
        round_vectors={r.ref: vectors[i] for i, r in enumerate(to_map) if r.category in ANTI_CATEGORIES},
    )
    report_progress("anti_signals", len(anti_recs), len(anti_recs))

    stats = card_stats(records, cards, mappings, min_confidence=cfg.stats_min_confidence,
                       method=cfg.stats_method, seed=cfg.stats_seed)
    proposals += deprecation_proposals(stats, cards, records, mappings, now=stamp, min_n=cfg.deprecation_min_n,
                                       min_confidence=cfg.stats_min_confidence,
                                       min_problems=cfg.deprecation_min_problems)
    report_progress("stats", len(stats), len(stats))

    polished = 0
    if cfg.polish and proposals:
        from synthesis.polish import polish_proposals

        proposals = polish_proposals(proposals, client=llm_client)
        polished = sum(p.polished for p in proposals)
        report_progress("polish", polished, len(proposals))

    duration = time.perf_counter() - t0
    report = SynthesisReport(
        trajectories=len(trajs),
        rounds=len(records),
        categories=dict(sorted(Counter(r.category for r in records).items())),
        mapped=sum(m.family_id is not None for m in mappings),
        unmatched=sum(m.family_id is None for m in mappings),
        proposals=dict(sorted(Counter(p.kind for p in proposals).items())),
        excluded={r.ref: _EXCLUDED[r.category] + _hack_codes(r) for r in records if r.category in _EXCLUDED},
        pending_rounds=pending,
        polished=polished,
        duration_s=round(duration, 4),
        rounds_per_min=round(60.0 * len(records) / duration, 1) if duration > 0 else 0.0,
    )
    return SynthesisResult(proposals=proposals, mappings=mappings, stats=stats, report=report)


def _hack_codes(r: Any) -> str:
    v = r.round.validation
    return f" ({', '.join(v.hack_flags)})" if r.category == "hack" and v is not None else ""
