"""Compiler-option recipes as Transforms of the rewrite engine (ported from the ast/text appliers, issue 29).

- ``input_precision`` (``{"value": ...}``): ``input_precision=value`` on every ``tl.dot`` of the kernel (replacing an
  ``input_precision=`` or ``allow_tf32=`` argument). Domain: a launched kernel that calls ``tl.dot``. The
  evidence-gated fp32 form (tf32x3 under an fp32 tolerance) is ``dot_precision``.
- ``care_padding_false`` (``{}``): ``care_padding=False`` on every masked ``tl.load`` that does not set it, a
  triton-ascend argument (the padding of masked-off lanes is not materialized). Domain: the ascend backend and a
  masked load without ``care_padding``.

Both are compiler knobs, not structural rewrites (``optimizer.rewrite.registry.KNOB_KINDS``).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.dot_precision import set_precision
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import arg_value, call_name, walk

__all__ = ["CarePaddingFalse", "InputPrecision"]


class InputPrecision:
    """``input_precision=value`` on every tl.dot of a launched dot kernel."""

    kind = "input_precision"
    card = ""

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        return [] if t.facts.dots else ["no launched kernel calls tl.dot"]

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"value": str(params.get("value", "ieee"))}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        for d in t.facts.dots:
            set_precision(t.tree, d.node, point["value"])
        return f"{t.kernel.name}: input_precision={point['value']!r} on {len(t.facts.dots)} tl.dot"


def _uncared_masked_loads(t: Target) -> list[cst.Call]:
    return [n for n in walk(t.kernel.node) if isinstance(n, cst.Call) and call_name(n) == "tl.load"
            and arg_value(n, "mask", 1) is not None and arg_value(n, "care_padding") is None]


class CarePaddingFalse:
    """``care_padding=False`` on masked tl.loads (triton-ascend)."""

    kind = "care_padding_false"
    card = ""

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        if ctx.backend != "ascend":
            return ["care_padding is a triton-ascend tl.load argument; the backend is not ascend"]
        return [] if _uncared_masked_loads(t) else [f"no masked tl.load without care_padding in {t.kernel.name}"]

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"loads": len(_uncared_masked_loads(t))}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        loads = _uncared_masked_loads(t)
        for call in loads:
            t.tree.add_keyword(call, "care_padding", "False")
        return f"{t.kernel.name}: care_padding=False on {len(loads)} masked loads"
