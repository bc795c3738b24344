"""``alignment_hints``: tell the compiler what the host knows about sizes that are not multiples of 16 (card
``alignment-hints``).

Triton specializes an integer argument as divisible by 16 when it is; otherwise it assumes nothing. A tiled
kernel whose K (or a row stride) is 3000 therefore gets neither vectorized nor ``cp.async`` loads: on sm_90 the
suite's ``matmul_bias_relu`` at K=3000 compiles to scalar ``ld.global.b16`` for both operands and ran 16x
slower than cuBLAS on the H200. ``tl.multiple_of`` on the *argument* changes nothing (a kernel argument is a
block argument and carries no attribute); the hint has to sit on tensors. This rewrite:

- wraps every ``offs[:, None] * stride`` (or ``offs[None, :] * stride``) in a load/store address with
  ``tl.multiple_of(..., [ALIGN, ALIGN])``;
- wraps every mask comparison ``offs[None, :] < n`` (``offs`` built from ``tl.arange``) with
  ``tl.max_constancy(..., [1, ALIGN])`` (``[ALIGN, 1]`` for ``[:, None]``);
- adds ``ALIGN: tl.constexpr``, computed at each launch by ``_ladder_align(...)`` as the largest of 8, 4, 2
  dividing every size, stride and block size involved (1 otherwise, which makes every hint a no-op). The hints
  are therefore true for every call, whatever the shape: a shape that breaks them only loses the speed-up.

Domain: a launched kernel without an ``ALIGN`` parameter whose loads/stores address with a broadcast index times
an integer argument (a stride) or mask with a broadcast arange-built index below an integer argument. Refused: no
such product or bound check; a launch that does not pass an involved size visibly (by name or position); a block
size neither passed at the launch nor a multiple of 8 in every ``triton.Config`` of an autotuned kernel; nested
stride products (the hints would overlap); a module without an import block to put the helper after.

Checked on CPU by compiling for sm_90 (``tests/optimizer/test_alignment.py``): the K=3000 case goes from 65
scalar loads and no ``cp.async`` to the same ``cp.async`` pipeline as K=4096. Not yet timed on a GPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import libcst as cst

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import arg_value, call_name, dotted, expr, statements, walk

__all__ = ["HELPER", "PARAM", "AlignmentHints", "count_async_copies"]

PARAM = "ALIGN"
HELPER = "_ladder_align"
_HELPER_SRC = f'''def {HELPER}(*sizes):
    """Largest of 8, 4, 2 dividing every size (1 if none): the ALIGN hint of the kernels below."""
    for g in (8, 4, 2):
        if all(int(s) % g == 0 for s in sizes):
            return g
    return 1
'''


def _is_none(e: cst.BaseSlice) -> bool:
    return isinstance(e, cst.Index) and isinstance(e.value, cst.Name) and e.value.value == "None"


def _is_all(e: cst.BaseSlice) -> bool:
    return isinstance(e, cst.Slice) and e.lower is None and e.upper is None and e.step is None


def _bcast(node: cst.CSTNode) -> tuple[str, int] | None:
    """``name[:, None]`` -> (name, 0); ``name[None, :]`` -> (name, 1)."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 2):
        return None
    a, b = node.slice[0].slice, node.slice[1].slice
    if _is_all(a) and _is_none(b):
        return node.value.value, 0
    if _is_none(a) and _is_all(b):
        return node.value.value, 1
    return None


def _positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


def _is_int(e: cst.CSTNode, value: str) -> bool:
    return isinstance(e, cst.Integer) and e.value == value


