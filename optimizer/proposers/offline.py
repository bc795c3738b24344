"""The offline proposer: applies the chosen card's machine-applicable recipe as a real source rewrite."""

from __future__ import annotations

from kb.models import AppliedRecipe
from optimizer.harness import stages
from optimizer.ladder.engine import LadderOutcome
from optimizer.ladder.select import recipe_context
from optimizer.ladder.types import LadderContext
from optimizer.proposers.base import Proposal
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe, apply_recipe_variants

__all__ = ["OfflineProposer"]


class OfflineProposer:
    name = "offline"
    requires_recipe = True

    def propose(self, ctx: LadderContext, outcome: LadderOutcome, *, new_filename: str) -> Proposal:
        card, stop = outcome.chosen, outcome.stop
        if card is None or stop is None:
            raise NotApplicable("the ladder chose no family")
        if card.recipe is None:
            raise NotApplicable(f"{card.id} has no machine-applicable recipe")
        with stages.span("context"):  # the kernel model and facts the transform reads
            rctx = recipe_context(ctx, card.id, stop.bottleneck)
        rctx.new_filename = new_filename
        res = apply_recipe(card.recipe, rctx)
        hypothesis = (f"{stop.bottleneck} (localized at {stop.level}); {card.title}: {res.description} "
                      f"should relieve it")
        recipe = AppliedRecipe.of({**card.recipe, "applied": res.applied, "base": ctx.source_sha})
        return Proposal(source=res.source, diff=res.diff, family=card.id, recipe=recipe, description=res.description,
                        hypothesis=hypothesis, cards=[card.id])

    def variants(self, ctx: LadderContext, outcome: LadderOutcome, *, new_filename: str, limit: int) -> list[Proposal]:
        """Up to ``limit`` points of the chosen recipe (a structural transform's evidence-bounded sizes, or the
        next points of a launch search), each checked against the recipe's domain, to screen within one round."""
        card, stop = outcome.chosen, outcome.stop
        if card is None or stop is None or card.recipe is None:
            return [self.propose(ctx, outcome, new_filename=new_filename)]
        with stages.span("context"):
            rctx = recipe_context(ctx, card.id, stop.bottleneck)
        rctx.new_filename = new_filename
        out = []
        for res in apply_recipe_variants(card.recipe, rctx, limit=limit):
            recipe = AppliedRecipe.of({**card.recipe, "applied": res.applied, "base": ctx.source_sha})
            out.append(
                Proposal(
                    source=res.source,
                    diff=res.diff,
                    family=card.id,
                    recipe=recipe,
                    description=res.description,
                    hypothesis=(
                        f"{stop.bottleneck} (localized at {stop.level}); {card.title}: "
                        f"{res.description} should relieve it"
                    ),
                    cards=[card.id],
                )
            )
        return out
