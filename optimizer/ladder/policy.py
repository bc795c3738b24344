"""Ladder policies: which levels a session round runs and which level's family it acts on (issue 34, the ablation).

One typed ``LadderPolicy`` that ``optimizer.ladder.engine.run_ladder`` consults; the arm of the ablation is a
setting (``LADDER_POLICY`` / ``--policy``), never a fork of the code:

- ``hierarchical`` (default): L1 -> L4 in order, a level stops the ladder when its three escalation tests pass
  (``run_ladder`` exactly as before: the policy changes nothing on this path).
- ``l1-only``: pattern triage from code facts only; no profiling, no IR, no compiler escalation.
- ``profile-first``: L1 and L2 every round, never L3/L4 (profiling-guided systems); the deepest level that passed
  its tests decides (L2's decision combines L1's findings with the profile), else the engine's fallback.
- ``always-deep``: L1 through L4 every round (up to ``max_level``); the deepest level that passed decides.
- ``random-family``: L1 only, then any applicable, not set-aside family among the matched cards, drawn with a
  generator seeded from (``policy_seed``, problem, round index): reproducible, and a floor for the others.
"""

from __future__ import annotations

import hashlib
import random
from typing import TYPE_CHECKING, Literal, get_args

from pydantic import BaseModel, ConfigDict

from kb.models import StopDecision
from kb.vocab import LEVELS, Level

if TYPE_CHECKING:
    from optimizer.ladder.engine import LadderOutcome
    from optimizer.ladder.types import CardRef, LadderContext

__all__ = ["POLICIES", "LadderPolicy", "PolicyName", "ladder_policy"]

PolicyName = Literal["hierarchical", "l1-only", "profile-first", "always-deep", "random-family"]
POLICIES: tuple[str, ...] = get_args(PolicyName)


class LadderPolicy(BaseModel):
    """What the engine consults: the highest level (``cap``), whether a passing level ends the round
    (``stop_early``), whether the deepest passing level decides instead of the first (``deepest_decides``), and
    whether the family is drawn at random among the applicable matched cards (``random_family``, with ``seed``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: PolicyName = "hierarchical"
    cap: Level | None = None
    stop_early: bool = True
    deepest_decides: bool = False
    random_family: bool = False
    seed: int = 0

    @property
    def default(self) -> bool:
        return self.name == "hierarchical"

    def max_level(self, wanted: Level) -> Level:
        """``wanted`` (the session's ``max_level``) lowered to this policy's cap."""
        if self.cap is None or LEVELS.index(self.cap) >= LEVELS.index(wanted):
            return wanted
        return self.cap

    def levels(self, wanted: Level) -> list[str]:
        """Every level a round of this policy may run (all of them unless one stops the round early)."""
        return list(LEVELS[: LEVELS.index(self.max_level(wanted)) + 1])

    def draw(self, ctx: LadderContext, out: LadderOutcome) -> None:
        """``random-family``: replace the outcome's family by a seeded draw among the applicable matched cards."""
        from optimizer.ladder.select import nonimproving_tries, spent

        if out.stop is not None and out.stop.cause == "at_roofline" and out.chosen is None:
            return  # measured at the roofline: the session stops, as for every policy
        tries = nonimproving_tries(ctx)
        pool: dict[str, CardRef] = {}
        for r in out.results:
            for c in r.matched_cards:
                ok = c.applicable if ctx.require_recipe else c.applicable is not False
                if c.kind == "pattern" and ok and not spent(c, tries.get(c.id, 0)) and c.id not in ctx.exclude_cards:
                    pool.setdefault(c.id, c)
        last = out.results[-1] if out.results else None
        if not pool or last is None:
            out.stop, out.chosen = None, None
            return
        ids = sorted(pool)
        rng = random.Random(self.round_seed(ctx))
        pick = ids[rng.randrange(len(ids))]
        out.chosen = pool[pick]
        out.stop = StopDecision(level=last.level, tests=last.tests, bottleneck=last.bottleneck,
                                rationale=(f"random-family policy (seed {self.seed}, round {len(ctx.history) + 1}): "
                                           f"{pick} drawn from {len(ids)} applicable matched famil"
                                           f"{'y' if len(ids) == 1 else 'ies'}: {', '.join(ids)}")[:2000])

    def round_seed(self, ctx: LadderContext) -> int:
        """The draw's seed: the session's ``seed``, the problem and the round index (reproducible per session)."""
        key = f"{self.seed}:{getattr(ctx.problem, 'name', '')}:{len(ctx.history) + 1}"
        return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")


_SHAPES: dict[str, dict[str, object]] = {
    "hierarchical": {},
    "l1-only": {"cap": "L1"},
    "profile-first": {"cap": "L2", "stop_early": False, "deepest_decides": True},
    "always-deep": {"stop_early": False, "deepest_decides": True},
    "random-family": {"cap": "L1", "random_family": True},
}


def ladder_policy(name: str = "hierarchical", seed: int = 0) -> LadderPolicy:
    """The policy called ``name`` (one of ``POLICIES``); a ValueError lists them for an unknown name."""
    if name not in _SHAPES:
        raise ValueError(f"unknown ladder policy {name!r}: use one of {', '.join(POLICIES)}")
    # ``name`` is a plain string known to ``_SHAPES``: pydantic checks it (and the shape's fields) on validation
    return LadderPolicy.model_validate({"name": name, "seed": seed, **_SHAPES[name]})
