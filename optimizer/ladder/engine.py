"""The escalation engine: run L1..L4 in order; a level may stop the ladder only if its three tests pass.

``run_ladder`` records every level's evidence and its three escalation tests (as an ``escalation_tests``
evidence item, so a round stores the result of every test at every level it reached). With
``stop_early=False`` (``ladder diagnose``) all levels up to ``max_level`` run and the outcome still says where
the policy would have stopped. When no level passes, the deepest level that localized a bottleneck AND reported
a best-supported family matching its evidence (``LevelResult.best``; most tests passed first) hands that family
back, with a rationale saying so. Only when no level localized a class with a matching eligible family is the
round inconclusive: no rewrite is guessed.

The ladder policy (``optimizer.ladder.policy``, ``LADDER_POLICY``; the ablation's arms) caps the levels, may keep a
round climbing after a level passed (the deepest passing level then decides) or draw the family at random; the
default ``hierarchical`` policy changes nothing here. A non-default policy is recorded as an L1 ``ladder_policy``
evidence item of every round.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kb.errors import log_error
from kb.models import EscalationTests, EvidenceItem, StopDecision
from kb.vocab import LEVELS, Level
from optimizer.harness import stages
from optimizer.ladder.l1_triage import TriageLevel
from optimizer.ladder.l2_profile import ProfileLevel
from optimizer.ladder.l3_ir import IRLevel
from optimizer.ladder.l4_compiler import CompilerLevel
from optimizer.ladder.policy import LadderPolicy, ladder_policy
from optimizer.ladder.types import CardRef, LadderContext, LadderLevel, LevelResult

log = logging.getLogger(__name__)

__all__ = ["LadderOutcome", "default_levels", "run_ladder"]


def default_levels() -> dict[str, LadderLevel]:
    return {"L1": TriageLevel(), "L2": ProfileLevel(), "L3": IRLevel(), "L4": CompilerLevel()}


@dataclass
class LadderOutcome:
    results: list[LevelResult] = field(default_factory=list)
    stop: StopDecision | None = None
    chosen: CardRef | None = None

    @property
    def inconclusive(self) -> bool:
        return self.stop is None

    @property
    def levels_reached(self) -> list[Level]:
        return [r.level for r in self.results]

    @property
    def evidence(self) -> list[EvidenceItem]:
        return [e for r in self.results for e in r.evidence]

    @property
    def cards_cited(self) -> list[str]:
        ids = [self.chosen.id] if self.chosen else []
        ids += [c.id for r in self.results for c in r.matched_cards]
        return list(dict.fromkeys(ids))

    def summary(self) -> str:
        if self.stop is None:
            return "inconclusive: no level passed all three escalation tests (" + "; ".join(
                f"{r.level} {_marks(r.tests)}" for r in self.results) + ")"
        how = "fell back to" if not self.stop.tests.passed else "stopped at"
        cause = f"cause {self.stop.cause}, " if self.stop.cause != "unknown" else ""
        target = self.chosen.id if self.chosen else ("nothing to gain" if self.stop.cause == "at_roofline" else "?")
        return f"{how} {self.stop.level} ({cause}{self.stop.bottleneck}) -> {target}"


def _marks(t: EscalationTests) -> str:
    return "".join("+" if x else "-" for x in (t.localized, t.single_family, t.justified))


def run_ladder(ctx: LadderContext, *, max_level: Level = "L4", stop_early: bool = True,
               levels: dict[str, LadderLevel] | None = None, policy: LadderPolicy | None = None) -> LadderOutcome:
    levels = levels or default_levels()
    out = LadderOutcome()
    pol = policy or ladder_policy(
        getattr(ctx.settings, "policy", "hierarchical"), getattr(ctx.settings, "policy_seed", 0)
    )
    max_level, stop_early = pol.max_level(max_level), stop_early and pol.stop_early
    if ctx.backend == "cuda" and LEVELS.index(max_level) >= LEVELS.index("L3") and _gpu_present():
        ctx.prefetch_ir()  # the compile for L3 runs on the host's CPU while L2 profiles on the GPU
    for name in LEVELS[: LEVELS.index(max_level) + 1]:
        try:
            with stages.span(name):  # the round's stages break "ladder" down per level (``ladder bench rounds``)
                res = levels[name].run(ctx)
        except Exception as exc:  # noqa: BLE001 - per-level boundary: a level bug must not end the session
            error_id = log_error(log, exc, f"ladder level {name}", level=logging.INFO)
            reason = f"{name} failed (error {error_id}): {type(exc).__name__}: {exc}"[:800]
            res = LevelResult(
                level=name,
                tests=EscalationTests(localized=False, single_family=False, justified=False, notes=reason),
                inconclusive=True,
                rationale=reason,
            )
        res.evidence.append(
            EvidenceItem(
                level=res.level,
                kind="escalation_tests",
                reference=_marks(res.tests),
                summary=(
                    f"localized={res.tests.localized} single_family={res.tests.single_family} "
                    f"justified={res.tests.justified}: {res.tests.notes}"
                )[:2000],
                data=res.tests.model_dump(exclude={"notes"}),
            )
        )  # the notes are the summary: one copy per round
        ctx.results.append(res)
        out.results.append(res)
        if res.passed and (out.stop is None or pol.deepest_decides):
            out.stop = _stop(res, res.rationale)
            out.chosen = res.chosen
            if stop_early:
                break
    if out.stop is None:
        _fallback(out)
    if pol.random_family:
        pol.draw(ctx, out)
    if not pol.default and out.results:
        out.results[0].evidence.append(
            EvidenceItem(
                level="L1",
                kind="ladder_policy",
                reference=pol.name,
                data=pol.model_dump(),
                summary=f"ladder policy {pol.name}: levels {'/'.join(pol.levels(max_level))}",
            )
        )
    return out


def _gpu_present() -> bool:
    """Only a session on a real GPU prefetches (a faked CUDA context on a CPU machine would compile for nothing)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def _fallback(out: LadderOutcome) -> None:
    """No level passed: take the family of the localized level with the most passed tests (deeper wins ties)."""
    cands = [(r, best) for r in out.results if r.tests.localized and (best := r.best) is not None]
    if not cands:
        return
    res, best = max(
        cands,
        key=lambda rb: (sum((rb[0].tests.localized, rb[0].tests.single_family, rb[0].tests.justified)),
                        LEVELS.index(rb[0].level)),
    )
    why = (f"fallback: no level passed all three tests; {res.level} localized {res.bottleneck} and {best.id} "
           f"is its best-supported eligible family ({_marks(res.tests)}): {res.rationale}")[:2000]
    out.stop = _stop(res, why)
    out.chosen = best


def _stop(res: LevelResult, rationale: str) -> StopDecision:
    """The stop record: level, tests, class, and (when a cause was decided) the cause, what decided, what lost."""
    d = res.decision
    if d is None or not d.decided:
        return StopDecision(level=res.level, tests=res.tests, rationale=rationale, bottleneck=res.bottleneck)
    return StopDecision(level=res.level, tests=res.tests, rationale=rationale, bottleneck=res.bottleneck, cause=d.cause,
                        confidence=round(d.confidence, 3), decided_by=[r.label() for r in d.decided_by],
                        overruled=list(d.overruled), static_only=d.static_only)
