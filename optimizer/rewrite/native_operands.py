"""``low_precision_operands``: 16-bit tiles upcast to fp32 before ``tl.dot`` -> native 16-bit operands, fp32 accumulate.

Card ``low-precision-operands-fp32-accumulate``. A kernel that loads bf16/fp16 tiles and converts them with
``.to(tl.float32)`` before the dot turns a 16-bit tensor-core MMA into a TF32 one, or into FMA with
``input_precision="ieee"`` (the labelled attention kernel: 61.8 ms on FMA vs 0.69 ms for the fix on the H200).
The rewrite feeds every such operand to the dot in its storage type; the dot's result stays fp32 (the default
``out_dtype`` of a 16-bit dot) and the accumulator is untouched, and an ``input_precision=`` / ``allow_tf32=``
argument (meaningful for fp32 operands only) is dropped from the rewritten dots.

Exactness: an operand that is an upcast of a 16-bit load is narrowed back with ``.to(<its type>)`` (or the
``.to(tl.float32)`` is removed), which is exact, and products of two 16-bit values are exact in fp32, so only the
summation order can differ from the ieee FMA kernel. An operand computed in fp32 (attention's softmax
probabilities) must be rounded to the other operand's type: that is allowed only when the tolerance its outputs
are judged under (the stored dtype's entry of the problem's tolerances, else the fp32 one) admits it (atol and
rtol >= 1e-2 for bf16, >= 1e-3 for fp16); otherwise that dot is left alone.
Domain: CUDA (or the interpreter), a recorded launch giving the pointer dtypes, at least one dot whose operands
both become the same 16-bit type.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.rewrite.common import launch_record
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import call_name, walk

__all__ = ["LowPrecisionOperands"]

_LOW = {"*bf16": "tl.bfloat16", "*fp16": "tl.float16"}
#: the smallest atol and rtol under which an fp32-computed operand may be rounded to that type
_ROUNDING_TOL = {"tl.bfloat16": 1e-2, "tl.float16": 1e-3}
_UPCAST = {"tl.float32", "tl.float64"}


def _is_upcast(t: Target, e: cst.BaseExpression) -> cst.BaseExpression | None:
    """``X.to(tl.float32)`` -> X."""
    if (
        isinstance(e, cst.Call)
        and isinstance(e.func, cst.Attribute)
        and e.func.attr.value == "to"
        and e.args
        and t.tree.code(e.args[0].value) in _UPCAST
        and isinstance(e.func.value, cst.BaseExpression)
    ):
        return e.func.value
    return None


def _load_dtype(t: Target, e: cst.BaseExpression, sig: dict[str, str]) -> str | None:
    """The pointer parameter of ``tl.load(P + ...)`` when P is the load's only pointer and 16-bit, else None."""
    if not (isinstance(e, cst.Call) and call_name(e) == "tl.load" and e.args):
        return None
    names = {n.value for n in walk(e.args[0].value) if isinstance(n, cst.Name)}
    ptrs = [p for p in sorted(names) if isinstance(sig.get(p), str) and sig[p].startswith("*")]
    return ptrs[0] if len(ptrs) == 1 and sig[ptrs[0]] in _LOW else None


def _assigned_values(t: Target, name: str) -> list[cst.BaseExpression]:
    out = []
    for n in walk(t.kernel.node.body):
        if (
            isinstance(n, cst.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0].target, cst.Name)
            and n.targets[0].target.value == name
        ):
            out.append(n.value)
        elif (
            isinstance(n, (cst.AugAssign, cst.AnnAssign))
            and isinstance(n.target, cst.Name)
            and n.target.value == name
        ):
            out.append(n.value if n.value is not None else cst.Name("None"))
    return out


def classify(t: Target, e: cst.BaseExpression, sig: dict[str, str]) -> tuple[str, str | None]:
    """("native", P) a load from the 16-bit pointer P; ("upcast", P) an exact fp32 copy of one; ("fp32", None) else."""
    inner = _is_upcast(t, e)
    if inner is not None:
        kind, ty = classify(t, inner, sig)
        return ("upcast", ty) if kind in ("native", "upcast") else ("fp32", None)
    if (ptr := _load_dtype(t, e, sig)) is not None:
        return "native", ptr
    if isinstance(e, cst.Name):
        values = _assigned_values(t, e.value)
        kinds: set[tuple[str, str | None]] = set()
        for (
            v
        ) in values:  # `q = tl.load(...)` then `q = q.to(tl.float32)`: every definition must keep the 16-bit value
            if (up := _is_upcast(t, v)) is not None and isinstance(up, cst.Name) and up.value == e.value:
                kinds.add(("upcast", None))
                continue
            k, ty = classify(t, v, sig) if not isinstance(v, cst.Name) or v.value != e.value else ("fp32", None)
            kinds.add((k, ty))
        tys = {ty for _, ty in kinds if ty}
        if values and len(tys) == 1 and all(k in ("native", "upcast") for k, _ in kinds):
            ty = next(iter(tys))
            return ("upcast" if any(k == "upcast" for k, _ in kinds) else "native"), ty
    return "fp32", None