class _Index:
    """Whether an index is built from ``tl.arange(0, B)`` plus multiples of constexpr blocks (collected in ``blocks``).

    Accepted shapes: ``tl.arange(0, B)``, ``pid * B + tl.arange(0, B)``, ``k0 + offs`` with ``k0`` a
    ``range(0, n, B)`` loop variable; every B must be a constexpr parameter (its value is checked at launch)."""

    def __init__(self, k: cst.FunctionDef, constexprs: list[str]) -> None:
        self.constexprs = set(constexprs)
        self.defs: dict[str, list[cst.BaseExpression]] = {}
        for n in walk(k):
            if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
                self.defs.setdefault(n.targets[0].target.value, []).append(n.value)
            elif isinstance(n, cst.For) and isinstance(n.target, cst.Name):
                self.defs.setdefault(n.target.value, []).append(n.iter)

    def name(self, name: str, blocks: set[str], depth: int = 0) -> bool:
        vals = self.defs.get(name, [])
        return depth <= 4 and len(vals) == 1 and self.expr(vals[0], blocks, depth)

    def expr(self, e: cst.BaseExpression, blocks: set[str], depth: int) -> bool:
        if isinstance(e, cst.Call) and call_name(e) == "tl.arange" and len(e.args) == 2 and len(_positional(e)) == 2:
            start, end = _positional(e)
            if _is_int(start, "0") and isinstance(end, cst.Name) and end.value in self.constexprs:
                blocks.add(end.value)
                return True
            return False
        if isinstance(e, cst.Call) and call_name(e) == "range" and len(e.args) == 3 and len(_positional(e)) == 3:
            start, _stop, step = _positional(e)
            if _is_int(start, "0") and isinstance(step, cst.Name) and step.value in self.constexprs:
                blocks.add(step.value)
                return True
            return False
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Add):
            return all(self.expr(s, blocks, depth) for s in (e.left, e.right))
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Multiply):  # pid * BLOCK
            for s in (e.left, e.right):
                if isinstance(s, cst.Name) and s.value in self.constexprs:
                    blocks.add(s.value)
                    return True
            return False
        if isinstance(e, cst.Name):
            return self.name(e.value, blocks, depth + 1)
        return False


def _config_values(k: cst.FunctionDef, name: str) -> list[int] | None:
    """Values of ``name`` in the literal ``triton.Config({...})`` dicts of an autotuned kernel's decorator."""
    vals: list[int] = []
    for dec in k.decorators:
        for n in walk(dec):
            if not (isinstance(n, cst.Call) and dotted(n.func).endswith("Config") and n.args
                    and isinstance(n.args[0].value, cst.Dict)):
                continue
            d = {}
            for el in n.args[0].value.elements:
                if isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString):
                    d[el.key.evaluated_value] = el.value
            v = d.get(name)
            if not isinstance(v, cst.Integer):
                return None
            vals.append(int(v.evaluated_value))
    return vals or None


def _import_block_end(module: cst.Module) -> cst.BaseStatement | None:
    """The last statement of the module's leading import block (a docstring may come first)."""
    last = None
    for stmt in module.body:
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and stmt.body else None
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            last = stmt
        elif last is not None or not (isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString)):
            break
    return last


@dataclass
class _Plan:
    strides: list[cst.BinaryOperation]
    cmps: list[tuple[cst.Comparison, int]]
    involved: set[str]
    blocks: set[str]
    args: list[str]  # per launch site, the sizes passed to the helper
    anchor: cst.BaseStatement  # the helper goes after it


