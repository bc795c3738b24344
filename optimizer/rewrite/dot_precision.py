"""``dot_precision``: fp32 ``tl.dot`` with ``input_precision="ieee"`` -> ``"tf32x3"`` (card ``tf32-for-fp32-matmul``).

Domain: a CUDA kernel whose ``tl.dot`` runs with ``input_precision="ieee"`` (or ``allow_tf32=False``) on fp32
operands (when launches were recorded, some tensor argument is fp32). ieee fp32 dots lower to FMA (IR signature
``fma_dot``); ``tf32x3`` splits each operand into a TF32 high and low part and sums three tensor-core products,
which keeps fp32-level accuracy (the dropped low x low term is ~2^-22 relative). Plain ``"tf32"`` (10-bit
mantissa inputs, ~1e-3 relative error growing with sqrt(K)) is offered only when the problem's fp32 tolerance
(``RecipeContext.tolerance``) is at least ``tf32_min_tolerance`` (default 5e-3) in both atol and rtol.

Triton accepts "tf32x3" in ``CUDAOptions.allowed_dot_input_precisions`` since 3.0; checked in the installed 3.9
(``("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")``) and its interpreter (``("tf32", "tf32x3", "ieee")``). Refused
elsewhere: Ascend's reduced-precision fp32 dot is "hf32", AMD's precisions differ.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.rewrite.common import launch_record
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import Tree, expr

__all__ = ["DotPrecision", "set_precision"]

_IEEE = {"ieee"}


def set_precision(tree: Tree, call: cst.Call, value: str) -> None:
    """Give ``call`` ``input_precision=value``, replacing an ``input_precision=`` or ``allow_tf32=`` argument."""
    def fn(c: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(c, cst.Call)
        args = list(c.args)
        for i, a in enumerate(args):
            if a.keyword is not None and a.keyword.value in ("input_precision", "allow_tf32"):
                args[i] = a.with_changes(keyword=cst.Name("input_precision"), value=expr(repr(value)))
                return c.with_changes(args=args)
        new = cst.ensure_type(expr(f"f(input_precision={value!r})"), cst.Call).args[0]
        return c.with_changes(args=[*args, new])
    tree.edit(call, fn)


class DotPrecision:
    """fp32 ieee tl.dot -> tf32x3 (fp32-level accuracy on tensor cores); tf32 only when the tolerance allows."""

    kind = "dot_precision"
    card = "tf32-for-fp32-matmul"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        out = []
        if ctx.backend not in ("cuda", "interpreter"):
            out.append(f"tf32x3 is an NVIDIA dot precision; the backend is {ctx.backend}")
        if not t.facts.dots:
            return [*out, "no tl.dot in the kernel"]
        if not any(d.precision in _IEEE for d in t.facts.dots):
            out.append("no tl.dot runs with input_precision='ieee' (precisions: "
                       f"{sorted({d.precision or 'default tf32' for d in t.facts.dots})})")
        sig = launch_record(t, ctx).get("signature") or {}
        ptrs = [v for v in sig.values() if isinstance(v, str) and v.startswith("*")]
        if ptrs and "*fp32" not in ptrs:
            out.append(
                f"no fp32 operand in the recorded launch ({sorted(set(ptrs))}): "
                "input precision only applies to fp32 dots"
            )
        return out

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        floor = float(params.get("tf32_min_tolerance", 5e-3))
        tol = ctx.tolerance or {}
        loose = bool(tol) and min(tol.get("atol", 0.0), tol.get("rtol", 0.0)) >= floor
        return [{"input_precision": "tf32x3"}] + ([{"input_precision": "tf32"}] if loose else [])

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        value = point["input_precision"]
        dots = [d for d in t.facts.dots if d.precision in _IEEE]
        for d in dots:
            set_precision(t.tree, d.node, value)
        tol = ctx.tolerance
        why = (f"fp32 tolerance atol={tol.get('atol')} rtol={tol.get('rtol')}" if tol else "tolerance unknown")
        return f"{t.kernel.name}: input_precision 'ieee' -> {value!r} on {len(dots)} tl.dot ({why})"
