"""One round: diagnose -> propose -> screen -> judge, assembled into a ``kb.models.Round``. In: the round's
:class:`~optimizer.round.diagnose.Base`; out: :class:`RoundResult`.

A round with nothing to act on is ``inconclusive`` (no level decided, the kernel at its roofline, or the proposer
refused: that family is set aside until the base changes). An LLM family gets two tries per base.
"""

from __future__ import annotations

from dataclasses import dataclass

from kb.models import AppliedRecipe, Round, RoundRewrite
from optimizer.harness.evaluation import Evaluation
from optimizer.proposers.base import Proposer
from optimizer.rewrite.errors import NotApplicable
from optimizer.round.context import RoundSetup
from optimizer.round.diagnose import Base, diagnose
from optimizer.round.judge import Judged, judge, validation_evidence
from optimizer.round.propose import propose
from optimizer.round.screen import screen

__all__ = ["RoundResult", "run_round"]


@dataclass(frozen=True)
class RoundResult:
    """The round, and its candidate's evaluation (None when no candidate was evaluated)."""

    round: Round
    evaluation: Evaluation | None = None


def run_round(setup: RoundSetup, base: Base, proposer: Proposer) -> RoundResult:
    d = diagnose(setup, base)
    early = d.early_round()
    if early is not None:
        return RoundResult(early)
    chosen = d.outcome.chosen
    try:
        proposed = propose(setup, d, proposer)
    except NotApplicable as exc:
        if chosen is not None:
            setup.exhausted.add(chosen.id)
        return RoundResult(d.round(outcome="inconclusive",
                                   hypothesis=f"{chosen.id if chosen else '?'} chosen but not applied",
                                   next_recommendation=f"proposal failed ({exc}); the family is set aside"))
    j = judge(setup, screen(setup, proposed))
    prop = j.screened.proposal
    if (j.outcome != "improved" and prop.recipe.kind == "llm"
            and _applied_count(base, prop.family, d.ctx.source_sha) >= 1):
        # offline recipes track tried points themselves; an LLM family gets two tries per base
        setup.exhausted.add(prop.family)
    return RoundResult(_assemble(j), j.evaluation)


def _applied_count(base: Base, family: str, base_sha: str) -> int:
    return sum(1 for r in base.history
               if r.rewrite and r.rewrite.family == family and AppliedRecipe.of(r.rewrite.recipe).base == base_sha)


def _assemble(j: Judged) -> Round:
    s, d, target = j.screened, j.screened.diagnosed, j.target
    prop, stop = s.proposal, d.outcome.stop
    evidence = d.outcome.evidence + ([s.evidence] if s.evidence else []) + [
        validation_evidence(j.evaluation, stop.level if stop else "L1")]
    return d.round(
        evidence=evidence,
        hypothesis=prop.hypothesis,
        rewrite=RoundRewrite(family=prop.family, recipe=prop.recipe.record(), diff=prop.diff,
                             description=prop.description),
        validation=j.evaluation.validation,
        timing=j.timing,
        outcome=j.outcome,
        target=target,
        candidate_path=str(s.path),
        next_recommendation=j.advice
        + (f"; improved, but {target.cause}'s measured parts are {target.verdict} ({target.note})"
           if target is not None and j.outcome == "improved" and target.verdict in ("unchanged", "grew") else ""),
    )
