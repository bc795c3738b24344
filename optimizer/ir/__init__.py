"""The IR engine: L3 attribution and L4 compiler grounding of the ladder (``ladder ir``).

Typical use::

    from optimizer.ir import attribute
    result = attribute("kernels.py::top2", "cuda:90", ["X=*fp32", "OUT=*fp32", "n_cols=1000", "stride=1024",
                                                      "BLOCK=256"], options={"num_warps": 1}, client=kb_client)
    result.report.signature("multi_operand_reduction").pass_introduced    # 'ast_to_ttir'
    result.account.findings[0].condition

The ladder's L3 and L4 read the hot kernel's report through :func:`capture_report` (memory and disk cache).

Or step by step: :func:`capture_kernel` (one worker process per kernel: every stage, every per-pass snapshot,
remarks, ptxas figures) -> :func:`analyze` (stage summaries, adjacent-pass changes, signatures with the pass
that introduced them and their source lines) -> :func:`explain` (invariant cards through a
:class:`kb.client.KBClient`, filled question templates, compiler-source locations of the passes).

What runs where: CUDA capture compiles for any ``cuda:<cc>`` with no GPU (CI). ``mode="launch"`` needs a GPU
(verified on a lent H200; skipped in CI). Ascend capture needs ``make ascend-env`` (TTIR -> ttadapter only:
no NPU, no CANN ``bishengir-compile`` here, so no npubin, HIVM or launches).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from kb.client import KBClient
from optimizer.ir.analysis import analyze
from optimizer.ir.ascend import ASCEND_ENV_HINT, ascend_python, find_ascend_python
from optimizer.ir.cached import SIGNATURE_CLASS, capture_report, hot_launch, ir_cache_key
from optimizer.ir.capture import capture_kernel, parse_args, parse_spec, parse_target
from optimizer.ir.l4 import explain
from optimizer.ir.types import (
    FRONTEND,
    Capture,
    CompilerSourceRef,
    IRReport,
    KernelArg,
    L4Account,
    L4Finding,
    L4Question,
    PassChange,
    PassSnapshot,
    Remark,
    ResourceUsage,
    Signature,
    StageSummary,
    Target,
)

__all__ = [
    "ASCEND_ENV_HINT",
    "FRONTEND",
    "Attribution",
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
    "SIGNATURE_CLASS",
    "Signature",
    "StageSummary",
    "Target",
    "analyze",
    "ascend_python",
    "attribute",
    "capture_kernel",
    "capture_report",
    "explain",
    "find_ascend_python",
    "hot_launch",
    "ir_cache_key",
    "parse_args",
    "parse_spec",
    "parse_target",
]


class Attribution(BaseModel):
    """What :func:`attribute` returns: the L3 report and, when a KB client was given, the L4 account."""

    model_config = ConfigDict(extra="forbid")

    report: IRReport
    account: L4Account | None = None


def attribute(
    spec: str,
    target: str | Target = "cuda:90",
    args: Sequence[str] | Mapping[str, Any] | None = None,
    client: KBClient | None = None,
    *,
    options: Mapping[str, Any] | None = None,
    hotspot_lines: Sequence[int] | None = None,
    compiler_source: str | Path | None = None,
    workdir: str | Path | None = None,
) -> Attribution:
    """Capture + analyze ``spec`` (``FILE::KERNEL``) and, with a ``client``, explain its signatures (L4).

    ``hotspot_lines`` (kernel source lines an L2 profile singled out) restricts L4 to the signatures that map
    to them. Raises :class:`kb.errors.InvalidArgument` for bad specs/arguments and
    :class:`kb.errors.ToolchainError` when a compiler or environment is missing.
    """
    capture = capture_kernel(spec, target, args, options=options, workdir=workdir)
    report = analyze(capture)
    account = None
    if client is not None:
        account = explain(report, client, hotspot_lines=hotspot_lines, compiler_source=compiler_source)
    return Attribution(report=report, account=account)
