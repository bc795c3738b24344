"""Map rounds to existing pattern families, and turn confident mappings into example proposals.

A round's score against a family is a weighted mean of four agreements (components missing from a round
are left out and the weights renormalised):

- ``dense``: cosine between the embedded hypothesis+rewrite and the embedded family title/summary/rewrite;
- ``symptoms``: set cosine of symptom tokens (bottleneck classes, IR signatures, profile signals, code features);
- ``levels``: the share of the round's evidence levels the family serves;
- ``cited``: 1.0 when the rewrite names the card, 0.7 when the round cited it, 0.3 when it cited a related card.

The best family is assigned when its score clears ``assign_threshold``; otherwise the round is a new-family
candidate. Everything is pure and deterministic given a deterministic ``embed``.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from kb.models import Evidence, PatternCard
from kb.vocab import REVIEW_ONLY_HACK_FLAGS
from synthesis.features import TokenMatcher, card_text, round_levels, round_text
from synthesis.models import (
    EvidenceRef,
    FamilyCandidate,
    FamilyMapping,
    MappingComponents,
    Proposal,
)
from synthesis.rounds import RoundRecord, is_clean

_LEVELS = ("L1", "L2", "L3", "L4")

__all__ = ["CachedEmbed", "Embed", "FamilyIndex", "MiningConfig", "example_proposals", "map_rounds", "proposal_id"]

#: list of texts -> (n, d) array of unit-norm embeddings (e.g. ``kb.search.embedding.Embedder().encode``)
Embed = Callable[[list[str]], np.ndarray]


class MiningConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # weights and threshold set on the dev split of benchmarks/synthesis (not on its test split)
    w_dense: float = 0.60
    w_symptoms: float = 0.35
    w_levels: float = 0.02
    w_cited: float = 0.25
    cite_named: float = Field(default=1.0, description="cited component when the rewrite names the card")
    cite_cited: float = Field(default=0.5, description="... when the round cited the card")
    cite_related: float = Field(default=0.3, description="... when it cited (or named) a card related to it")
    assign_threshold: float = Field(default=0.46, description="best combined score needed to assign a family")
    confidence_scale: float = Field(default=0.06, description="score distance that moves confidence by ~e")
    top_candidates: int = Field(default=3, ge=1)
    batch_size: int = Field(default=256, ge=1)


class CachedEmbed:
    """Wrap an ``embed`` callable with a bounded text -> vector cache.

    A server that re-runs synthesis over the whole trajectory history (stats need all of it) then embeds only
    rounds it has not seen. Oldest entries are evicted first once ``max_items`` is reached. Thread-safe enough
    for one writer: a race can only compute a vector twice.
    """

    def __init__(self, embed: Embed, max_items: int = 200_000) -> None:
        self.embed = embed
        self.max_items = max_items
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __call__(self, texts: list[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        self.misses += len(todo)
        self.hits += len(texts) - len(todo)
        if todo:
            vecs = _unit(np.asarray(self.embed(todo)))
            for t, v in zip(todo, vecs, strict=False):
                self._cache[t] = v
            while len(self._cache) > self.max_items:
                self._cache.popitem(last=False)
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        fresh = dict(zip(todo, vecs, strict=False)) if todo else {}
        return np.stack([self._cache[t] if t in self._cache else fresh[t] for t in texts])


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"embed must return a 2-D array, got shape {x.shape}")
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(n, 1e-12)


def embed_batched(embed: Embed, texts: list[str], batch_size: int = 256) -> np.ndarray:
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    return _unit(
        np.concatenate([np.asarray(embed(texts[i : i + batch_size])) for i in range(0, len(texts), batch_size)])
    )


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, x))))


def _components_at(comps: dict[str, np.ndarray | None], k: int) -> MappingComponents:
    def get(name: str) -> float | None:
        arr = comps[name]
        return None if arr is None else round(float(arr[k]), 4)

    return MappingComponents(dense=get("dense") or 0.0, symptoms=get("symptoms"), levels=get("levels"),
                             cited=get("cited"))


@dataclass
class FamilyIndex:
    """Pattern families with embeddings, symptom tokens and levels as arrays, built once and reused per batch.

    Scoring a round against every family is a handful of vector operations; pydantic objects are built only
    for the ``top_candidates`` reported per round.
    """

    families: list[PatternCard]
    vectors: np.ndarray  # (F, d) unit rows
    matcher: TokenMatcher
    config: MiningConfig
    token_ids: dict[str, int] = field(default_factory=dict)
    token_matrix: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (F, T) 0/1
    level_matrix: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))  # (F, 4) 0/1
    by_id: dict[str, int] = field(default_factory=dict)
    related_to: dict[str, list[int]] = field(default_factory=dict)  # card id -> families listing it as related

    @classmethod
    def build(cls, families: Sequence[PatternCard], embed: Embed, config: MiningConfig | None = None) -> FamilyIndex:
        cfg = config or MiningConfig()
        fams = sorted(families, key=lambda c: c.id)
        vecs = embed_batched(embed, [card_text(c) for c in fams], cfg.batch_size)
        token_sets = [c.symptoms.tokens() for c in fams]
        vocab = {t: i for i, t in enumerate(sorted(set().union(*token_sets)))} if fams else {}
        tm = np.zeros((len(fams), len(vocab)), dtype=np.float32)
        lm = np.zeros((len(fams), len(_LEVELS)), dtype=np.float32)
        related: dict[str, list[int]] = {}
        for k, (c, toks) in enumerate(zip(fams, token_sets, strict=True)):
            tm[k, [vocab[t] for t in toks]] = 1.0
            lm[k, [_LEVELS.index(lv) for lv in c.levels]] = 1.0
            for rid in c.related:
                related.setdefault(rid, []).append(k)
        return cls(fams, vecs, TokenMatcher.for_cards(fams), cfg, vocab, tm, lm,
                   {c.id: k for k, c in enumerate(fams)}, related)

    def embed_rounds(self, rounds: Sequence[RoundRecord], embed: Embed) -> np.ndarray:
        """Unit vectors of the rounds' hypothesis+rewrite text; one embedding call per ``batch_size`` rounds."""
        return embed_batched(embed, [round_text(r.round) for r in rounds], self.config.batch_size)

    def map(self, rounds: Sequence[RoundRecord], embed: Embed) -> list[FamilyMapping]:
        """Map each round (embedding them in batches)."""
        return self.map_embedded(rounds, self.embed_rounds(rounds, embed))

    def score_round(self, rec: RoundRecord, sims: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray | None]]:
        """Combined score of ``rec`` against every family, and the per-family components (None: no data)."""
        cfg, n = self.config, len(self.families)
        r = rec.round
        toks = self.matcher.round_tokens(r)
        sym = lev = cit = None
        if toks:
            vec = np.zeros(len(self.token_ids), dtype=np.float32)
            vec[[self.token_ids[t] for t in toks if t in self.token_ids]] = 1.0
            sizes = self.token_matrix.sum(axis=1)
            sym = (self.token_matrix @ vec) / np.sqrt(np.maximum(sizes, 1.0) * len(toks))
        levels = [lv for lv in _LEVELS if lv in round_levels(r)]
        if levels:
            lev = self.level_matrix[:, [_LEVELS.index(lv) for lv in levels]].sum(axis=1) / len(levels)
        named = r.rewrite.family if r.rewrite is not None else ""
        if named or r.cards_cited:
            cit = np.zeros(n, dtype=np.float32)
            for cid in {named, *r.cards_cited} - {""}:
                cit[self.related_to.get(cid, [])] = np.maximum(cit[self.related_to.get(cid, [])], cfg.cite_related)
            for cid in r.cards_cited:
                if cid in self.by_id:
                    cit[self.by_id[cid]] = max(cit[self.by_id[cid]], cfg.cite_cited)
            if named in self.by_id:
                cit[self.by_id[named]] = cfg.cite_named
        dense = np.maximum(sims, 0.0)
        parts = [(cfg.w_dense, dense), (cfg.w_symptoms, sym), (cfg.w_levels, lev), (cfg.w_cited, cit)]
        used = [(w, v) for w, v in parts if v is not None]
        total = sum(w * v for w, v in used) / sum(w for w, _ in used)
        return total, {"dense": dense, "symptoms": sym, "levels": lev, "cited": cit}

    def map_embedded(self, rounds: Sequence[RoundRecord], vecs: np.ndarray) -> list[FamilyMapping]:
        """Map rounds whose vectors (from :meth:`embed_rounds`) are already computed."""
        cfg = self.config
        if not rounds:
            return []
        if not self.families:
            return [FamilyMapping(round_ref=r.ref, family_id=None, confidence=1.0, score=0.0,
                                  components=MappingComponents(dense=0.0)) for r in rounds]
        sims = vecs @ self.vectors.T
        out: list[FamilyMapping] = []
        for i, rec in enumerate(rounds):
            total, comps = self.score_round(rec, sims[i])
            order = np.argsort(-total, kind="stable")  # families are sorted by id: ties go to the smaller id
            best = float(total[order[0]])
            margin = best - float(total[order[1]]) if len(order) > 1 else 1.0
            p_match = _sigmoid((best - cfg.assign_threshold) / cfg.confidence_scale)
            p_unique = 1.0 - math.exp(-margin / cfg.confidence_scale)
            assigned = best >= cfg.assign_threshold
            conf = p_match * (0.5 + 0.5 * p_unique) if assigned else 1.0 - p_match

            cands = [FamilyCandidate(family_id=self.families[k].id, score=round(float(total[k]), 4),
                                     components=_components_at(comps, int(k)))
                     for k in order[: cfg.top_candidates]]
            out.append(FamilyMapping(
                round_ref=rec.ref, family_id=cands[0].family_id if assigned else None, confidence=round(conf, 4),
                score=round(best, 4), components=cands[0].components, candidates=cands,
            ))
        return out


