"""What every rewrite reads and returns: the candidate with its evidence (``RecipeContext``) and one rewrite of it
(``RewriteResult``, with its unified diff).

``finish`` is the last step of every applier: it refuses a rewrite that changes nothing, one already tried on this
base, and (a bug in the applier, never handed out) one that does not parse.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, field
from typing import Any

from optimizer.rewrite.errors import NotApplicable

__all__ = ["RecipeContext", "RewriteResult", "finish", "unified_diff"]


@dataclass
class RecipeContext:
    source: str
    filename: str = "candidate.py"
    bottleneck: str = "unknown"
    launches: list[dict[str, Any]] = field(default_factory=list)
    tried: list[dict[str, Any]] = field(default_factory=list)  # 'applied' dicts already tried on this base
    backend: str = "cuda"
    num_sms: int = 132
    hot_kernel: str | None = None
    new_filename: str = "candidate_new.py"
    #: the problem's fp32 tolerance ``{"atol": .., "rtol": ..}`` (None: unknown; precision recipes then stay exact)
    tolerance: dict[str, float] | None = None
    #: the problem's tolerance per dtype name (``"bfloat16": {"atol": .., "rtol": ..}``); outputs are judged under
    #: their own dtype's entry, so a recipe that rounds to 16 bits reads the entry of the type it stores
    tolerances: dict[str, dict[str, float]] = field(default_factory=dict)
    #: evidence tokens of earlier levels, prefixed: ``ir:register_spill`` (L3 signatures), ``code:tl.dot`` (L1
    #: features), ``cause:register_spills`` (decided causes); recipe domains are checked against them
    evidence: list[str] = field(default_factory=list)
    #: the compile target whose code a rewrite must change (``optimizer.rewrite.effect``: a candidate compiling to
    #: the same PTX as its base for every recorded launch is refused as a no-op); None: only the static check that a
    #: launch value is not overridden by the kernel's ``@triton.heuristics`` / ``@triton.autotune``
    effect_target: str | None = None


@dataclass
class RewriteResult:
    kind: str
    source: str
    diff: str
    description: str
    applied: dict[str, Any]


def unified_diff(old: str, new: str, a: str, b: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), fromfile=f"a/{a}", tofile=f"b/{b}"))


def finish(kind: str, ctx: RecipeContext, new: str, description: str, applied: dict[str, Any]) -> RewriteResult:
    if new == ctx.source:
        raise NotApplicable("the rewrite would not change the source")
    if applied in ctx.tried:
        raise NotApplicable("this exact rewrite was already tried on this base")
    try:
        ast.parse(new)
    except SyntaxError as exc:  # a bug in an applier: never hand out broken code
        raise NotApplicable(f"internal: rewrite produced invalid Python ({exc})") from None
    return RewriteResult(kind, new, unified_diff(ctx.source, new, ctx.filename, ctx.new_filename), description, applied)
