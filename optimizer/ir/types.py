"""Typed results of the IR engine: captures (L3 input), reports (L3 output) and L4 accounts.

``Capture`` holds the raw material (stage texts, per-pass snapshots, remarks, ptxas figures) and lives on
disk in its work directory; ``IRReport`` is the compact, JSON-printable analysis (``ladder ir --json``);
``L4Account`` is the compiler-level explanation built from invariant cards and compiler source.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kb.vocab import Backend, IRSignature

__all__ = [
    "FRONTEND",
    "Capture",
    "CompilerSourceRef",
    "IRReport",
    "KernelArg",
    "L4Account",
    "L4Finding",
    "L4Question",
    "PassChange",
    "PassSnapshot",
    "Remark",
    "ResourceUsage",
    "Signature",
    "StageSummary",
    "Target",
]

#: Pseudo pass name for IR that already exists when the first pass runs (made by the AST -> TTIR code generator).
FRONTEND = "ast_to_ttir"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Target(_Model):
    """A compile target: ``cuda:90`` -> (cuda, 90, 32); ``ascend`` -> (ascend, Ascend910B3, 0)."""

    backend: Backend
    arch: int | str
    warp_size: int = 32

    @property
    def triton_backend(self) -> str:
        """The backend name Triton's ``GPUTarget`` uses (``npu`` for Ascend)."""
        return {"ascend": "npu", "amd": "hip"}.get(self.backend, self.backend)

    def __str__(self) -> str:
        return f"{self.backend}:{self.arch}"


class KernelArg(_Model):
    """One kernel parameter as compiled: its type, value and what specialization made of it."""

    name: str
    index: int
    type: str
    value: Any = None
    divisibility: int | None = None
    folded_to_constexpr: bool = False
    source: Literal["arg", "default"] = "arg"


class Remark(_Model):
    """An MLIR diagnostic printed with ``MLIR_ENABLE_DIAGNOSTICS=remarks`` (e.g. a vectorization failure)."""

    file: str
    line: int
    column: int = 0
    severity: Literal["remark", "note", "warning", "error"] = "remark"
    kind: str = "other"  # vectorization | mma | pipelining | other
    message: str
    pass_name: str | None = Field(default=None, description="the pass running when it was emitted")
    stage: str = ""


class ResourceUsage(_Model):
    """Per-thread resources from ``ptxas -v``, ``cuobjdump -res-usage`` or, on a GPU, the CUDA driver."""

    registers: int | None = None
    spill_stores_bytes: int | None = None
    spill_loads_bytes: int | None = None
    stack_bytes: int | None = None
    barriers: int | None = None
    shared_bytes: int | None = None
    source: str = ""


class PassSnapshot(_Model):
    """One per-pass dump: the IR *before* ``pass_name`` ran (or after an internal step of it)."""

    index: int
    stage: str = Field(description="the pipeline (Triton stage) that ran the pass: ttir, ttgir, llir, ttadapter ...")
    pass_name: str
    pass_argument: str = ""
    scope: str = "builtin.module"  # 'builtin.module', or e.g. 'tt.func @kernel' for a function-scoped pass
    step: str = ""  # an internal step of the pass (e.g. the software pipeliner's LowerLoops)
    text: str = Field(default="", repr=False)

    @property
    def is_module(self) -> bool:
        return self.scope == "builtin.module" or self.scope == ""


class Capture(_Model):
    """Everything one compile produced, as captured by the worker process."""

    kernel: str
    source_file: Path
    target: Target
    mode: Literal["compile", "launch"] = "compile"
    compiler: str = "triton"
    compiler_version: str = ""
    python: str = ""
    args: list[KernelArg] = Field(default_factory=list)
    options: dict[str, Any] = Field(default_factory=dict)
    stages: dict[str, str] = Field(default_factory=dict, repr=False, description="text stages in pipeline order")
    binaries: dict[str, Path] = Field(default_factory=dict, description="binary stages (cubin, npubin) on disk")
    snapshots: list[PassSnapshot] = Field(default_factory=list, repr=False)
    remarks: list[Remark] = Field(default_factory=list)
    resources: ResourceUsage | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    timings: dict[str, Any] = Field(default_factory=dict)
    ptxas_log: str = ""
    workdir: Path
    launched: bool = False
    device: str | None = None
    warnings: list[str] = Field(default_factory=list)

    @property
    def stage_names(self) -> list[str]:
        return list(self.stages) + [s for s in self.binaries if s not in self.stages]