class LowPrecisionOperands:
    """Upcast 16-bit dot operands -> native operands (fp32 accumulate); fp32-computed operands only under tolerance."""

    kind = "low_precision_operands"
    card = "low-precision-operands-fp32-accumulate"

    def _plan(
        self, t: Target, ctx: RecipeContext
    ) -> tuple[list[tuple[cst.Call, list[tuple[int, str, str]]]], list[str]]:
        sig = launch_record(t, ctx).get("signature") or {}
        plan, notes = [], []
        stored = {
            ptr
            for c in walk(t.kernel.node.body)
            if isinstance(c, cst.Call) and call_name(c) == "tl.store" and c.args
            for p in {n.value for n in walk(c.args[0].value) if isinstance(n, cst.Name)}
            if isinstance(ptr := sig.get(p), str) and ptr.startswith("*")
        }
        out_name = {"*bf16": "bfloat16", "*fp16": "float16"}.get(next(iter(stored))) if len(stored) == 1 else None
        # outputs are judged under their dtype's tolerance: a 16-bit output uses that entry, anything else fp32's
        tol = (ctx.tolerances.get(out_name) if out_name else None) or ctx.tolerance or {}
        for d in t.facts.dots:
            ops = [classify(t, a.value, sig) for a in d.node.args[:2]]
            tys = {_LOW[sig[p]] for _, p in ops if p}
            if len(tys) != 1 or all(k == "native" for k, _ in ops):
                notes.append(
                    f"{t.tree.code(d.node)[:40]}: operands "
                    + ", ".join(k + (f" from {p}" if p else "") for k, p in ops)
                )
                continue
            ty = next(iter(tys))
            src = next(p for _, p in ops if p)  # the 16-bit pointer whose element type the operands take
            if any(k == "fp32" for k, _ in ops):
                floor = _ROUNDING_TOL[ty]
                if not tol or min(tol.get("atol", 0.0), tol.get("rtol", 0.0)) < floor:
                    notes.append(
                        f"an fp32-computed operand would be rounded to {ty}: needs atol and rtol >= {floor} "
                        f"(tolerance {tol or 'unknown'})"
                    )
                    continue
            plan.append((d.node, [(i, k, f"{p or src}.dtype.element_ty") for i, (k, p) in enumerate(ops)]))
        return plan, notes

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        if ctx.backend not in ("cuda", "interpreter"):
            return [f"native 16-bit MMA operands are checked for NVIDIA only; the backend is {ctx.backend}"]
        if not t.facts.dots:
            return ["no tl.dot in the kernel"]
        if not launch_record(t, ctx).get("signature"):
            return ["no recorded launch: the operand dtypes (bf16/fp16 pointers) are unknown"]
        plan, notes = self._plan(t, ctx)
        return [] if plan else ["no tl.dot takes an upcast 16-bit operand: " + "; ".join(notes)[:400]]

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        plan, _ = self._plan(t, ctx)
        sig = launch_record(t, ctx).get("signature") or {}
        src = plan[0][1][0][2].split(".")[0]
        return [{"dots": len(plan), "dtype": _LOW[sig[src]]}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        plan, _ = self._plan(t, ctx)
        sig = launch_record(t, ctx).get("signature") or {}
        code = t.tree.code
        rounded = 0
        for call, ops in plan:
            args = list(call.args)
            new_args = []
            for i, a in enumerate(args):
                op = next((o for o in ops if o[0] == i), None)
                if op is None:
                    if a.keyword is not None and a.keyword.value in ("input_precision", "allow_tf32"):
                        continue  # only meaningful for fp32 operands
                    new_args.append(code(a.value) if a.keyword is None else f"{a.keyword.value}={code(a.value)}")
                    continue
                _, kind, ty = op
                inner = _is_upcast(t, a.value)
                if kind == "native":
                    text = code(a.value)
                elif kind == "upcast" and inner is not None and classify(t, inner, sig)[0] == "native":
                    text = code(inner)  # `k.to(tl.float32)` -> `k`
                elif kind == "upcast":
                    text = f"{code(a.value)}.to({ty})"  # a name holding an exact upcast: narrowing it back is exact
                else:
                    simple = isinstance(a.value, (cst.Name, cst.Call, cst.Attribute, cst.Subscript))
                    text = f"{code(a.value)}.to({ty})" if simple else f"({code(a.value)}).to({ty})"
                    rounded += kind == "fp32"
                new_args.append(text)
            t.tree.replace(call, f"{code(call.func)}({', '.join(new_args)})")
        ty = point["dtype"].removeprefix("tl.")
        return (
            f"{t.kernel.name}: {len(plan)} tl.dot fed native {ty} operands (fp32 accumulate; upcasts before the dot "
            f"removed)"
            + (f"; {rounded} fp32-computed operand(s) rounded to {ty} under the tolerance" if rounded else "")
        )
