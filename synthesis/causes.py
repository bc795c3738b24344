"""Mine new causes (issue 30, "Causes that grow"): an inefficiency no known cause explains, that a rewrite family
removed in a session, becomes a ``new_cause`` proposal: a cause record plus the family card that links to it.

What the miner reads from a trajectory (the optimizer records it at L3, ``optimizer.ladder.gap_account``):

- ``unexplained`` evidence items of a round: a significant static-account finding (``data``: the
  ``optimizer.ir.gap_account.GapFinding``: kind, kernel, value, unit, share, explained_by) that none of the causes
  the ladder decided or supported explains. The ladder diagnoses the round's *base*, so these describe the kernel
  the round's rewrite started from.
- ``gap_account`` evidence items (``data``: the ``GapAccount``, its ``findings``) of a later round: the account of
  the kernel that round started from.

A removal is an improved round (synthesis category ``improved``: validated, clean, measured lift) whose base had an
unexplained finding of kind K, followed by the first later round that recorded a gap account, with no improved
round between (so its base is the improved round's candidate: the session's rule), in which K's cost fell by at
least ``min_drop`` (cost: the finding's ``share`` when it has one, else 1 while significant, 0 otherwise; a kind
that is gone costs 0). K must be explained by no cause the KB knows (active or proposed ``explains``) and by no
listed cause (``explained_by``). Removals are grouped by K; the family that removed it most often is the card.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kb.models import CauseRecord, Evidence, PatternCard, Provenance, Rewrite, Round, Trajectory
from kb.vocab import BOTTLENECK_CLASSES, BottleneckClass
from synthesis.features import card_backend, first_sentence, round_levels, slug_words, slugify
from synthesis.mining import evidence_ref, example_evidence, proposal_id
from synthesis.models import Proposal
from synthesis.rounds import RoundRecord

__all__ = ["MIN_DROP", "Removal", "find_removals", "new_cause_proposals"]

#: the share of an inefficiency's cost a round must remove to count as removing it
MIN_DROP = 0.5


@dataclass(frozen=True)
class Removal:
    """One improved round after which an unexplained inefficiency fell."""

    kind: str
    family: str
    rec: RoundRecord
    before: dict[str, Any]  # the unexplained finding on the round's base
    after: dict[str, Any] | None  # the same kind's finding on the next account (None: gone)
    after_ref: str  # the round whose account showed it

    def cost(self) -> tuple[float, float]:
        return _cost(self.before), _cost(self.after) if self.after else 0.0


def _cost(f: dict[str, Any]) -> float:
    share = f.get("share")
    return float(share) if share is not None else (1.0 if f.get("significant") else 0.0)


def _unexplained(r: Round) -> list[dict[str, Any]]:
    return [e.data for e in r.evidence if e.kind == "unexplained" and e.data.get("kind")]


def _account(r: Round) -> list[dict[str, Any]] | None:
    """The findings of the round's gap accounts; None when the round recorded no account."""
    accounts = [e.data for e in r.evidence if e.kind == "gap_account" and isinstance(e.data.get("findings"), list)]
    return [f for a in accounts for f in a["findings"] if isinstance(f, dict)] if accounts else None


def find_removals(trajectories: Iterable[Trajectory], records: dict[str, RoundRecord],
                  explained: set[str], *, min_drop: float = MIN_DROP) -> list[Removal]:
    """Every removal in ``trajectories`` of an inefficiency kind not in ``explained`` (``records``: round ref ->
    its record, for the category)."""
    out: list[Removal] = []
    for t in trajectories:
        for i, r in enumerate(t.rounds):
            rec = records.get(f"{t.id}#{r.index}")
            if rec is None or rec.category != "improved" or r.rewrite is None:
                continue
            todo = [f for f in _unexplained(r) if f["kind"] not in explained and not f.get("explained_by")]
            nxt = _next_account(t.rounds[i + 1:]) if todo else None
            if nxt is None:
                continue
            later, findings = nxt
            for f in todo:
                same = [g for g in findings if g.get("kind") == f["kind"]]
                after = max([g for g in same if g.get("kernel") == f.get("kernel")] or same, key=_cost, default=None)
                if (_cost(after) if after else 0.0) <= _cost(f) * (1.0 - min_drop):
                    out.append(Removal(f["kind"], r.rewrite.family, rec, f, after, f"{t.id}#{later.index}"))
    return out


def _next_account(rounds: Sequence[Round]) -> tuple[Round, list[dict[str, Any]]] | None:
    for r in rounds:
        findings = _account(r)
        if findings is not None:
            return r, findings
        if r.outcome == "improved":  # the base moved on before any account of this one
            return None
    return None


