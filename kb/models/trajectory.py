"""Trajectory and round models: everything a ladder round must record (DESIGN "The ladder")."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kb.models.cause import Cause
from kb.vocab import Backend, BottleneckClass, Level

__all__ = [
    "VOLATILE_ROUND_FIELDS",
    "AppliedRecipe",
    "CaseTiming",
    "CaseValidation",
    "EscalationTests",
    "EvidenceItem",
    "NoiseFloor",
    "Outcome",
    "ProblemRef",
    "RatioCI",
    "Round",
    "RoundRewrite",
    "Selection",
    "StopDecision",
    "TargetEffect",
    "Timing",
    "TimingProtocol",
    "Trajectory",
    "UnseenReport",
    "Validation",
    "content_digest",
]

#: Round fields that say when and where a round ran, not what it found: left out of content hashes.
#: ``stages`` is wall-clock accounting, new with issue 31: left out so that content hashes of earlier trajectories stay
VOLATILE_ROUND_FIELDS = frozenset({"started_at", "duration_s", "candidate_path", "stages"})

Outcome = Literal["baseline", "improved", "neutral", "regressed", "failed", "inconclusive"]


def _now() -> datetime:
    return datetime.now(timezone.utc)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EvidenceItem(_Model):
    level: Level
    kind: str = Field(description="e.g. quick_match, timing, roofline, profiler, ncu, msprof, ir_signature, invariant")
    reference: str = Field(default="", description="file, card id, pass name, counter name ...")
    summary: str
    data: dict[str, Any] = Field(default_factory=dict)


class AppliedRecipe(BaseModel):
    """The typed record of ``RoundRewrite.recipe``: the recipe a round's rewrite followed (a card's ``kind``,
    ``params``, ``requires``, ``forbids``, or ``kind="llm"`` with the model), the point it ``applied``, the sha256 of
    the ``base`` candidate it was applied to and the points ``screened`` beside it within the round.

    ``record()`` is the dict a trajectory stores, with the keys that were given only, so trajectories read as before;
    ``of(record)`` reads one back, including records of older versions, and keeps keys it does not know."""

    model_config = ConfigDict(extra="allow", frozen=True)

    kind: str = ""
    params: dict[str, Any] = Field(default_factory=dict)
    requires: list[str] = Field(default_factory=list)
    forbids: list[str] = Field(default_factory=list)
    applied: dict[str, Any] | None = None
    base: str | None = None
    screened: list[dict[str, Any] | None] | None = None

    @classmethod
    def of(cls, record: dict[str, Any]) -> AppliedRecipe:
        return cls.model_validate(record)

    def record(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)

    def with_screened(self, points: list[dict[str, Any] | None]) -> AppliedRecipe:
        """This record with the points screened in its round (the applied one among them)."""
        return AppliedRecipe.of({**self.record(), "screened": points})


class RoundRewrite(_Model):
    family: str = Field(description="pattern card id (or a new family name) the rewrite belongs to")
    recipe: dict[str, Any] = Field(default_factory=dict)  # AppliedRecipe.record(): read it with AppliedRecipe.of
    diff: str = ""
    description: str = ""


class CaseValidation(_Model):
    case: str
    passed: bool
    seeds: list[int] = Field(default_factory=list)
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    message: str = ""


class Validation(_Model):
    passed: bool
    cases: list[CaseValidation] = Field(default_factory=list)
    hack_flags: list[str] = Field(default_factory=list, description="catalogue codes of hack checks that fired")
    failure_reason: str = ""


class TimingProtocol(_Model):
    method: str = Field(description="e.g. do_bench-median, interleaved-blocks, unavailable-interpreter")
    warmup: int = 0
    reps: int = 0
    l2_flush: bool = False
    device: str = ""
    authority_metric: str = "geomean_speedup_vs_initial"
    note: str = ""
    blocks: int = Field(default=0, description="interleaved timing blocks per case (0: one do_bench per kernel, old protocol)")
    graph_below_us: float | None = Field(default=None, description="kernels faster than this are timed with CUDA graphs")
    confidence: float | None = Field(default=None, description="level of the confidence intervals, e.g. 0.95")


class RatioCI(_Model):
    """A speedup (reference time / candidate time) with its bootstrap confidence interval."""

    point: float
    lo: float
    hi: float
    blocks: int = 0

    def clears(self, margin: float) -> int:
        """+1 when the whole interval is above 1+margin, -1 when it is below 1/(1+margin), else 0."""
        if self.lo > 1 + margin:
            return 1
        if self.hi < 1 / (1 + margin):
            return -1
        return 0


class CaseTiming(_Model):
    case: str
    ms: float | None = None
    baseline_ms: float | None = None
    roofline_fraction: float | None = None
    speedup_ci: RatioCI | None = Field(default=None, description="speedup vs the initial candidate, interleaved blocks")
    method: str = Field(default="", description="do_bench or cudagraph for this case")
    method_note: str = Field(default="", description="how the method was chosen (or why CUDA-graph timing fell back)")
    host_ms: float | None = Field(default=None, description="wall time per call from Python at steady state (what an "
                                  "eager loop sees; ms is the device time)")
    baseline_host_ms: float | None = Field(default=None, description="the same for the comparison target")
    launch_ms: float | None = Field(default=None, description="host time per call spent launching (before a sync)")


class Timing(_Model):
    protocol: TimingProtocol
    cases: list[CaseTiming] = Field(default_factory=list)
    geomean_speedup: float | None = Field(default=None, description="None when timing is unavailable")
    geomean_ci: RatioCI | None = Field(default=None, description="the geomean speedup vs initial with its interval")
    vs_base: RatioCI | None = Field(default=None, description="geomean speedup vs the round's base (the verdict's ratio)")
    verdict: str = Field(default="", description="how the outcome followed from the interval and the noise floor")
    host_regressed: list[str] = Field(default_factory=list, description="cases whose host wall time per call got worse "
                                      "than the comparison target's by more than 10% (device time decides; this flags)")


class NoiseFloor(_Model):
    """A/A: the baseline timed against itself, interleaved; ``floor`` is the relative half-width that counts as noise."""

    floor: float = Field(ge=0, description="relative noise: exp(max |log| of the A/A geomean interval ends) - 1")
    aa: RatioCI
    cases: dict[str, RatioCI] = Field(default_factory=dict)
    method: str = ""


class CaseMethod(_Model):
    """How one case is timed for a whole session: chosen once from the initial kernel, then fixed."""

    method: Literal["do_bench", "cudagraph"]
    decided_ms: float | None = Field(default=None, description="the initial kernel's first do_bench median (ms)")
    note: str = ""
    unseen: bool = Field(default=False, description="an unseen case (chosen when the unseen cases were first timed)")


class Selection(_Model):
    """The winner re-timed interleaved with the initial candidate before it is selected."""

    round: int | None = Field(description="the selected round (0: no candidate confirmed a gain)")
    confirmed: dict[int, RatioCI] = Field(default_factory=dict, description="round -> re-timed geomean speedup vs initial")
    note: str = ""


class UnseenReport(_Model):
    """The selected best validated and timed on UNSEEN_CASES (cases the session never saw)."""

    cases: list[dict[str, Any]] = Field(default_factory=list, description="the unseen cases that were run")
    source: str = Field(default="declared", description="declared: the problem's UNSEEN_CASES; derived: a case the session "
                        "derived from the largest seen one (run only where the initial kernel validates on it)")
    skipped: list[dict[str, Any]] = Field(default_factory=list, description="cases too large for this backend (interpreter)")
    passed: bool | None = Field(default=None, description="None when no unseen case could run on this backend")
    failure_reason: str = ""
    note: str = ""
    seen_speedup: float | None = None
    unseen_speedup: float | None = None
    unseen_ci: RatioCI | None = None
    kept_fraction: float | None = Field(default=None, description="unseen speedup / seen speedup (target >= 0.9)")
    flags: list[str] = Field(default_factory=list, description="fails_unseen, regresses_unseen, loses_gain_unseen")
    validation: Validation | None = None
    timing: Timing | None = None


class EscalationTests(_Model):
    """The three stop tests of the escalation policy; a level may stop only if all three pass."""

    localized: bool = Field(description="(1) a dominant hotspot/bottleneck class is localized for the cases that matter")
    single_family: bool = Field(description="(2) the next change is narrowed to ONE evidence-backed rewrite family")
    justified: bool = Field(description="(3) that rewrite is justified from evidence at this level")
    notes: str = ""

    @property
    def passed(self) -> bool:
        return self.localized and self.single_family and self.justified


class StopDecision(_Model):
    level: Level
    tests: EscalationTests
    rationale: str
    bottleneck: BottleneckClass = "unknown"
    cause: Cause = Field(default="unknown", description="the decided cause (issue 'Evidence decides'): a cause id the KB "
                         "knows (ListCauses); unknown in older rounds")
    confidence: float | None = None
    decided_by: list[str] = Field(default_factory=list, description="the evidence that decided (level kind reference lines)")
    overruled: list[str] = Field(default_factory=list, description="evidence that pointed elsewhere and lost")
    static_only: bool = Field(default=False, description="decided without any measurement (CPU: code + IR only)")


class TargetEffect(_Model):
    """Whether a round's rewrite removed the inefficiency its decided cause names (issue "Causes beyond the list",
    item 4): the measured-account parts the cause explains, in ms, on the base and on the candidate, at one case."""

    cause: Cause
    case: str = ""
    kinds: list[str] = Field(default_factory=list, description="the account parts the cause explains (on the base)")
    before_ms: float = Field(ge=0.0, description="those parts' time on the base")
    after_ms: float = Field(ge=0.0, description="the same parts' time on the candidate")
    before_gap_ms: float | None = None
    after_gap_ms: float | None = None
    verdict: Literal["removed", "reduced", "unchanged", "grew", "not_measured"]
    note: str = ""


class Round(_Model):
    index: int = Field(ge=0)
    levels_reached: list[Level] = Field(default_factory=list)
    hypothesis: str = ""
    evidence: list[EvidenceItem] = Field(default_factory=list)
    cards_cited: list[str] = Field(default_factory=list)
    rewrite: RoundRewrite | None = None
    comparison_target: str = Field(default="initial", description="what the speedup is measured against")
    validation: Validation | None = None
    timing: Timing | None = None
    outcome: Outcome
    stop: StopDecision | None = None
    target: TargetEffect | None = Field(default=None, description="the targeted inefficiency before and after the "
                                        "rewrite (GPU with ncu and settings.ncu_account only)")
    next_recommendation: str = ""
    candidate_path: str = ""
    started_at: datetime = Field(default_factory=_now)
    duration_s: float = 0.0
    phase_s: dict[str, float] = Field(default_factory=dict, description="seconds per phase: compile, validation, timing, "
                                      "profiler, ncu, ir_capture, kb, process_start, proposer, other")
    stages: dict[str, float] = Field(default_factory=dict, description="the parent's wall-clock seconds per stage "
                                     "(optimizer.harness.stages): top-level stages (launches, ladder, proposer, screen, "
                                     "evaluate, persist, progress) and 'other' sum to duration_s; nested ones "
                                     "('evaluate/judge', 'evaluate/judge/spawn' ...) break their parent down")

    @property
    def level(self) -> Level | None:
        return self.levels_reached[-1] if self.levels_reached else None

    def content(self) -> dict[str, Any]:
        """What the round found, as JSON data: every field but the volatile ones and its index."""
        doc = self.model_dump(mode="json", exclude=set(VOLATILE_ROUND_FIELDS | {"index"}))
        if doc.get("target") is None:  # new with issue 30: absent, it leaves earlier rounds' content hashes as they were
            doc.pop("target", None)
        return doc


class ProblemRef(_Model):
    name: str
    path: str = ""
    sha256: str = ""
    cases: list[dict[str, Any]] = Field(default_factory=list)


class Trajectory(_Model):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]{2,127}$")
    problem: ProblemRef
    backend: Backend | Literal["interpreter"]
    device: str = ""
    proposer: str = "offline"
    rounds: list[Round] = Field(default_factory=list)
    best_round: int | None = None
    initial_ms: float | None = None
    best_ms: float | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=_now)
    finished: bool = False
    noise_floor: NoiseFloor | None = None
    selection: Selection | None = None
    unseen: UnseenReport | None = None
    timing_env: dict[str, Any] = Field(default_factory=dict, description="GPU lock key, shared GPU flag ...")
    timing_methods: dict[str, CaseMethod] = Field(default_factory=dict, description="case label -> the device-time "
                                                  "method chosen once at the baseline and used by every timing of it")

    def content_hash(self) -> str:
        """SHA-256 of the evidence this trajectory carries, normalised: its ``id``, ``created_at`` and each round's
        volatile fields (``started_at``, ``duration_s``, ``candidate_path``, ``stages``) are left out, so a copy submitted under
        another id (or re-run at another time with identical results) hashes the same and counts once."""
        doc = self.model_dump(mode="json", exclude={"id", "created_at", "rounds"})
        doc["rounds"] = [{"index": r.index, **r.content()} for r in self.rounds]
        return content_digest(doc)


def content_digest(doc: Any) -> str:
    """SHA-256 hex digest of JSON data in canonical form (sorted keys, no whitespace)."""
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
