"""``Evaluation``: what one evaluation of a candidate found (validation, findings, launches, timing), as the parent
process holds it. Its own module, under both ``optimizer.harness.evaluation`` (which builds it from worker results)
and ``optimizer.harness.compile_check`` (which builds it from a compile-only check), so neither imports the other's
module for the type; ``optimizer.harness.evaluation`` re-exports it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb.models import TimingProtocol, Validation
from optimizer.backend import Backend
from optimizer.harness.contracts import TimingCase
from optimizer.harness.hacks import HackFinding

__all__ = ["Evaluation"]


@dataclass
class Evaluation:
    candidate: Path
    backend: Backend
    status: str  # ok | rejected_static | timeout | crashed | oom | error
    reason: str
    validation: Validation
    findings: list[HackFinding] = field(default_factory=list)
    launches: list[dict[str, Any]] = field(default_factory=list)
    timing_cases: list[TimingCase] = field(default_factory=list)
    protocol: TimingProtocol | None = None
    device: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    duration_s: float = 0.0
    torch_compute_ops: list[str] = field(default_factory=list)
    timing_error: str = ""
    static_only: bool = False  # compiled for the GPU, never executed (CPU_VALIDATION / interpreter limits)
    phase_s: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:  # timing cases given as JSON (recorded runs, tests) are read into the model
        self.timing_cases = [TimingCase.model_validate(c) for c in self.timing_cases]

    @property
    def passed(self) -> bool:
        return self.validation.passed

    @property
    def failure_kind(self) -> str:
        """Short cause of a failure: timeout, crashed, oom, compile_error, mismatch, nan, wrong_shape, a hack
        code ..."""
        if self.passed:
            return ""
        if self.status == "rejected_static":
            return next((f.code for f in self.findings if f.severity == "reject"), "rejected_static")
        if self.status != "ok":
            return self.status if self.status != "error" else self.reason.split(" ", 1)[0].rstrip(":")
        m = re.match(r"\[[^\]]*\]\s*([a-z_0-9]+):", self.validation.failure_reason)
        if m:
            return m.group(1)
        return next((f.code for f in self.findings if f.severity == "reject"), "failed")

    def case_ms(self) -> dict[str, float]:
        return {c.case: c.stats.median_ms for c in self.timing_cases}

    def blocks(self, role: str) -> dict[str, list[float]]:
        """Per case, the interleaved block medians of ``role`` (candidate, initial, base, aa); empty if not timed."""
        return {c.case: c.blocks[role] for c in self.timing_cases if role in c.blocks}

    def pairs(self, ref_role: str, cand_role: str = "candidate") -> dict[str, tuple[list[float], list[float]]]:
        """Per case ``(ref blocks, cand blocks)`` for ``optimizer.harness.verdict`` (only cases where both were
        timed)."""
        ref, cand = self.blocks(ref_role), self.blocks(cand_role)
        return {k: (ref[k], cand[k]) for k in ref if k in cand}

    def reference_ms(self) -> dict[str, float]:
        return {c.case: c.reference_stats.median_ms for c in self.timing_cases if c.reference_stats is not None}
