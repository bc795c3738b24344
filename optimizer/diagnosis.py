"""Diagnosis without rewriting (``ladder diagnose``): validate (and time) a candidate, then run every ladder level
up to ``max_level`` without stopping early. The result is a typed :class:`Diagnosis`; its JSON (``--json``,
``Diagnosis.model_dump(mode="json")``) holds, per level, the same objects a round records.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from kb.client import KBClient
from kb.models import StopDecision, Timing, Validation
from kb.vocab import Level
from optimizer.backend import Backend
from optimizer.ladder.decide import Decision
from optimizer.ladder.findings import Finding
from optimizer.ladder.types import CardRef, LevelResult
from optimizer.rewrite.context import unified_diff

__all__ = ["Diagnosis", "RewritePreview", "diagnose"]

#: Interpreter failures that say "could not execute it here", not "it computes the wrong thing".
_CANNOT_EXECUTE = frozenset({"timeout", "oom", "crashed", "runtime_error", "compile_error", "killed", "memory_limit"})
#: fields the ladder fills; a candidate that does not validate stops before it, and its JSON omits them
_LADDER_FIELDS = ("summary", "causes", "decision", "phase_s", "rewrite")


class RewritePreview(BaseModel):
    """The rewrite the offline proposer would make from this diagnosis (``diagnose(..., rewrite=True)``): the
    chosen family's first point as a diff, or why there is none. Nothing is validated or timed here."""

    family: str = ""
    kind: str = Field(default="", description="the recipe kind (a structural transform or a launch recipe)")
    applied_kind: str = Field(default="", description="the kind that made the first point: the recipe kind, or the "
                              "launch recipe a composite fell back to (register-spill relief's launch search)")
    description: str = ""
    diff: str = ""
    source: str = Field(default="", description="the rewritten candidate (first point)")
    points: int = Field(default=0, description="how many points a round would screen (variants, up to 8)")
    refused: str = Field(default="", description="why no rewrite was made (no family chosen, recipe refused ...)")


