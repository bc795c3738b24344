"""Shared types of the diagnosis ladder: the context a level reads, and the result it returns.

Every level implements ONE protocol, ``LadderLevel.run(ctx) -> LevelResult``. A ``LevelResult`` carries the
same objects a ``kb.models.Round`` records (``EvidenceItem``, ``EscalationTests``, the bottleneck class and the
matched card ids), so ``ladder diagnose`` prints exactly what ``ladder optimize`` stores.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from kb.client import KBClient
from kb.errors import log_error
from kb.models import EscalationTests, EvidenceItem, Round
from kb.models.search import SearchHit
from kb.vocab import Backend, BottleneckClass, Level, is_backend
from optimizer.harness.evaluation import Evaluation
from optimizer.harness.problem import Problem
from optimizer.ladder import keys
from optimizer.ladder.decide import Decision
from optimizer.ladder.findings import Finding
from optimizer.phases import PhaseClock
from optimizer.settings import LadderSettings

if TYPE_CHECKING:
    from optimizer.ir import IRReport

log = logging.getLogger(__name__)

__all__ = ["EVIDENCE_SOURCES", "CardRef", "LadderContext", "LadderLevel", "LevelResult", "card_ref"]

#: Where a localized bottleneck class may come from: measured (L2), IR attribution (L3), compiler (L4).
#: Code features alone never localize a class.
EVIDENCE_SOURCES = frozenset({"measured", "ir", "compiler"})


class CardRef(BaseModel):
    """A matched card as a level reports it (the full card stays in the KB)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    kind: str
    title: str
    summary: str = ""
    score: float = 0.0
    matched_symptoms: list[str] = Field(default_factory=list)
    recipe: dict[str, Any] | None = None
    rewrite: str = ""
    bottleneck_classes: list[str] = Field(default_factory=list)
    ir_signatures: list[str] = Field(default_factory=list)
    related: list[str] = Field(default_factory=list)
    applicable: bool | None = Field(
        default=None, description="dry-run of the recipe on this candidate (offline proposer)"
    )
    applicability_note: str = ""


def card_ref(hit: SearchHit) -> CardRef:
    c = hit.card
    recipe = c.rewrite.recipe.model_dump() if c.rewrite and c.rewrite.recipe else None
    return CardRef(
        id=c.id, kind=c.kind, title=c.title, summary=c.summary, score=round(float(hit.score), 4),
        matched_symptoms=list(hit.breakdown.matched_symptoms), recipe=recipe,
        rewrite=c.rewrite.description if c.rewrite else "", bottleneck_classes=list(c.symptoms.bottleneck_classes),
        ir_signatures=list(c.symptoms.ir_signatures), related=list(c.related),
    )


class LevelResult(BaseModel):
    """What one level found: evidence, a bottleneck class, matched cards, and its escalation tests."""

    model_config = ConfigDict(extra="forbid")

    level: Level
    evidence: list[EvidenceItem] = Field(default_factory=list)
    bottleneck: BottleneckClass = "unknown"
    matched_cards: list[CardRef] = Field(default_factory=list)
    tests: EscalationTests
    chosen: CardRef | None = Field(default=None, description="the one rewrite family, when test (2) passed")
    best: CardRef | None = Field(
        default=None,
        description="the best-supported eligible family that matches this level's "
        "evidence, even when test (2) did not single it out (the engine's fallback)",
    )
    inconclusive: bool = Field(default=False, description="the level produced nothing actionable")
    rationale: str = ""
    data: dict[str, Any] = Field(default_factory=dict, description="level-specific figures (profile, IR report ...)")
    findings: list[Finding] = Field(
        default_factory=list, description="cause hypotheses of this level with their evidence"
    )
    decision: Decision | None = Field(default=None, description="the cause decision over all findings up to this level")

    @property
    def passed(self) -> bool:
        return self.tests.passed


