"""Stage 1, diagnose: the ladder on the round's base. In: :class:`Base`; out: :class:`Diagnosed`.

On the interpreter the ladder reads the base's full-size launches (recorded once per base) instead of the smoke
cases'. A diagnosis with nothing to act on ends the round here (:meth:`Diagnosed.early_round`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kb.models import Round
from optimizer.events import LadderDone, RoundStarted
from optimizer.harness import stages
from optimizer.harness.evaluation import Evaluation
from optimizer.ladder import keys
from optimizer.ladder.cases import representative_case
from optimizer.ladder.engine import LadderOutcome, run_ladder
from optimizer.ladder.types import LadderContext
from optimizer.phases import PhaseClock
from optimizer.round.context import RoundSetup

__all__ = ["AT_ROOFLINE_STOP", "Base", "Diagnosed", "diagnose", "full_size_launches"]

#: The recommendation prefix of a round that found the kernel at its roofline: the session stops there.
AT_ROOFLINE_STOP = "stop: the kernel runs at its roofline"


@dataclass(frozen=True)
class Base:
    """A round's input: its index, the candidate it starts from (with that candidate's evaluation), the baseline's
    per-case times, the rounds so far and whether the proposer needs machine-applicable recipes."""

    index: int
    path: Path
    evaluation: Evaluation
    baseline_ms: dict[str, float]
    history: list[Round]
    require_recipe: bool


@dataclass
class Diagnosed:
    """The ladder's outcome on the base, with the round's clocks (``started``: monotonic seconds)."""

    base: Base
    ctx: LadderContext
    outcome: LadderOutcome
    clock: PhaseClock
    started: float

    def round(self, **fields: Any) -> Round:
        """A Round of this diagnosis: the fields every round shares, ``fields`` and the wall and phase seconds."""
        o = self.outcome
        common: dict[str, Any] = dict(index=self.base.index, levels_reached=o.levels_reached, evidence=o.evidence,
                                      cards_cited=o.cards_cited, comparison_target="initial", stop=o.stop)
        d = time.monotonic() - self.started
        return Round(**(common | fields), duration_s=d, phase_s=self.clock.finish(d))

    def early_round(self) -> Round | None:
        """The round that ends here (no level decided, or the kernel is at its roofline with no family), else None."""
        o = self.outcome
        if o.inconclusive:
            failed = [f"{r.level}: {r.tests.notes[:160]}" for r in o.results]
            return self.round(outcome="inconclusive", next_recommendation=(
                "inconclusive, no rewrite guessed; collect the missing evidence -> " + " | ".join(failed)))
        if o.stop is not None and o.stop.cause == "at_roofline" and o.chosen is None:
            return self.round(outcome="inconclusive", hypothesis="at the roofline: nothing structural to gain",
                              next_recommendation=f"{AT_ROOFLINE_STOP}: {o.stop.rationale[:300]}")
        return None


def diagnose(setup: RoundSetup, base: Base) -> Diagnosed:
    t0 = time.monotonic()
    setup.progress(RoundStarted(round=base.index, base=base.path.name))
    clock = PhaseClock()
    with stages.span("launches"):
        ladder_eval = (full_size_launches(setup, base.path, base.evaluation, clock) if setup.backend == "interpreter"
                       else base.evaluation)
    ctx = setup.ladder_context(base.path, ladder_eval, clock, history=list(base.history),
                               exclude_cards=set(setup.exhausted), require_recipe=base.require_recipe,
                               baseline_ms=base.baseline_ms)
    with stages.span("ladder"):
        outcome = run_ladder(ctx, max_level=setup.settings.max_level)
    setup.progress(LadderDone(round=base.index, summary=outcome.summary(), levels=tuple(outcome.levels_reached)))
    return Diagnosed(base=base, ctx=ctx, outcome=outcome, clock=clock, started=t0)


def full_size_launches(setup: RoundSetup, path: Path, ev: Evaluation, clock: PhaseClock) -> Evaluation:
    """On the interpreter a base's launches are those of the smoke cases (tiny grids, other divisibility); the
    ladder and the recipes read the first full-size case's launches instead, recorded without executing a kernel
    as ``ladder diagnose`` does, once per base. The validation and timing records stay the smoke cases'."""
    key = hashlib.sha256(path.read_bytes()).hexdigest()
    if key not in setup.launch_memo:
        t0 = time.monotonic()
        launches, _note, case = setup.record_launches(path, representative_case(setup.problem))  # as diagnose does
        clock.add("other", time.monotonic() - t0)
        setup.launch_memo[key] = (launches, case)
    launches, case = setup.launch_memo[key]
    if not launches:
        return ev
    setup.cache[keys.LAUNCH_CASE] = case
    return dataclasses.replace(ev, launches=launches)
