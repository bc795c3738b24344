"""Mine rounds that were correct but slower, or that failed, into anti-signal drafts.

Rounds are grouped by (rewrite family, failure mode). The family is the mapped pattern family when the mapping
is confident, else the family name the optimizer recorded. Modes: ``slower`` (validated, lift below 1),
``incorrect`` (validation failed, no hack flag) and ``failed`` (no validation: did not compile or crashed).
Hack-tripped rounds never reach this module (see :mod:`synthesis.rounds`). When one of an existing
anti-signal's ``contraindicated`` transforms reads like the rounds, they become an ``example`` of that card.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from kb.models import AntiSignalCard, Provenance, Symptoms
from kb.vocab import is_bottleneck_class, is_ir_signature
from synthesis.features import (
    TokenMatcher,
    card_backend,
    consensus,
    first_sentence,
    namespace_values,
    round_levels,
    round_text,
    slug_words,
    slugify,
)
from synthesis.mining import (
    Embed,
    embed_batched,
    evidence_ref,
    example_evidence,
    proposal_id,
)
from synthesis.models import FamilyMapping, Proposal
from synthesis.rounds import ANTI_CATEGORIES, RoundRecord

__all__ = ["anti_signal_proposals", "group_anti_rounds"]

_MODE_WORD = {"slower": "correct but slower", "incorrect": "produced wrong results", "failed": "failed to build or run"}


def group_anti_rounds(
    records: Sequence[RoundRecord], mappings: dict[str, FamilyMapping], *, min_confidence: float = 0.5
) -> dict[tuple[str, str], list[RoundRecord]]:
    """(family, mode) -> rounds, in a deterministic order. Only slower/incorrect/failed rounds are taken."""
    groups: dict[tuple[str, str], list[RoundRecord]] = {}
    for rec in records:
        if rec.category not in ANTI_CATEGORIES or rec.round.rewrite is None:
            continue
        m = mappings.get(rec.ref)
        fam = m.family_id if m is not None and m.family_id and m.confidence >= min_confidence else None
        key = fam or slugify(rec.round.rewrite.family or rec.round.rewrite.description[:60])
        groups.setdefault((key, rec.category), []).append(rec)
    return dict(sorted(groups.items()))


def _draft(family: str, mode: str, recs: list[RoundRecord], matcher: TokenMatcher, taken: set[str],
           family_title: str | None) -> AntiSignalCard:
    cid, k = slugify(f"avoid-{family}-{mode}"), 2
    base = cid
    while cid in taken:
        cid, k = f"{base}-{k}", k + 1
    toks = consensus([matcher.round_tokens(x.round) for x in recs])

    def pick(ns: str) -> list[str]:
        return namespace_values(toks, ns)

    symptoms = Symptoms(
        bottleneck_classes=[b for b in pick("bottleneck") if is_bottleneck_class(b)],
        ir_signatures=[s for s in pick("ir") if is_ir_signature(s)],
        profile_signals=pick("profile"),
        code_features=pick("code"),
    )
    lifts = [x.lift for x in recs if x.lift is not None] if mode == "slower" else []
    worst = min(recs, key=lambda x: (x.lift if x.lift is not None else 0.0, x.ref))
    problems = sorted({x.problem for x in recs})
    rw = worst.round.rewrite
    what = first_sentence(rw.description if rw and rw.description else worst.round.hypothesis, 120)
    family_name = family_title or slug_words(family)
    gm = float(np.exp(np.mean(np.log(lifts)))) if lifts else None
    how = _MODE_WORD[mode] + (f" ({gm:.2f}x geomean lift)" if gm else "")
    reasons = sorted({x.round.validation.failure_reason for x in recs
                      if x.round.validation is not None and x.round.validation.failure_reason})
    trigger = [f"{e.level} {e.kind}: {e.summary}" for e in worst.round.evidence[:4]]
    trigger += [f"bottleneck class {b}" for b in symptoms.bottleneck_classes]
    trigger += [f"IR signature {s}" for s in symptoms.ir_signatures]
    counter = f"{worst.ref} ({worst.problem}, {worst.backend}): {what}"
    counter += (
        f" -> {worst.lift:.2f}x lift" if mode == "slower" and worst.lift is not None else f" -> {_MODE_WORD[mode]}"
    )
    if reasons:
        counter += f" ({'; '.join(reasons)})"
    interp = "; ".join(reasons) or next(
        (x.round.next_recommendation for x in recs if x.round.next_recommendation), ""
    )
    summary = f"{what} ({family_name}) {how} on {', '.join(problems[:4])} in {len(recs)} round(s)."
    if trigger:
        summary += f" Evidence at the time: {trigger[0]}."
    return AntiSignalCard(
        id=cid,
        title=first_sentence(f"{what}: {how}", 200),
        summary=summary[:600],
        body="## Rounds\n" + "\n".join(f"- {x.ref} ({x.problem}): {x.round.hypothesis.strip()[:240]}" for x in recs),
        backends=sorted({card_backend(x.backend) for x in recs}),
        levels=sorted(set().union(*(round_levels(x.round) for x in recs))) or ["L1"],
        symptoms=symptoms,
        interpretation=interp,
        evidence=[example_evidence(x) for x in recs],
        trigger_evidence=trigger,
        contraindicated=[family],
        related=[family] if family_title else [],
        counterexample=counter,
        status="proposed",
        provenance=Provenance(origin="synthesized", rounds=[x.ref for x in recs], author="synthesis@offline"),
    )


def _confidence(mode: str, recs: list[RoundRecord]) -> float:
    """More rounds and larger slowdowns give more confidence; a build failure says least about the idea."""
    size = 1.0 - 0.5 ** len(recs)
    if mode == "slower":
        lifts = [x.lift for x in recs if x.lift is not None]
        drop = 1.0 - float(np.exp(np.mean(np.log(lifts)))) if lifts else 0.0
        return size * min(1.0, 0.4 + drop / 0.2)
    return size * (0.9 if mode == "incorrect" else 0.5)


def anti_signal_proposals(
    records: Sequence[RoundRecord],
    mappings: Sequence[FamilyMapping],
    anti_cards: Sequence[AntiSignalCard],
    embed: Embed,
    *,
    matcher: TokenMatcher,
    taken_ids: set[str],
    now: datetime,
    family_titles: dict[str, str] | None = None,
    min_confidence: float = 0.5,
    merge_threshold: float = 0.6,
    round_vectors: dict[str, np.ndarray] | None = None,
) -> list[Proposal]:
    """Anti-signal proposals: a new draft per (family, mode) group, or an example of an existing anti-signal
    whose ``contraindicated`` transforms read like the group's rounds (cosine >= ``merge_threshold``).

    ``round_vectors``: round ref -> unit vector of its hypothesis+rewrite, when the caller has them already.
    """
    groups = group_anti_rounds(records, {m.round_ref: m for m in mappings}, min_confidence=min_confidence)
    if not groups:
        return []
    taken = set(taken_ids)
    titles = family_titles or {}
    drafts = [
        (key, recs, _draft(key[0], key[1], recs, matcher, taken, titles.get(key[0]))) for key, recs in groups.items()
    ]
    for _, _, d in drafts:
        taken.add(d.id)
    existing = sorted(anti_cards, key=lambda c: c.id)
    # an existing anti-signal claims a group when one of its contraindicated transforms reads like the
    # rounds' hypothesis+rewrite (cosine to the group's centroid)
    entries = [(j, t) for j, c in enumerate(existing) for t in c.contraindicated]
    best: list[tuple[float, int]] = [(-1.0, -1)] * len(drafts)
    if entries:
        vecs = dict(round_vectors or {})
        missing = [x for _, recs, _ in drafts for x in recs if x.ref not in vecs]
        if missing:
            fresh = embed_batched(embed, [round_text(x.round) for x in missing])
            vecs.update(zip([x.ref for x in missing], fresh, strict=False))
        ev = embed_batched(embed, [t for _, t in entries])
        for i, (_, recs, _) in enumerate(drafts):
            centroid = np.mean([vecs[x.ref] for x in recs], axis=0)
            sims = ev @ (centroid / max(float(np.linalg.norm(centroid)), 1e-12))
            k = int(np.argmax(sims))
            best[i] = (float(sims[k]), entries[k][0])
    out: list[Proposal] = []
    for i, ((family, mode), recs, draft) in enumerate(drafts):
        refs = [x.ref for x in recs]
        conf = round(_confidence(mode, recs), 4)
        if best[i][0] >= merge_threshold:
            card = existing[best[i][1]]
            new = [x for x in recs if x.ref not in card.provenance.rounds]
            if not new:
                continue
            upd = card.model_copy(
                update={
                    "evidence": card.evidence + [example_evidence(x) for x in new],
                    "provenance": card.provenance.model_copy(
                        update={"rounds": card.provenance.rounds + [x.ref for x in new]}
                    ),
                    "version": card.version + 1,
                }
            )
            out.append(Proposal(
                id=proposal_id("example", card.id, [x.ref for x in new]), kind="example", card=upd,
                target_family=card.id, base_version=card.version, confidence=conf,
                evidence=[evidence_ref(x, note=mode) for x in new],
                reason=f"{len(new)} round(s) where {family} {_MODE_WORD[mode]} match anti-signal {card.id}",
                created_at=now,
            ))
            continue
        out.append(Proposal(
            id=proposal_id("anti_signal", draft.id, refs), kind="anti_signal", card=draft,
            target_family=family if family in titles else None, confidence=conf,
            evidence=[evidence_ref(x, note=mode) for x in recs],
            reason=f"{len(recs)} round(s) where {family} {_MODE_WORD[mode]}",
            created_at=now,
        ))
    return out