@dataclass
class LadderContext:
    """Everything a level may read. Levels append to ``results`` through the engine, never edit history."""

    problem: Problem
    candidate: Path
    backend: str
    kb: KBClient
    settings: LadderSettings
    evaluation: Evaluation | None = None
    history: list[Round] = field(default_factory=list)
    results: list[LevelResult] = field(default_factory=list)
    exclude_cards: set[str] = field(default_factory=set)
    require_recipe: bool = True
    workdir: Path | None = None
    cache: dict[str, Any] = field(default_factory=dict)
    baseline_ms: dict[str, float] = field(default_factory=dict)
    phases: PhaseClock = field(default_factory=PhaseClock)

    @property
    def source(self) -> str:
        return self.candidate.read_text()

    @property
    def source_sha(self) -> str:
        return hashlib.sha256(self.candidate.read_bytes()).hexdigest()[:16]

    @property
    def kb_backend(self) -> Backend:
        """The KB's backend for this run's (the interpreter runs CUDA kernels); a ValueError for one the KB does not
        know (the KB's queries rejected it the same way)."""
        b = "cuda" if self.backend == "interpreter" else self.backend
        if not is_backend(b):
            raise ValueError(f"backend {b!r} is not a KB backend")
        return b

    @property
    def ir_target(self) -> str:
        return self.settings.ir_target or ("ascend" if self.backend == "ascend" else "cuda:90")

    def ir_report(self) -> IRReport:
        """The hot kernel's IR report (``optimizer.ir.capture_report``: this context's memory, else the disk cache
        under ``settings.cache_dir``, else captured now); raises on toolchain errors. A capture started by
        ``prefetch_ir`` is joined first (the wait is timed as ``ir_capture``), so its report comes from the disk."""
        from optimizer.ir import capture_report

        pending = self.cache.get(keys.ir_prefetch(self.source_sha))
        if isinstance(pending, threading.Thread) and pending.is_alive():
            with self.phases.time("ir_capture"):
                pending.join()
        return capture_report(self.evaluation.launches if self.evaluation else [], memo=self.cache,
                              hot_kernel=self.cache.get(keys.HOT_KERNEL), clock=self.phases, **self._capture_args())

    def _capture_args(self) -> dict[str, Any]:
        """What ``capture_report`` needs beyond the launches and the memo (the same for the level and the prefetch)."""
        return {"target": self.ir_target, "cache_dir": self.settings.cache_dir, "memo_key": keys.ir(self.source_sha),
                "case": self.cache.get(keys.LOST_CASE),
                # a dry record's autotuner kept its first config: diagnose one whose compile is bounded
                "prefer_budget": self.backend == "interpreter",
                "timeout_s": min(600.0, self.settings.sandbox_timeout_s * 2),
                "workdir": self.workdir / "ir" if self.workdir else None}

    def prefetch_ir(self) -> bool:
        """Start the hot kernel's IR capture in a background thread, so its CPU work (a compile in a subprocess,
        ~4-5 s on the H200 host) overlaps L2's GPU profiling. Only when the hot kernel is unambiguous (one launched
        kernel) and the report is not known yet; a failure is left for ``ir_report`` to raise. Returns whether a
        capture was started."""
        from optimizer.ir import capture_report

        sha = self.source_sha
        if self.evaluation is None or keys.ir(sha) in self.cache or keys.ir_prefetch(sha) in self.cache:
            return False
        launches = [r for r in self.evaluation.launches if r.get("kernel") and "error" not in r]
        if len({r["kernel"] for r in launches}) != 1:
            return False
        kwargs = self._capture_args()

        def capture() -> None:
            try:
                capture_report(launches, memo={}, **kwargs)
            except Exception as exc:  # noqa: BLE001 -- thread boundary: the level's own ir_report() call captures
                # again and reports it
                log_error(log, exc, f"the IR prefetch of {sha[:8]}", level=logging.DEBUG)

        worker = threading.Thread(target=capture, name=f"ir-prefetch-{sha[:8]}", daemon=True)
        self.cache[keys.ir_prefetch(sha)] = worker
        worker.start()
        return True

    def previous(self, level: Level) -> LevelResult | None:
        return next((r for r in reversed(self.results) if r.level == level), None)

    def known_bottleneck(self) -> tuple[BottleneckClass, str]:
        """The latest localized bottleneck: from this round's levels, else from earlier rounds' evidence."""
        for r in reversed(self.results):
            if (
                r.bottleneck != "unknown"
                and r.tests.localized
                and r.data.get("bottleneck_source", "measured") in EVIDENCE_SOURCES
            ):
                return r.bottleneck, f"{r.level} of this round"
        for rnd in reversed(self.history):
            for ev in reversed(rnd.evidence):
                if ev.kind == "bottleneck" and ev.data.get("localized") and ev.data.get("source") in EVIDENCE_SOURCES:
                    return ev.data["class"], f"round {rnd.index} ({ev.level}, {ev.data.get('source')})"
        return "unknown", ""

    def known_signatures(self) -> list[str]:
        """IR signatures detected at L3 in this round or earlier rounds."""
        out: list[str] = []
        for r in self.results:
            out += r.data.get("signatures", [])
        for rnd in self.history:
            for ev in rnd.evidence:
                if ev.kind == "ir_signature":
                    out.append(ev.reference)
        return list(dict.fromkeys(out))


class LadderLevel(Protocol):
    level: Level

    def run(self, ctx: LadderContext) -> LevelResult: ...
