"""Typed findings: cause hypotheses with their supporting and refuting evidence (issue "Evidence decides").

A *class* says what the counters see (``memory_bound``); a *cause* says why the kernel is slow and therefore which
rewrite removes it (``per_element_grid`` -> one program per block). Every level turns what it measured or read
into ``Finding`` objects over the shared taxonomy ``kb.vocab.Cause``; ``optimizer.ladder.decide`` combines them.

A finding is *structural* when it is tied to the kernel's code: a code feature at a source line (L1) or an IR
signature attributed to source lines (L3). Measured findings (L2) come from counters and timings. Refutations
are evidence too: "wgmma in the final TTGIR" refutes an FMA-dot hypothesis, "0 B of ptxas spills" refutes a
spill hypothesis.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kb.vocab import Cause, Level

__all__ = ["EvidenceRef", "Finding", "RefKind"]

RefKind = Literal[
    "code_feature",
    "ir_signature",
    "counter",
    "roofline",
    "timing",
    "launch",
    "invariant",
    "recipe_refusal",
    "class",
    "gap_account",
]


class EvidenceRef(BaseModel):
    """One piece of evidence a finding rests on, with where to look (token, signature, counter, card id)."""

    model_config = ConfigDict(extra="forbid")

    level: Level
    kind: RefKind
    reference: str = Field(description="feature token, IR signature name, counter name, card id ...")
    detail: str = ""
    source_lines: list[int] = Field(default_factory=list, description="candidate source lines, when known")

    def label(self) -> str:
        lines = f" (lines {', '.join(map(str, self.source_lines[:6]))})" if self.source_lines else ""
        return f"{self.level} {self.kind} {self.reference}{lines}"


class Finding(BaseModel):
    """A cause hypothesis from one level: confidence in [0, 1], its evidence for and against."""

    model_config = ConfigDict(extra="forbid")

    cause: Cause
    level: Level
    confidence: float = Field(ge=0.0, le=1.0)
    structural: bool = Field(
        default=False, description="tied to the code: a source-line feature or an attributed IR signature"
    )
    supporting: list[EvidenceRef] = Field(default_factory=list)
    refuting: list[EvidenceRef] = Field(default_factory=list)
    refute_strength: float = Field(default=0.0, ge=0.0, le=1.0, description="how strongly the refuting evidence counts")
    summary: str = ""

    @property
    def source_lines(self) -> list[int]:
        return sorted({n for r in self.supporting for n in r.source_lines})

    def describe(self) -> str:
        lines = self.source_lines
        at = f" at lines {lines[:6]}" if lines else ""
        return f"{self.cause} ({self.level}, {self.confidence:.2f}){at}: {self.summary}"