def _plan(t: Target) -> _Plan | str:
    k = t.kernel
    if PARAM in k.constexprs:
        return f"{k.name} already has an {PARAM} parameter"
    ints = {n for n in k.params if n not in k.constexprs}
    index = _Index(k.node, k.constexprs)
    strides: list[cst.BinaryOperation] = []
    cmps: list[tuple[cst.Comparison, int]] = []
    involved: set[str] = set()
    blocks: set[str] = set()
    # stride -> every product multiplies an aligned index (a unit stride keeps it aligned)
    unit_ok: dict[str, bool] = {}
    for call in (n for n in walk(k.node) if isinstance(n, cst.Call) and call_name(n) in ("tl.load", "tl.store")):
        pos = _positional(call)
        if not pos or call.args[0].keyword is not None:
            continue
        for n in walk(pos[0]):
            if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Multiply):
                for a, b in ((n.left, n.right), (n.right, n.left)):
                    bc = _bcast(a)
                    if bc and isinstance(b, cst.Name) and b.value in ints:
                        strides.append(n)
                        involved.add(b.value)
                        aligned = index.name(bc[0], blocks)
                        unit_ok[b.value] = unit_ok.get(b.value, True) and aligned
                        break
        mask = arg_value(call, "mask", 2 if call_name(call) == "tl.store" else 1)
        for n in walk(mask) if mask is not None else []:
            if not (isinstance(n, cst.Comparison) and len(n.comparisons) == 1
                    and isinstance(n.comparisons[0].operator, cst.LessThan)):
                continue
            bc, right = _bcast(n.left), n.comparisons[0].comparator
            if bc and isinstance(right, cst.Name) and right.value in ints and index.name(bc[0], blocks):
                cmps.append((n, bc[1]))
                involved.add(right.value)
    if not strides and not cmps:
        return f"{k.name} has no broadcast stride products or arange-based bound checks in its loads/stores"
    hinted: list[cst.CSTNode] = [*strides, *(c for c, _ in cmps)]
    if any(o is not n and any(m is n for m in walk(o)) for n in hinted for o in hinted):
        return f"{k.name}: nested stride products; hints would overlap"
    args: list[str] = []
    for site in t.sites:
        texts = []
        for name in sorted(involved):
            e = site.arg_for(k, name)
            if e is None:
                return f"the launch does not pass {name} visibly"
            text = t.tree.code(e)
            # a unit stride leaves the aligned index itself (groups start at block multiples): no constraint
            texts.append(f"(8 if {text} == 1 else {text})" if unit_ok.get(name) else text)
        for name in sorted(blocks):
            e = site.arg_for(k, name)
            if e is not None:
                texts.append(t.tree.code(e))
                continue
            vals = _config_values(k.node, name) if k.autotuned else None
            if vals is None or any(v % 8 for v in vals):
                return f"block size {name} is neither passed at the launch nor a multiple of 8 in every config"
        args.append(", ".join(texts))
    anchor = _import_block_end(t.tree.module)
    if anchor is None:
        return "no import block to put the helper after"
    return _Plan(strides, cmps, involved, blocks, args, anchor)


def _wrap(node: cst.CSTNode, head: str, tail: str) -> cst.BaseExpression:
    """``head(<node>, tail)``, the node's own parentheses kept around the call."""
    assert isinstance(node, cst.BaseExpression)
    call = cst.ensure_type(expr(f"{head}(__x__, {tail})"), cst.Call)
    inner = node.with_changes(lpar=[], rpar=[])
    args = [call.args[0].with_changes(value=inner), *call.args[1:]]
    return call.with_changes(args=args, lpar=node.lpar, rpar=node.rpar)


class AlignmentHints:
    """Broadcast stride products and bound checks -> tl.multiple_of / tl.max_constancy by a launch-time ALIGN."""

    kind = "alignment_hints"
    card = "alignment-hints"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        plan = _plan(t)
        return [plan] if isinstance(plan, str) else []

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        plan = _plan(t)
        assert not isinstance(plan, str)
        return [{"kernel": t.kernel.name, "hinted": len(plan.strides) + len(plan.cmps)}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        p = _plan(t)
        assert not isinstance(p, str)
        for n in p.strides:
            t.tree.edit(n, lambda m: _wrap(m, "tl.multiple_of", f"[{PARAM}, {PARAM}]"))
        for c, axis in p.cmps:
            shape = f"[1, {PARAM}]" if axis == 1 else f"[{PARAM}, 1]"
            t.tree.edit(c, lambda m, shape=shape: _wrap(m, "tl.max_constancy", shape))  # type: ignore[misc]
        t.tree.add_params(t.kernel.node, [f"{PARAM}: tl.constexpr"])
        for site, text in zip(t.sites, p.args, strict=True):
            t.tree.add_keyword(site.call, PARAM, f"{HELPER}({text})")
        helper = statements(_HELPER_SRC)
        helper[0] = helper[0].with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])  # type: ignore[attr-defined]
        t.tree.insert_after(p.anchor, helper)
        return (f"{t.kernel.name}: {len(p.strides)} stride product(s) hinted tl.multiple_of and {len(p.cmps)} bound "
                f"check(s) tl.max_constancy, by {PARAM} = largest of 8/4/2 dividing "
                f"{', '.join(sorted(p.involved | p.blocks))} at each launch (1: no hint)")


def count_async_copies(ptx: str) -> tuple[int, int]:
    """(cp.async copies, global loads) in PTX: the evidence this rewrite is about."""
    cp = sum(1 for ln in ptx.splitlines() if re.search(r"cp\.async\.c[ag]\.", ln))
    return cp, sum(1 for ln in ptx.splitlines() if "ld.global" in ln)

