"""Trajectory and round models: everything a ladder round must record (DESIGN "The ladder")."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kb.vocab import Backend, BottleneckClass, Level

__all__ = [
    "VOLATILE_ROUND_FIELDS",
    "CaseTiming",
    "CaseValidation",
    "EscalationTests",
    "EvidenceItem",
    "Outcome",
    "ProblemRef",
    "Round",
    "RoundRewrite",
    "StopDecision",
    "Timing",
    "TimingProtocol",
    "Trajectory",
    "Validation",
    "content_digest",
]

#: Round fields that say when and where a round ran, not what it found: left out of content hashes.
VOLATILE_ROUND_FIELDS = frozenset({"started_at", "duration_s", "candidate_path"})

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


class RoundRewrite(_Model):
    family: str = Field(description="pattern card id (or a new family name) the rewrite belongs to")
    recipe: dict[str, Any] = Field(default_factory=dict)
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
    method: str = Field(description="e.g. do_bench-median, unavailable-interpreter")
    warmup: int = 0
    reps: int = 0
    l2_flush: bool = False
    device: str = ""
    authority_metric: str = "geomean_speedup_vs_initial"
    note: str = ""


class CaseTiming(_Model):
    case: str
    ms: float | None = None
    baseline_ms: float | None = None
    roofline_fraction: float | None = None


class Timing(_Model):
    protocol: TimingProtocol
    cases: list[CaseTiming] = Field(default_factory=list)
    geomean_speedup: float | None = Field(default=None, description="None when timing is unavailable")


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
    next_recommendation: str = ""
    candidate_path: str = ""
    started_at: datetime = Field(default_factory=_now)
    duration_s: float = 0.0

    @property
    def level(self) -> Level | None:
        return self.levels_reached[-1] if self.levels_reached else None

    def content(self) -> dict[str, Any]:
        """What the round found, as JSON data: every field but the volatile ones and its index."""
        return self.model_dump(mode="json", exclude=VOLATILE_ROUND_FIELDS | {"index"})


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

    def content_hash(self) -> str:
        """SHA-256 of the evidence this trajectory carries, normalised: its ``id``, ``created_at`` and each round's
        volatile fields (``started_at``, ``duration_s``, ``candidate_path``) are left out, so a copy submitted under
        another id (or re-run at another time with identical results) hashes the same and counts once."""
        doc = self.model_dump(mode="json", exclude={"id", "created_at", "rounds"})
        doc["rounds"] = [{"index": r.index, **r.content()} for r in self.rounds]
        return content_digest(doc)


def content_digest(doc: Any) -> str:
    """SHA-256 hex digest of JSON data in canonical form (sorted keys, no whitespace)."""
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