class Diagnosis(BaseModel):
    """What ``diagnose`` found. ``error`` is set (and the ladder fields are left out of the JSON) when the candidate
    does not validate."""

    problem: str
    candidate: Path
    backend: Backend
    device: str = ""
    versions: dict[str, str] = Field(default_factory=dict)
    validation: Validation
    timing: Timing
    levels: list[LevelResult] = Field(default_factory=list, description="per level run, in order")
    stop: StopDecision | None = Field(default=None, description="the level that passed all three tests, if any")
    chosen: CardRef | None = Field(default=None, description="the one rewrite family the ladder would apply")
    static_only: bool = Field(default=False, description="no measurement (interpreter, or compiled but not run)")
    notes: list[str] = Field(default_factory=list)
    error: str | None = Field(default=None, description="why the ladder did not run (the candidate does not validate)")
    summary: str = ""
    causes: list[Finding] = Field(default_factory=list, description="every level's cause findings")
    decision: Decision | None = Field(default=None, description="the cause decision of the last level that made one")
    phase_s: dict[str, float] = Field(default_factory=dict, description="wall seconds per phase (PhaseClock)")
    rewrite: RewritePreview | None = Field(default=None, description="the rewrite the offline proposer would make "
                                           "(only when asked: diagnose(..., rewrite=True), ladder diagnose --rewrite)")

    @model_serializer(mode="wrap")
    def _shape(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = handler(self)
        for key in _LADDER_FIELDS if self.error is not None else ("error",):
            out.pop(key, None)
        return out


def diagnose(problem: str | Path, candidate: str | Path | None, *, backend: str | None, max_level: Level, kb: KBClient,
             workdir: str | Path | None = None, validate: bool = True, rewrite: bool = False,
             recorded_timing: dict[str, Any] | None = None) -> Diagnosis:
    """Validate (and time) the candidate, then run the ladder up to ``max_level`` without stopping early.

    ``rewrite``: also ask the offline proposer for the rewrite a round would make (``Diagnosis.rewrite``).
    ``recorded_timing``: ``{"device", "case_ms", "source"}`` measured earlier for this exact candidate source
    (``ladder.keys.RECORDED_TIMING``); a static diagnosis reads its roofline fractions from it."""
    from optimizer.backend import check_backend
    from optimizer.harness.evaluation import Evaluation
    from optimizer.ladder import keys
    from optimizer.ladder.cases import HEADROOM_RULE, autotuned_note, headroom_case, representative_case
    from optimizer.ladder.cases import RULE as CASE_RULE
    from optimizer.ladder.engine import run_ladder
    from optimizer.phases import PhaseClock
    from optimizer.round.context import RoundSetup
    from optimizer.settings import LadderSettings

    t_start = time.perf_counter()
    clock = PhaseClock()
    settings = LadderSettings()
    be = check_backend(backend)
    setup = RoundSetup.open(problem, candidate, backend=be, settings=settings, kb=kb, workdir=Path(workdir or "."))
    prob, cand = setup.problem, setup.candidate
    if validate or be != "interpreter":
        ev = setup.evaluate(cand)
        clock.merge(ev.phase_s)
    else:  # static diagnosis only (the labelled benchmark validates its kernels in its own tests)
        ev = Evaluation(candidate=cand, backend=be, status="ok", reason="", validation=Validation(passed=True))
    timing = setup.timing(ev, ev.case_ms())
    out = Diagnosis(problem=prob.name, candidate=cand, backend=be, device=ev.device, versions=ev.versions,
                    validation=ev.validation, timing=timing, static_only=ev.static_only or be == "interpreter")
    if not ev.passed:
        if be != "interpreter" or ev.failure_kind not in _CANNOT_EXECUTE:
            out.error = f"the candidate does not validate ({ev.failure_kind}); fix it before diagnosing"
            return out
        # the interpreter could not execute it (time, memory, libdevice ...): L1 and L3 need no execution
        out.notes.append(f"static only: the interpreter could not validate the candidate ({ev.failure_kind}: "
                         f"{ev.reason[:200]}); L1 and L3 still report, L2 has no measurement")
    if not validate and be == "interpreter":
        out.notes.append("not validated (validate=False): static diagnosis only")
    if be == "interpreter":
        worst = headroom_case(prob, recorded_timing["case_ms"], recorded_timing["device"]) if recorded_timing else None
        rule = f"{HEADROOM_RULE}: {worst[1]:.0%} of it" if worst else CASE_RULE
        launches, note, launch_case = setup.record_launches(cand, worst[0] if worst else representative_case(prob))
        if launches:
            ev.launches = launches  # full-size launch records: L1/L3 see the grid and divisibility of a real case
            setup.cache[keys.LAUNCH_CASE] = launch_case
            out.notes.append(f"static only: L1 and L3 read the launches of case {launch_case} ({rule}), recorded "
                             "without executing any kernel" + (f" ({note})" if note else ""))
            if (tuned := autotuned_note(launches)):
                out.notes.append(tuned)
        elif note:
            out.notes.append(note)
    if recorded_timing:
        setup.cache[keys.RECORDED_TIMING] = recorded_timing
    if not workdir:  # a scratch folder, made only once the ladder runs
        setup.workdir = Path(tempfile.mkdtemp(prefix="ladder-diagnose-"))
    ctx = setup.ladder_context(cand, ev, clock)
    outcome = run_ladder(ctx, max_level=max_level, stop_early=False)
    out.levels = list(outcome.results)
    out.stop, out.chosen = outcome.stop, outcome.chosen
    out.summary = outcome.summary()
    out.causes = [f for r in outcome.results for f in r.findings]
    out.decision = next((r.decision for r in reversed(outcome.results) if r.decision is not None), None)
    if rewrite:
        out.rewrite = _preview_or_next(ctx, outcome)
        if out.rewrite.source:  # a patch of the candidate itself: `git apply` / `patch -p1` from the working directory
            name = patch_path(cand)
            out.rewrite.diff = unified_diff(cand.read_text(), out.rewrite.source, name, name)
    out.phase_s = clock.finish(time.perf_counter() - t_start)
    return out


def patch_path(path: Path) -> str:
    """The name a patch gives ``path``: relative to the working directory when the file lies under it (so `git apply`
    and `patch -p1` find it from there), else the file's name (apply it from the file's folder)."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return Path(path).name


def rewrite_preview(ctx: Any, outcome: Any) -> RewritePreview:
    """The offline proposer's first point for the chosen family (and how many points a round would screen)."""
    from optimizer.proposers.offline import OfflineProposer
    from optimizer.rewrite.errors import NotApplicable

    card = outcome.chosen
    if card is None or outcome.stop is None:
        return RewritePreview(
            refused="the ladder chose no family" + (f" ({outcome.summary()})" if outcome.results else "")
        )
    recipe = card.recipe or {}
    pre = RewritePreview(family=card.id, kind=str(recipe.get("kind", "")))
    name = f"{ctx.candidate.stem}_rewrite.py"
    try:
        props = OfflineProposer().variants(ctx, outcome, new_filename=name, limit=8)
    except NotApplicable as exc:
        pre.refused = str(exc)
        return pre
    first = props[0]
    pre.description, pre.diff, pre.source, pre.points = first.description, first.diff, first.source, len(props)
    pre.applied_kind = str((first.recipe.applied or {}).get("via") or pre.kind)
    return pre


def _next_families(outcome: Any) -> list[Any]:
    """Cards a round could act on after the chosen one: every level's matched cards with a recipe, in level order."""
    seen = {outcome.chosen.id} if outcome.chosen is not None else set()
    out = []
    for r in outcome.results:
        for c in r.matched_cards:
            if c.id not in seen and c.recipe and c.applicable is not False:
                seen.add(c.id)
                out.append(c)
    return out


def _preview_or_next(ctx: Any, outcome: Any) -> RewritePreview:
    """``rewrite_preview``, and when the chosen family's every point is a no-op (it cannot change what runs), the next
    family's first point, saying which family was refused and why."""
    pre = rewrite_preview(ctx, outcome)
    if "no-op:" not in pre.refused:
        return pre
    for card in _next_families(outcome):
        nxt = rewrite_preview(ctx, dataclasses.replace(outcome, chosen=card))
        if not nxt.refused:
            nxt.description = f"{pre.family} refused ({pre.refused[:300]}); next family {card.id}: {nxt.description}"
            return nxt
    return pre