class StageSummary(_Model):
    """Size and key figures of one stage's IR or assembly."""

    stage: str
    lines: int
    ops: dict[str, int] = Field(default_factory=dict, description="op / instruction kind -> count (top kinds)")
    features: dict[str, int] = Field(default_factory=dict, description="barriers, converts, shared memory ...")
    passes: int = Field(default=0, description="pass snapshots recorded for this stage's pipeline")


class PassChange(_Model):
    """What one pass (or an internal step of it) changed between two adjacent module snapshots."""

    index: int
    pass_name: str
    pass_argument: str = ""
    step: str = ""
    stage: str
    changed: bool
    added: dict[str, int] = Field(default_factory=dict)
    removed: dict[str, int] = Field(default_factory=dict)
    features_delta: dict[str, int] = Field(default_factory=dict)
    nested: list[str] = Field(default_factory=list, description="function-scoped passes folded into this change")


class Signature(_Model):
    """A structural signature, its count, where it appeared and which source lines it maps to."""

    name: IRSignature
    count: int
    stage: str = Field(description="the stage where it was detected (ttgir, ptx, cubin, ttadapter ...)")
    pass_introduced: str | None = Field(default=None, description=f"pass that introduced it ({FRONTEND} = frontend)")
    pass_index: int | None = None
    related_passes: list[str] = Field(default_factory=list, description="passes of this build that govern it")
    source_lines: list[int] = Field(default_factory=list)
    detail: str = ""
    evidence: list[str] = Field(default_factory=list, description="a few IR / asm lines showing it")
    facts: dict[str, str] = Field(
        default_factory=dict, description="op, dtype, block_shape of the IR op at the source lines (for L4 templates)"
    )
    constructs: list[str] = Field(default_factory=list,
                                  description="what the code at its source lines does (reduce, atomic, dot ...; "
                                              "the whole kernel's when it has no lines), see optimizer.ir.constructs")


class IRReport(_Model):
    """L3 result: stage summaries, pass-by-pass changes and signatures of one captured kernel."""

    kernel: str
    source_file: str
    target: str
    backend: Backend
    compiler: str
    compiler_version: str
    mode: str
    args: list[KernelArg] = Field(default_factory=list)
    options: dict[str, Any] = Field(default_factory=dict)
    compiled_with: dict[str, Any] = Field(default_factory=dict,
                                          description="num_warps, num_stages, maxnreg ... as the backend applied them "
                                                      "(defaults included), from the compile metadata")
    stages: list[StageSummary] = Field(default_factory=list)
    pass_changes: list[PassChange] = Field(default_factory=list)
    passes_total: int = 0
    signatures: list[Signature] = Field(default_factory=list)
    remarks: list[Remark] = Field(default_factory=list)
    resources: ResourceUsage | None = None
    source_excerpt: dict[int, str] = Field(default_factory=dict, description="source lines cited by signatures")
    timings: dict[str, Any] = Field(default_factory=dict)
    workdir: str = ""
    warnings: list[str] = Field(default_factory=list)

    def signature(self, name: str) -> Signature | None:
        """The signature called ``name`` (None if absent)."""
        return next((s for s in self.signatures if s.name == name), None)

    def names(self) -> set[str]:
        return {s.name for s in self.signatures}


class L4Question(_Model):
    card_id: str
    template: str
    question: str
    unfilled: list[str] = Field(default_factory=list)


class CompilerSourceRef(_Model):
    """A place in compiler source that implements or configures the implicated pass."""

    path: str
    line: int
    function: str = ""
    code: str = ""
    conditions: list[str] = Field(default_factory=list, description="enclosing if-conditions that gate this line")
    applies: bool | None = Field(
        default=None, description="whether those conditions hold for the target (None: unknown)"
    )
    origin: Literal["installed", "checkout"] = "installed"


class L4Finding(_Model):
    """A localized account for one signature: the pass, the condition and the rewrite constraints."""

    signature: IRSignature
    pass_name: str | None = None
    stage: str = ""
    source_lines: list[int] = Field(default_factory=list)
    condition: str = ""
    constraints: list[str] = Field(default_factory=list)
    cards: list[str] = Field(default_factory=list)
    questions: list[L4Question] = Field(default_factory=list)
    passed_over: list[str] = Field(default_factory=list,
                                   description="cards the KB returned whose constructs the signature lacks, and why")
    source_refs: list[CompilerSourceRef] = Field(default_factory=list)
    settled: bool = False
    account: str = ""


class L4Account(_Model):
    """L4 result: one finding per implicated signature, plus what stayed unresolved."""

    kernel: str
    target: str
    compiler_version: str = ""
    findings: list[L4Finding] = Field(default_factory=list)
    unresolved: list[str] = Field(default_factory=list)
    summary: str = ""
