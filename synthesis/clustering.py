"""Cluster rounds no family claimed, and draft a new pattern family card for each coherent cluster.

Clustering is average-linkage agglomeration on the cosine of the rounds' hypothesis+rewrite embeddings (plus a
small bonus when the optimizer gave two rewrites the same family name), merged while the average similarity
stays above a threshold. It is deterministic: ties break on the earlier round.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from kb.models import PatternCard, Provenance, Recipe, Rewrite, Symptoms
from kb.vocab import is_bottleneck_class, is_ir_signature
from synthesis.features import (
    TokenMatcher,
    card_backend,
    consensus,
    first_sentence,
    namespace_values,
    round_levels,
    slug_words,
    slugify,
)
from synthesis.mining import evidence_ref, example_evidence, proposal_id
from synthesis.models import FamilyMapping, Proposal
from synthesis.rounds import RoundRecord

__all__ = ["cluster_rounds", "draft_family_card", "new_family_proposals"]

_TL_CALL = re.compile(r"\btl\.[a-z_][a-z0-9_.]*")


def _name_key(rec: RoundRecord) -> str:
    return slug_words(rec.round.rewrite.family).lower() if rec.round.rewrite is not None else ""


def cluster_rounds(
    records: Sequence[RoundRecord], vectors: np.ndarray, *, threshold: float = 0.55, name_bonus: float = 0.10
) -> list[list[int]]:
    """Average-linkage clusters (lists of indices into ``records``), largest first, then by first member."""
    n = len(records)
    if n == 0:
        return []
    sim = np.clip(vectors @ vectors.T, -1.0, 1.0).astype(np.float64)
    names = [_name_key(r) for r in records]
    for i in range(n):
        for j in range(i + 1, n):
            if names[i] and names[i] == names[j]:
                sim[i, j] = sim[j, i] = min(1.0, sim[i, j] + name_bonus)
    clusters: list[list[int]] = [[i] for i in range(n)]
    # link[a, b] = sum of pairwise similarities between clusters a and b; average = link / (|a| |b|)
    link = sim.copy()
    sizes = np.ones(n)
    alive = np.ones(n, dtype=bool)
    while alive.sum() > 1:
        avg = link / np.outer(sizes, sizes)
        avg[~alive, :] = -np.inf
        avg[:, ~alive] = -np.inf
        np.fill_diagonal(avg, -np.inf)
        a, b = divmod(int(np.argmax(avg)), n)  # first maximum in row-major order: a < b, deterministic
        if avg[a, b] < threshold:
            break
        clusters[a] = sorted(clusters[a] + clusters[b])
        link[a, :] += link[b, :]
        link[:, a] += link[:, b]
        sizes[a] += sizes[b]
        alive[b] = False
    alive_ids = [int(i) for i in np.flatnonzero(alive)]
    out = [clusters[a] for a in alive_ids]
    return sorted(out, key=lambda c: (-len(c), c[0]))


def _medoid(idx: Sequence[int], vectors: np.ndarray) -> int:
    if len(idx) == 1:
        return idx[0]
    sub = vectors[list(idx)]
    scores = (sub @ sub.T).sum(axis=1)
    return idx[int(np.argmax(scores))]


def _code_features(rec: RoundRecord) -> set[str]:
    rw = rec.round.rewrite
    if rw is None:
        return set()
    removed = [ln[1:] for ln in rw.diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    return set(_TL_CALL.findall("\n".join(removed)))


def draft_family_card(
    records: Sequence[RoundRecord],
    vectors: np.ndarray,
    *,
    matcher: TokenMatcher,
    taken_ids: set[str],
) -> PatternCard:
    """A ``proposed`` pattern card drafted from a cluster of rounds (``vectors`` aligned with ``records``)."""
    idx = list(range(len(records)))
    med = records[_medoid(idx, vectors)]
    r = med.round
    names = Counter(_name_key(x) for x in records if _name_key(x))
    base = slugify(names.most_common(1)[0][0]) if names else slugify(" ".join(r.hypothesis.split()[:6]))
    cid, k = base, 2
    while cid in taken_ids:
        cid, k = f"{base}-{k}", k + 1
    token_sets = [matcher.round_tokens(x.round) for x in records]
    tokens = consensus(token_sets)
    code = consensus([{f"code:{c}" for c in _code_features(x)} | {t for t in s if t.startswith("code:")}
                       for x, s in zip(records, token_sets, strict=True)])
    symptoms = Symptoms(
        bottleneck_classes=[b for b in namespace_values(tokens, "bottleneck") if is_bottleneck_class(b)],
        ir_signatures=[s for s in namespace_values(tokens, "ir") if is_ir_signature(s)],
        profile_signals=[t.split(":", 1)[1] for t in tokens if t.startswith("profile:")],
        code_features=[t.split(":", 1)[1] for t in code],
    )
    description = (r.rewrite.description if r.rewrite and r.rewrite.description else r.hypothesis).strip()
    recipes = {repr(sorted(x.round.rewrite.recipe.items())) for x in records if x.round.rewrite is not None}
    recipe = None
    if len(recipes) == 1 and r.rewrite is not None and isinstance(r.rewrite.recipe.get("kind"), str):
        params = {k2: v for k2, v in r.rewrite.recipe.items() if k2 != "kind"}
        try:
            recipe = Recipe(kind=r.rewrite.recipe["kind"], params=params.get("params", params))
        except ValueError:
            recipe = None
    preconditions = [f"L2 classifies the kernel as {b}" for b in symptoms.bottleneck_classes]
    preconditions += [f"The IR shows {slug_words(s)}" for s in symptoms.ir_signatures]
    preconditions += [f"The kernel uses {c}" for c in symptoms.code_features]
    problems = sorted({x.problem for x in records})
    lifts = [x.lift for x in records if x.lift is not None]
    gm = float(np.exp(np.mean(np.log(lifts)))) if lifts else None
    title = first_sentence(description, 120)
    title = title if len(title) >= 3 else f"Synthesized family {cid}"
    summary = (
        f"{first_sentence(description, 420)}. Seen in {len(records)} validated round(s) on {', '.join(problems[:4])}"
    )
    summary += f"; geomean lift {gm:.2f}x." if gm else "."
    rows = "\n".join(
        f"| {x.ref} | {x.problem} | {x.backend} | {'' if x.lift is None else f'{x.lift:.2f}x'} | "
        f"{x.round.hypothesis.strip().replace('|', '/')[:160]} |"
        for x in records
    )
    diff = r.rewrite.diff.strip() if r.rewrite is not None else ""
    body = f"## Rounds\n| round | problem | backend | lift | hypothesis |\n|---|---|---|---|---|\n{rows}\n"
    if diff:
        body += f"\n## Representative rewrite ({med.ref})\n```diff\n{diff[:4000]}\n```\n"
    backends = sorted({card_backend(x.backend) for x in records})
    levels = sorted(set().union(*(round_levels(x.round) for x in records))) or ["L1"]
    interp = next((x.round.stop.rationale for x in [med, *records] if x.round.stop and x.round.stop.rationale), "")
    return PatternCard(
        id=cid,
        title=title[:200],
        summary=summary[:600],
        body=body,
        backends=backends,
        levels=levels,
        symptoms=symptoms,
        preconditions=preconditions,
        rewrite=Rewrite(description=description, recipe=recipe),
        interpretation=interp,
        evidence=[example_evidence(x) for x in records],
        status="proposed",
        provenance=Provenance(origin="synthesized", rounds=[x.ref for x in records], author="synthesis@offline"),
    )


def new_family_proposals(
    records: Sequence[RoundRecord],
    mappings: Sequence[FamilyMapping],
    vectors: np.ndarray,
    *,
    matcher: TokenMatcher,
    taken_ids: set[str],
    now: datetime,
    threshold: float = 0.55,
    min_size: int = 2,
) -> tuple[list[Proposal], list[str]]:
    """Cluster unmatched rounds (``mappings`` aligned with ``records``) and draft one proposal per cluster.

    Returns the proposals and the refs of rounds left pending (clusters smaller than ``min_size``).
    """
    taken = set(taken_ids)
    proposals: list[Proposal] = []
    pending: list[str] = []
    for cl in cluster_rounds(records, vectors, threshold=threshold):
        members = [records[i] for i in cl]
        if len(cl) < min_size:
            pending += [m.ref for m in members]
            continue
        card = draft_family_card(members, vectors[cl], matcher=matcher, taken_ids=taken)
        taken.add(card.id)
        maps = [mappings[i] for i in cl]
        sub = vectors[cl]
        coherence = float((sub @ sub.T).mean()) if len(cl) > 1 else 0.5
        novelty = float(np.mean([m.confidence for m in maps]))
        conf = novelty * (1.0 - 0.5 ** len(cl)) * min(1.0, max(0.0, coherence) / threshold)
        nearest = maps[int(np.argmax([m.score for m in maps]))].candidates
        proposals.append(
            Proposal(
                id=proposal_id("new_family", card.id, card.provenance.rounds), kind="new_family", card=card,
                target_family=nearest[0].family_id if nearest else None, confidence=round(min(1.0, conf), 4),
                evidence=[evidence_ref(m, mp.confidence) for m, mp in zip(members, maps, strict=True)], nearest=nearest,
                reason=(f"{len(cl)} validated round(s) that no family claims (best score "
                        f"{max(m.score for m in maps):.2f}); cluster coherence {coherence:.2f}"),
                created_at=now,
            )
        )
    return proposals, pending