def map_rounds(
    rounds: Sequence[RoundRecord],
    families: Sequence[PatternCard],
    embed: Embed,
    *,
    config: MiningConfig | None = None,
) -> list[FamilyMapping]:
    """Map each round to its pattern family (or None). Pure and deterministic for a deterministic ``embed``.

    To map several batches against the same families, build a :class:`FamilyIndex` once and call ``.map``.
    """
    return FamilyIndex.build(families, embed, config).map(rounds, embed)


def proposal_id(kind: str, anchor: str, refs: Sequence[str]) -> str:
    """Stable id: re-mining the same rounds yields the same proposal id (the store can dedupe on it)."""
    digest = hashlib.sha1("\n".join(sorted(refs)).encode()).hexdigest()[:10]
    return f"{kind.replace('_', '-')}.{anchor}.{digest}"[:160]


def _measured(rec: RoundRecord) -> tuple[float | None, float | None]:
    """(speedup, lift) of a round whose candidate was correct; a wrong kernel's timing means nothing."""
    if not is_clean(rec.round):
        return None, None
    return rec.speedup, None if rec.lift is None else round(rec.lift, 4)


def evidence_ref(rec: RoundRecord, confidence: float | None = None, note: str = "") -> EvidenceRef:
    speedup, lift = _measured(rec)
    return EvidenceRef(
        round_ref=rec.ref, problem=rec.problem, backend=rec.backend, outcome=rec.round.outcome,
        speedup=speedup, lift=lift, confidence=confidence, note=note, copies=rec.copies,
    )


