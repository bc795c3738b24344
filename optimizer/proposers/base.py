"""The proposer interface: a ladder outcome plus the current candidate -> a new candidate source and its diff."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from kb.models import AppliedRecipe
from optimizer.ladder.engine import LadderOutcome
from optimizer.ladder.types import LadderContext

__all__ = ["Proposal", "Proposer"]


@dataclass
class Proposal:
    source: str
    diff: str
    family: str
    #: ``Round.rewrite.recipe`` is its ``record()``
    recipe: AppliedRecipe
    description: str
    hypothesis: str
    cards: list[str] = field(default_factory=list)


class Proposer(Protocol):
    name: str

    #: whether matched cards need a machine-applicable recipe to be eligible (offline: yes; LLM: no)
    requires_recipe: bool

    def propose(self, ctx: LadderContext, outcome: LadderOutcome, *, new_filename: str) -> Proposal:
        """Raise ``optimizer.rewrite.errors.NotApplicable`` when no rewrite can be produced."""
        ...
