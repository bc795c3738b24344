"""The measured account of a candidate's gap (``optimizer.profile.ncu_account``) for the ladder and the round.

``case_account`` runs ncu on one forward of the problem's largest case and splits the gap (GPU with ncu only;
untested in CI). L2 stores the base's account under ``keys.account(sha)`` (``decide`` ranks causes by it); after a
round's candidate validates, ``round_target`` measures the candidate the same way and records whether the parts the
decided cause explains went down (``kb.models.TargetEffect``): "improved for another reason" and "targeted metric
unchanged" become visible in the trajectory.
"""

from __future__ import annotations

from pathlib import Path

from kb.models import TargetEffect
from optimizer.harness import measure
from optimizer.harness.problem import case_label
from optimizer.ladder import keys
from optimizer.ladder.causes.account import target_effect
from optimizer.ladder.types import LadderContext
from optimizer.profile.ncu_account import MeasuredAccount, measured_account
from optimizer.profile.roofline import compute_kind, peaks_for

__all__ = ["case_account", "round_target"]


def case_account(ctx: LadderContext, candidate: Path) -> tuple[MeasuredAccount | None, str]:
    """(the ``MeasuredAccount`` of ``candidate`` at the problem's largest case, ""); (None, why) without ncu, an
    evaluation, cases or a profiled launch."""
    from optimizer.profile.cuda import ncu_available

    ev = ctx.evaluation
    cases = ctx.problem.cases_for("cuda")
    if not ncu_available() or ev is None or not cases:
        return None, "ncu unavailable" if not ncu_available() else "no evaluation or no case"
    case = max(cases, key=ctx.problem.size)
    with ctx.phases.time("ncu"):
        got = measure.ncu_launches(ctx.problem, candidate, case, settings=ctx.settings)
    if not got.rows:
        return None, got.error or "ncu saw no launch"
    feats = ctx.cache.get(keys.FEATURES)
    acc = measured_account(got.rows, bytes_moved=ctx.problem.bytes_moved(case), flops=ctx.problem.flops(case),
                           peaks=peaks_for(ev.device), compute=compute_kind(feats.tokens if feats else [], ev.launches),
                           case=case_label(case))
    return acc, ""


def round_target(ctx: LadderContext, candidate: Path, cause: str) -> TargetEffect:
    """The decided cause's parts on the round's base (L2's account, measured here when L2 did not run) and on
    ``candidate``."""
    key = keys.account(ctx.source_sha)
    if key not in ctx.cache:
        base, _ = case_account(ctx, ctx.candidate)
        if base is not None:
            ctx.cache[key] = base.model_dump(mode="json")
    after, why = case_account(ctx, candidate)
    fields = target_effect(cause, ctx.cache.get(key), after.model_dump(mode="json") if after is not None else None)
    if after is None:
        fields["note"] = f"candidate not measured: {why}"
    return TargetEffect.model_validate(fields)