def example_evidence(rec: RoundRecord) -> Evidence:
    """The round as one example of a family: preconditions seen, rewrite, evidence and interpretation."""
    r = rec.round
    seen = "; ".join(f"{e.level} {e.kind}: {e.summary}" for e in r.evidence[:4])
    rw = r.rewrite.description if r.rewrite is not None and r.rewrite.description else r.hypothesis
    why = r.stop.rationale if r.stop is not None else ""
    where = f"{rec.problem} ({rec.backend}{', ' + rec.device if rec.device else ''})"
    text = f"{where}: {rw} Evidence: {seen}." + (f" Interpretation: {why}" if why else "")
    speedup, lift = _measured(rec)
    metric = {"geomean_speedup": float(speedup)} if speedup is not None else {}
    if lift is not None:
        metric["lift"] = float(lift)
    if rec.round.validation is not None and rec.round.validation.failure_reason:
        text += f" Validation: {rec.round.validation.failure_reason}."
    review = [
        f for f in (rec.round.validation.hack_flags if rec.round.validation else []) if f in REVIEW_ONLY_HACK_FLAGS
    ]
    if review:  # put the warning where the curator reads, not at the end where the 2000-char cut could drop it
        text = f"[review: {', '.join(review)} flagged; check the measurement before approving] " + text
    return Evidence(kind="trajectory", text=text[:2000], source=rec.ref, metric=metric)


def example_proposals(
    records: Sequence[RoundRecord],
    mappings: Sequence[FamilyMapping],
    families: Sequence[PatternCard],
    *,
    now: datetime,
    min_confidence: float = 0.0,
) -> list[Proposal]:
    """One ``example`` proposal per family that gained rounds: the family card with the new evidence appended.

    Rounds already recorded on the card (same source ref) are skipped, so re-mining is idempotent.
    """
    by_id = {f.id: f for f in families}
    rec_by_ref = {r.ref: r for r in records}
    grouped: dict[str, list[tuple[RoundRecord, FamilyMapping]]] = {}
    for m in mappings:
        if m.family_id is None or m.confidence < min_confidence or m.family_id not in by_id:
            continue
        rec = rec_by_ref[m.round_ref]
        fam = by_id[m.family_id]
        if rec.ref in fam.provenance.rounds or any(e.source == rec.ref for e in fam.evidence):
            continue
        grouped.setdefault(m.family_id, []).append((rec, m))
    out: list[Proposal] = []
    for fid in sorted(grouped):
        fam, items = by_id[fid], grouped[fid]
        refs = [r.ref for r, _ in items]
        draft = fam.model_copy(
            update={
                "evidence": fam.evidence + [example_evidence(r) for r, _ in items],
                "provenance": fam.provenance.model_copy(
                    update={"rounds": list(dict.fromkeys(fam.provenance.rounds + refs))}
                ),
                "version": fam.version + 1,
            }
        )
        confs = [m.confidence for _, m in items]
        out.append(
            Proposal(
                id=proposal_id("example", fid, refs), kind="example", card=draft, target_family=fid,
                base_version=fam.version, confidence=round(min(confs), 4),
                evidence=[evidence_ref(r, m.confidence) for r, m in items],
                nearest=items[0][1].candidates,
                reason=f"{len(items)} validated round(s) map to {fid} (mean confidence {sum(confs) / len(confs):.2f})",
                created_at=now,
            )
        )
    return out
