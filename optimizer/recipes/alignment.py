"""The ``alignment_hints`` recipe: tell the compiler what the host knows about sizes that are not multiples of 16.

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

Checked on CPU by compiling for sm_90 (``tests/optimizer/test_alignment.py``): the K=3000 case goes from 65
scalar loads and no ``cp.async`` to the same ``cp.async`` pipeline as K=4096. Not yet timed on a GPU.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from optimizer.recipes.base import (
    NotApplicable,
    RecipeContext,
    RewriteResult,
    _finish,
    _insert_keyword,
    _parse,
)
from optimizer.source import Kernel, SourceText

__all__ = ["apply_alignment_hints"]

PARAM = "ALIGN"
HELPER = "_ladder_align"
_HELPER_SRC = f'''

def {HELPER}(*sizes):
    """Largest of 8, 4, 2 dividing every size (1 if none): the ALIGN hint of the kernels below."""
    for g in (8, 4, 2):
        if all(int(s) % g == 0 for s in sizes):
            return g
    return 1
'''


def _bcast(node: ast.AST) -> tuple[str, int] | None:
    """``name[:, None]`` -> (name, 0); ``name[None, :]`` -> (name, 1)."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Tuple)
            and len(node.slice.elts) == 2):
        return None
    a, b = node.slice.elts
    is_none = lambda e: isinstance(e, ast.Constant) and e.value is None
    is_all = lambda e: isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None
    if is_all(a) and is_none(b):
        return node.value.id, 0
    if is_none(a) and is_all(b):
        return node.value.id, 1
    return None


def _definitions(k: Kernel) -> dict[str, list[ast.expr]]:
    """Every value assigned to each name in the kernel, and ``range(...)`` calls bound by for loops."""
    out: dict[str, list[ast.expr]] = {}
    for n in ast.walk(k.node):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            out.setdefault(n.targets[0].id, []).append(n.value)
        elif isinstance(n, ast.For) and isinstance(n.target, ast.Name):
            out.setdefault(n.target.id, []).append(n.iter)
    return out


def _aligned_index(name: str, defs: dict[str, list[ast.expr]], k: Kernel, blocks: set[str], depth: int = 0) -> bool:
    """True if ``name`` is built from ``tl.arange(0, B)`` plus multiples of constexpr blocks (collected in ``blocks``).

    Accepted shapes: ``tl.arange(0, B)``, ``pid * B + tl.arange(0, B)``, ``k0 + offs`` with ``k0`` a
    ``range(0, n, B)`` loop variable; every B must be a constexpr parameter (its value is checked at launch).
    """
    vals = defs.get(name, [])
    if depth > 4 or len(vals) != 1:
        return False
    return _aligned_expr(vals[0], defs, k, blocks, depth)


def _aligned_expr(e: ast.expr, defs: dict[str, list[ast.expr]], k: Kernel, blocks: set[str], depth: int) -> bool:
    if isinstance(e, ast.Call) and ast.unparse(e.func) == "tl.arange" and len(e.args) == 2:
        start, end = e.args
        if isinstance(start, ast.Constant) and start.value == 0 and isinstance(end, ast.Name) and end.id in k.constexprs:
            blocks.add(end.id)
            return True
        return False
    if isinstance(e, ast.Call) and ast.unparse(e.func) == "range" and len(e.args) == 3:
        start, _stop, step = e.args
        if isinstance(start, ast.Constant) and start.value == 0 and isinstance(step, ast.Name) and step.id in k.constexprs:
            blocks.add(step.id)
            return True
        return False
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
        return all(_aligned_expr(s, defs, k, blocks, depth) for s in (e.left, e.right))
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):  # pid * BLOCK: a multiple of the block
        for s in (e.left, e.right):
            if isinstance(s, ast.Name) and s.id in k.constexprs:
                blocks.add(s.id)
                return True
        return False
    if isinstance(e, ast.Name):
        return _aligned_index(e.id, defs, k, blocks, depth + 1)
    return False


def _mask_of(call: ast.Call, is_store: bool) -> ast.expr | None:
    kw = next((x.value for x in call.keywords if x.arg == "mask"), None)
    pos = 2 if is_store else 1
    return kw if kw is not None or len(call.args) <= pos else call.args[pos]


def _config_values(k: Kernel, name: str) -> list[int] | None:
    """Values of ``name`` in the literal ``triton.Config({...})`` dicts of an autotuned kernel's decorator."""
    vals: list[int] = []
    for dec in k.decorators:
        for n in ast.walk(dec):
            if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("Config") and n.args and isinstance(n.args[0], ast.Dict):
                d = {ast.literal_eval(kk): vv for kk, vv in zip(n.args[0].keys, n.args[0].values, strict=True) if kk is not None}
                v = d.get(name)
                if not isinstance(v, ast.Constant) or not isinstance(v.value, int):
                    return None
                vals.append(v.value)
    return vals or None


