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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from kb.models import Evidence, PatternCard
from synthesis.features import TokenMatcher, card_text, round_levels, round_text
from synthesis.models import EvidenceRef, FamilyCandidate, FamilyMapping, MappingComponents, Proposal
from synthesis.rounds import RoundRecord

__all__ = ["Embed", "FamilyIndex", "MiningConfig", "example_proposals", "map_rounds", "proposal_id"]

#: list of texts -> (n, d) array of unit-norm embeddings (e.g. ``kb.search.embedding.Embedder().encode``)
Embed = Callable[[list[str]], np.ndarray]


class MiningConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    w_dense: float = 0.60
    w_symptoms: float = 0.20
    w_levels: float = 0.05
    w_cited: float = 0.15
    assign_threshold: float = Field(default=0.42, description="best combined score needed to assign a family")
    confidence_scale: float = Field(default=0.06, description="score distance that moves confidence by ~e")
    top_candidates: int = Field(default=3, ge=1)
    batch_size: int = Field(default=256, ge=1)


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"embed must return a 2-D array, got shape {x.shape}")
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(n, 1e-12)


def embed_batched(embed: Embed, texts: list[str], batch_size: int = 256) -> np.ndarray:
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    return _unit(np.concatenate([np.asarray(embed(texts[i : i + batch_size])) for i in range(0, len(texts), batch_size)]))


def _set_cosine(a: set[str], b: set[str]) -> float:
    return len(a & b) / math.sqrt(len(a) * len(b)) if a and b else 0.0


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, x))))


@dataclass
class FamilyIndex:
    """Pattern families with their embeddings and symptom tokens, computed once and reused per batch."""

    families: list[PatternCard]
    vectors: np.ndarray
    tokens: list[set[str]]
    matcher: TokenMatcher
    config: MiningConfig

    @classmethod
    def build(cls, families: Sequence[PatternCard], embed: Embed, config: MiningConfig | None = None) -> FamilyIndex:
        cfg = config or MiningConfig()
        fams = sorted(families, key=lambda c: c.id)
        vecs = embed_batched(embed, [card_text(c) for c in fams], cfg.batch_size)
        return cls(fams, vecs, [c.symptoms.tokens() for c in fams], TokenMatcher.for_cards(fams), cfg)

    def components(self, rec: RoundRecord, dense: np.ndarray, toks: set[str], k: int) -> MappingComponents:
        fam = self.families[k]
        r = rec.round
        levels = round_levels(r)
        cited: float | None = None
        named = r.rewrite.family if r.rewrite is not None else ""
        if named or r.cards_cited:
            cited = 0.0
            if named == fam.id:
                cited = 1.0
            elif fam.id in r.cards_cited:
                cited = 0.7
            elif set(fam.related) & (set(r.cards_cited) | {named}):
                cited = 0.3
        return MappingComponents(
            dense=float(max(0.0, dense[k])),
            symptoms=_set_cosine(toks, self.tokens[k]) if toks else None,
            levels=len(levels & set(fam.levels)) / len(levels) if levels else None,
            cited=cited,
        )

    def combine(self, c: MappingComponents) -> float:
        cfg = self.config
        parts = [(cfg.w_dense, c.dense), (cfg.w_symptoms, c.symptoms), (cfg.w_levels, c.levels), (cfg.w_cited, c.cited)]
        used = [(w, v) for w, v in parts if v is not None]
        return sum(w * v for w, v in used) / sum(w for w, _ in used)

    def embed_rounds(self, rounds: Sequence[RoundRecord], embed: Embed) -> np.ndarray:
        """Unit vectors of the rounds' hypothesis+rewrite text; one embedding call per ``batch_size`` rounds."""
        return embed_batched(embed, [round_text(r.round) for r in rounds], self.config.batch_size)

    def map(self, rounds: Sequence[RoundRecord], embed: Embed) -> list[FamilyMapping]:
        """Map each round (embedding them in batches)."""
        return self.map_embedded(rounds, self.embed_rounds(rounds, embed))

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
            toks = self.matcher.round_tokens(rec.round)
            # cheap pre-selection by dense score, then full scoring of the short list (ties -> family id order)
            short = np.argsort(-sims[i], kind="stable")[: max(16, cfg.top_candidates)]
            named = rec.round.rewrite.family if rec.round.rewrite is not None else ""
            extra = [k for k, f in enumerate(self.families) if f.id == named or f.id in rec.round.cards_cited]
            ks = list(dict.fromkeys([*short.tolist(), *extra]))
            scored = []
            for k in ks:
                comp = self.components(rec, sims[i], toks, k)
                scored.append((self.combine(comp), self.families[k].id, comp))
            scored.sort(key=lambda t: (-t[0], t[1]))
            best, runner = scored[0], scored[1] if len(scored) > 1 else None
            margin = best[0] - runner[0] if runner else 1.0
            p_match = _sigmoid((best[0] - cfg.assign_threshold) / cfg.confidence_scale)
            p_unique = 1.0 - math.exp(-margin / cfg.confidence_scale)
            assigned = best[0] >= cfg.assign_threshold
            conf = p_match * (0.5 + 0.5 * p_unique) if assigned else 1.0 - p_match
            out.append(
                FamilyMapping(
                    round_ref=rec.ref,
                    family_id=best[1] if assigned else None,
                    confidence=round(conf, 4),
                    score=round(best[0], 4),
                    components=best[2],
                    candidates=[FamilyCandidate(family_id=f, score=round(s, 4), components=c)
                                for s, f, c in scored[: cfg.top_candidates]],
                )
            )
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


def evidence_ref(rec: RoundRecord, confidence: float | None = None, note: str = "") -> EvidenceRef:
    return EvidenceRef(
        round_ref=rec.ref, problem=rec.problem, backend=rec.backend, outcome=rec.round.outcome,
        speedup=rec.speedup, lift=None if rec.lift is None else round(rec.lift, 4), confidence=confidence, note=note,
    )


def example_evidence(rec: RoundRecord) -> Evidence:
    """The round as one example of a family: preconditions seen, rewrite, evidence and interpretation."""
    r = rec.round
    seen = "; ".join(f"{e.level} {e.kind}: {e.summary}" for e in r.evidence[:4])
    rw = r.rewrite.description if r.rewrite is not None and r.rewrite.description else r.hypothesis
    why = r.stop.rationale if r.stop is not None else ""
    where = f"{rec.problem} ({rec.backend}{', ' + rec.device if rec.device else ''})"
    text = f"{where}: {rw} Evidence: {seen}." + (f" Interpretation: {why}" if why else "")
    metric = {"geomean_speedup": float(rec.speedup)} if rec.speedup is not None else {}
    if rec.lift is not None:
        metric["lift"] = round(float(rec.lift), 4)
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
                "provenance": fam.provenance.model_copy(update={"rounds": list(dict.fromkeys(fam.provenance.rounds + refs))}),
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