def _evidence(x: Removal) -> Evidence:
    (b, a), f = x.cost(), x.before
    after = (f"{x.after.get('value')} {x.after.get('unit', '')}, cost {a:.2f}" if x.after else "gone")
    metric = {"before_value": f.get("value"), "before_cost": b, "after_cost": a,
              "after_value": x.after.get("value") if x.after else None, "lift": x.rec.lift}
    return Evidence(kind="trajectory", source=x.rec.ref,
                    text=(f"{x.rec.problem}: {f.get('kernel', '?')} {x.kind}: {f.get('summary', '')} "
                          f"(value {f.get('value')} {f.get('unit', '')}, cost {b:.2f}); after {x.family} "
                          f"({x.rec.ref}) the account of {x.after_ref} shows {after}")[:2000],
                    metric={k: float(v) for k, v in metric.items() if isinstance(v, int | float)})


def _family_card(family: str, xs: list[Removal], cards: dict[str, PatternCard], taken: set[str],
                 cause_id: str) -> tuple[PatternCard, str | None, int | None]:
    """The card of the proposal: the existing family with the examples added (target, base version), or a draft."""
    examples = [example_evidence(x.rec) for x in xs]
    refs = [x.rec.ref for x in xs]
    if family in cards:
        c = cards[family]
        known = {e.source for e in c.evidence}
        card = c.model_copy(update={
            "evidence": c.evidence + [e for e in examples if e.source not in known],
            "provenance": c.provenance.model_copy(update={"rounds": list(dict.fromkeys(c.provenance.rounds + refs))}),
            "version": c.version + 1})
        return card, c.id, c.version
    cid, k = slugify(family) or "new-family", 2
    base = cid
    while cid in taken:
        cid, k = f"{base}-{k}", k + 1
    best = max(xs, key=lambda x: (x.rec.lift or 0.0, x.rec.ref))
    what = first_sentence(best.rec.round.rewrite.description if best.rec.round.rewrite else "", 160) or slug_words(cid)
    card = PatternCard(
        id=cid, title=first_sentence(f"{slug_words(cid).capitalize()}: removes {slug_words(cause_id)}", 200),
        summary=f"{what} Removed the {slug_words(cause_id)} inefficiency in {len(xs)} round(s)."[:600],
        backends=sorted({card_backend(x.rec.backend) for x in xs}),
        levels=sorted(set().union(*(round_levels(x.rec.round) for x in xs))) or ["L3"],
        rewrite=Rewrite(description=what), evidence=examples, status="proposed",
        provenance=Provenance(origin="synthesized", rounds=refs, author="synthesis@offline"))
    return card, None, None


def new_cause_proposals(removals: Sequence[Removal], cards: Sequence[PatternCard], *, taken_causes: set[str],
                        taken_cards: set[str], now: datetime) -> list[Proposal]:
    """One ``new_cause`` proposal per inefficiency kind with removals."""
    by_kind: dict[str, list[Removal]] = {}
    for x in removals:
        by_kind.setdefault(x.kind, []).append(x)
    families = {c.id: c for c in cards}
    out: list[Proposal] = []
    for kind, xs in sorted(by_kind.items()):
        fams = [f for f, _ in sorted(Counter(x.family for x in xs).items(), key=lambda kv: (-kv[1], kv[0]))]
        cid, k = kind[:44], 2
        while cid in taken_causes:
            cid, k = f"{kind[:44]}_{k}", k + 1
        taken_causes.add(cid)
        card, target, base_version = _family_card(fams[0], [x for x in xs if x.family == fams[0]], families,
                                                  taken_cards, cid)
        taken_cards.add(card.id)
        classes = Counter(x.rec.round.stop.bottleneck for x in xs if x.rec.round.stop is not None)
        known = [c for c, _ in classes.most_common() if c in BOTTLENECK_CLASSES and c != "unknown"]
        cls: BottleneckClass = known[0] if known else "unknown"
        first = xs[0].before
        drops = ", ".join(f"{x.cost()[0]:.2f} -> {x.cost()[1]:.2f}" for x in xs[:6])
        cause = CauseRecord(
            id=cid, title=first_sentence(f"{slug_words(kind).capitalize()} (unexplained, removed by {fams[0]})", 200),
            description=(f"{first.get('summary') or slug_words(kind)}. No known cause explained this {kind} "
                         f"inefficiency; {', '.join(fams)} removed it in {len(xs)} round(s) (cost {drops}).")[:2000],
            bottleneck_class=cls, families=[card.id] + [f for f in fams[1:] if f in families], explains=[kind],
            status="proposed", evidence=[_evidence(x) for x in xs][:200],
            provenance=Provenance(origin="synthesized", rounds=[x.rec.ref for x in xs], author="synthesis@offline"))
        refs = [x.rec.ref for x in xs]
        out.append(Proposal(
            id=proposal_id("new_cause", cid.replace("_", "-"), refs), kind="new_cause", card=card, cause=cause,
            target_family=target, base_version=base_version, confidence=round(1.0 - 0.5 ** len(xs), 4),
            evidence=[evidence_ref(x.rec, note=f"{kind}: cost {x.cost()[0]:.2f} -> {x.cost()[1]:.2f}") for x in xs],
            reason=f"{kind} was unexplained by every known cause and fell after {fams[0]} in {len(xs)} round(s)",
            created_at=now))
    return out