def apply_alignment_hints(params: dict[str, Any], ctx: RecipeContext) -> RewriteResult:
    p = _parse(ctx)
    candidates = [s.kernel for s in p.sites if PARAM not in p.kernels[s.kernel].constexprs]
    if not candidates:
        raise NotApplicable(f"no launched kernel without an {PARAM} parameter")
    last_reason = "no launched kernel"
    for name in dict.fromkeys(candidates):
        try:
            return _rewrite(p, ctx, p.kernels[name])
        except NotApplicable as exc:
            last_reason = str(exc)
    raise NotApplicable(last_reason)


def _rewrite(p: Any, ctx: RecipeContext, k: Kernel) -> RewriteResult:
    st = SourceText(ctx.source)
    ints = {n for n in k.params if n not in k.constexprs}
    defs = _definitions(k)
    strides, cmps, involved, blocks = [], [], set(), set()
    unit_ok: dict[str, bool] = {}  # stride -> every product multiplies an aligned index (a unit stride keeps it aligned)
    for call in (n for n in ast.walk(k.node) if isinstance(n, ast.Call) and ast.unparse(n.func) in ("tl.load", "tl.store")):
        if not call.args:
            continue
        for n in ast.walk(call.args[0]):
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
                for a, b in ((n.left, n.right), (n.right, n.left)):
                    bc = _bcast(a)
                    if bc and isinstance(b, ast.Name) and b.id in ints:
                        strides.append(n)
                        involved.add(b.id)
                        aligned = _aligned_index(bc[0], defs, k, blocks)
                        unit_ok[b.id] = unit_ok.get(b.id, True) and aligned
                        break
        mask = _mask_of(call, ast.unparse(call.func) == "tl.store")
        for n in ast.walk(mask) if mask is not None else []:
            if not (isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], ast.Lt)):
                continue
            bc, right = _bcast(n.left), n.comparators[0]
            if bc and isinstance(right, ast.Name) and right.id in ints and _aligned_index(bc[0], defs, k, blocks):
                cmps.append((n, bc[1]))
                involved.add(right.id)
    if not strides and not cmps:
        raise NotApplicable(f"{k.name} has no broadcast stride products or arange-based bound checks in its loads/stores")
    sites = [s for s in p.sites if s.kernel == k.name]
    args: list[str] = []
    for site in sites:
        texts = []
        for name in sorted(involved):
            expr = site.arg_for(k, name)
            if expr is None:
                raise NotApplicable(f"the launch does not pass {name} visibly")
            text = p.st.segment(expr)
            # a unit stride leaves the aligned index itself (groups start at block multiples): no constraint
            texts.append(f"(8 if {text} == 1 else {text})" if unit_ok.get(name) else text)
        for name in sorted(blocks):
            expr = site.arg_for(k, name)
            if expr is not None:
                texts.append(p.st.segment(expr))
                continue
            vals = _config_values(k, name) if k.autotuned else None
            if vals is None or any(v % 8 for v in vals):
                raise NotApplicable(f"block size {name} is neither passed at the launch nor a multiple of 8 in every config")
        args.append(", ".join(texts))
    for n in strides:
        st.replace(n, f"tl.multiple_of({st.segment(n)}, [{PARAM}, {PARAM}])")
    for n, axis in cmps:
        st.replace(n, f"tl.max_constancy({st.segment(n)}, [{'1, ' + PARAM if axis == 1 else PARAM + ', 1'}])")
    st.insert(st.span(k.node.args.args[-1])[1], f", {PARAM}: tl.constexpr")
    for site, text in zip(sites, args, strict=True):
        _insert_keyword(st, site.call, f"{PARAM}={HELPER}({text})")
    st.insert(_after_imports(p.tree, st), _HELPER_SRC)
    try:
        new = st.apply()
    except ValueError:
        raise NotApplicable(f"{k.name}: nested stride products; hints would overlap") from None
    desc = (f"{k.name}: {len(strides)} stride product(s) hinted tl.multiple_of and {len(cmps)} bound check(s) "
            f"tl.max_constancy, by {PARAM} = largest of 8/4/2 dividing {', '.join(sorted(involved | blocks))} "
            "at each launch (1: no hint)")
    return _finish("alignment_hints", ctx, new, desc, {"kernel": k.name, "hinted": len(strides) + len(cmps)})


def _after_imports(tree: ast.Module, st: SourceText) -> int:
    last = None
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            last = node
        elif last is not None or not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            break
    if last is None:
        raise NotApplicable("no import block to put the helper after")
    return st.line_start(last.end_lineno + 1)


def count_async_copies(ptx: str) -> tuple[int, int]:
    """(cp.async copies, global loads) in PTX: the evidence this rewrite is about."""
    cp = sum(1 for ln in ptx.splitlines() if re.search(r"cp\.async\.c[ag]\.", ln))
    return cp, sum(1 for ln in ptx.splitlines() if "ld.global" in ln)
