"""Stage 2, propose: the proposer's points for the diagnosed family. In: :class:`Diagnosed`; out: :class:`Proposed`.

Raises ``optimizer.rewrite.errors.NotApplicable`` when the proposer can make no rewrite.
"""

from __future__ import annotations

from dataclasses import dataclass

from optimizer.proposers.base import Proposal, Proposer
from optimizer.round.context import RoundSetup
from optimizer.round.diagnose import Diagnosed

__all__ = ["Proposed", "propose"]


@dataclass(frozen=True)
class Proposed:
    """The round's points (one, or several where the proposer offers variants) and the candidate's file name."""

    diagnosed: Diagnosed
    proposals: list[Proposal]
    new_name: str


def propose(setup: RoundSetup, d: Diagnosed, proposer: Proposer) -> Proposed:
    """Several points (``settings.round_variants``) where the proposer offers variants and a GPU times them."""
    new_name = f"round_{d.base.index:02d}.py"
    with d.clock.time("proposer"):  # the stage "proposer" too (PhaseClock.time opens the span)
        n = setup.settings.round_variants
        if n > 1 and hasattr(proposer, "variants") and setup.backend != "interpreter":
            props = list(proposer.variants(d.ctx, d.outcome, new_filename=new_name, limit=n)) or [
                proposer.propose(d.ctx, d.outcome, new_filename=new_name)]
        else:
            props = [proposer.propose(d.ctx, d.outcome, new_filename=new_name)]
    return Proposed(diagnosed=d, proposals=props, new_name=new_name)
