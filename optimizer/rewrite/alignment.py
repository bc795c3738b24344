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

The row form (a program per row, 1-D lanes): ``row_ptr = X + row * stride`` (or ``X += row * stride``, or the
product inside the load) followed by ``tl.load(row_ptr + cols, mask=cols < n)`` gets ``tl.multiple_of(row * stride,
ALIGN)`` on the scalar row offset and ``tl.max_constancy(cols < n, ALIGN)`` on the mask: Liger's layer norm at
N=3000 fp32 compiles from 48 32-bit loads to 12 128-bit loads. A scalar product is hinted only where its address
also adds an arange-built lane index (a scalar access, such as a per-row mean, needs no hint and its unit stride
would force ALIGN to 1). Pointer variables and mask variables assigned once are read through their definition.

Domain: a launched kernel without an ``ALIGN`` parameter whose loads/stores address with a broadcast index times
an integer argument (a stride), or with a scalar row offset times an integer argument next to an arange-built lane
index, or mask with an arange-built index below an integer argument. Refused: no
such product or bound check; a launch that does not pass an involved size visibly (by name or position); a block
size neither passed at the launch nor a multiple of 8 in every ``triton.Config`` of an autotuned kernel; nested
stride products (the hints would overlap); a module without an import block to put the helper after.

Checked on CPU by compiling for sm_90 (``tests/optimizer/test_alignment.py``): the K=3000 case goes from 65
scalar loads and no ``cp.async`` to the same ``cp.async`` pipeline as K=4096. Not yet timed on a GPU.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import libcst as cst

from optimizer.kernel.lane_index import ArangeIndex, broadcast_index, positional
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import arg_value, call_name, dotted, expr, statements, walk

__all__ = ["HELPER", "PARAM", "AlignmentHints", "ArangeIndex", "broadcast_index", "count_async_copies"]

PARAM = "ALIGN"
HELPER = "_ladder_align"
_HELPER_SRC = f'''def {HELPER}(*sizes):
    """Largest of 8, 4, 2 dividing every size (1 if none): the ALIGN hint of the kernels below."""
    for g in (8, 4, 2):
        if all(int(s) % g == 0 for s in sizes):
            return g
    return 1
'''




def _config_values(t: Target, name: str) -> list[int] | None:
    """Values of ``name`` in an autotuned kernel's literal ``triton.Config({...})`` dicts: in the decorator, or the
    module variable / function / comprehension its ``configs=`` names (``autotune_configs.parsed_configs``)."""
    from optimizer.rewrite.autotune_configs import parsed_configs

    cfgs = parsed_configs(t)
    if cfgs is None:
        return None
    vals = [c["kwargs"].get(name) for c in cfgs]
    return [int(v) for v in vals] if all(isinstance(v, int) and not isinstance(v, bool) for v in vals) else None


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
    rows: list[cst.BinaryOperation]  # scalar row offsets (row * stride) next to a 1-D lane index
    cmps: list[tuple[cst.Comparison, int]]
    wraps: list[cst.BinaryOperation]  # ``(index) % n`` definitions an address or mask reads
    involved: set[str]
    blocks: set[str]
    args: list[str]  # per launch site, the sizes passed to the helper
    anchor: cst.BaseStatement  # the helper goes after it


def _single_defs(k: cst.FunctionDef) -> tuple[dict[str, cst.BaseExpression], dict[str, list[cst.BaseExpression]]]:
    """Names assigned exactly once (name -> value) and the ``name += value`` increments of every name."""
    assigned: dict[str, list[cst.BaseExpression]] = {}
    incs: dict[str, list[cst.BaseExpression]] = {}
    for n in walk(k):
        if isinstance(n, cst.Assign):
            for tgt in n.targets:
                if isinstance(tgt.target, cst.Name):
                    assigned.setdefault(tgt.target.value, []).append(n.value if len(n.targets) == 1 else cst.Name("_"))
        elif isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name):
            if isinstance(n.operator, cst.AddAssign):
                incs.setdefault(n.target.value, []).append(n.value)
            else:
                assigned.setdefault(n.target.value, []).extend([n.value, n.value])  # not a single definition
        elif isinstance(n, cst.For) and isinstance(n.target, cst.Name):
            assigned.setdefault(n.target.value, []).extend([n.iter, n.iter])
    return {k_: v[0] for k_, v in assigned.items() if len(v) == 1}, incs


def _add_terms(e: cst.BaseExpression, defs: dict[str, cst.BaseExpression], depth: int = 0) -> list[cst.BaseExpression]:
    """The terms of an address, read through pointer variables assigned once (``row_ptr = X + row * stride``)."""
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Add):
        return _add_terms(e.left, defs, depth) + _add_terms(e.right, defs, depth)
    if isinstance(e, cst.Name) and depth < 4 and e.value in defs:
        d = defs[e.value]
        if (isinstance(d, cst.BinaryOperation) and isinstance(d.operator, cst.Add)
                and not any(isinstance(c, cst.Call) and call_name(c) in ("tl.arange", "tl.load") for c in walk(d))):
            return _add_terms(d, defs, depth + 1)
    return [e]


def _scalar(e: cst.CSTNode, index: ArangeIndex) -> bool:
    """Built from no lane index, arange or load (a program's row number, a loop counter, a cast of one)."""
    for c in walk(e):
        if isinstance(c, cst.Call) and call_name(c) in ("tl.arange", "tl.load"):
            return False
        if isinstance(c, cst.Name) and index.name(c.value, set()):
            return False
    return True


def _row_products(terms: list[cst.BaseExpression], incs: dict[str, list[cst.BaseExpression]], ints: set[str],
                  index: ArangeIndex) -> list[tuple[cst.BinaryOperation, str]]:
    """``row * stride`` products (``stride`` an integer argument, ``row`` scalar) among an address's terms and the
    ``+=`` increments of its pointer names."""
    cands = [*terms, *(v for t in terms if isinstance(t, cst.Name) for v in incs.get(t.value, []))]
    out = []
    for e in cands:
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Multiply):
            for a, b in ((e.left, e.right), (e.right, e.left)):
                if isinstance(b, cst.Name) and b.value in ints and _scalar(a, index):
                    out.append((e, b.value))
                    break
    return out


def _read_names(e: cst.CSTNode) -> set[str]:
    """The names an expression reads (not attribute names, not keyword names)."""
    skip = {id(n.attr) for n in walk(e) if isinstance(n, cst.Attribute)}
    skip |= {id(a.keyword) for n in walk(e) if isinstance(n, cst.Call) for a in n.args if a.keyword is not None}
    return {n.value for n in walk(e) if isinstance(n, cst.Name) and id(n) not in skip}


def _host_names(module: cst.Module) -> set[str]:
    """Names a launch argument may read: builtins, and every name the module binds outside a lambda (functions,
    classes, parameters, assignments, loop targets, imports, comprehension variables)."""
    import builtins

    out = set(dir(builtins))
    for n in walk(module):
        if isinstance(n, (cst.FunctionDef, cst.ClassDef)):
            out.add(n.name.value)
        elif isinstance(n, cst.Param) and isinstance(n.name, cst.Name):
            out.add(n.name.value)
        elif isinstance(n, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.WithItem)):
            target = n.asname.name if isinstance(n, cst.WithItem) and n.asname else getattr(n, "target", None)
            out |= {x.value for x in walk(target) if isinstance(x, cst.Name)} if target is not None else set()
        elif isinstance(n, cst.ImportAlias):
            out.add(n.asname.name.value if n.asname and isinstance(n.asname.name, cst.Name)
                     else dotted(n.name).split(".")[0])
    lambda_params = {p.name.value for n in walk(module) if isinstance(n, cst.Lambda) for p in n.params.params}
    # a name bound only as a lambda parameter (a grid's META) is not bound at the launch
    return out - (lambda_params - {p.name.value for n in walk(module) if isinstance(n, cst.FunctionDef)
                                   for p in n.params.params})


def _index_nodes(e: cst.CSTNode, index: ArangeIndex, depth: int = 0) -> list[cst.CSTNode]:
    """The nodes of ``e`` and of the index definitions its names read (to find the wrap-arounds it depends on)."""
    out: list[cst.CSTNode] = []
    for n in walk(e):
        out.append(n)
        if isinstance(n, cst.Name) and depth < 4:
            for v in index.defs.get(n.value, []):
                out += _index_nodes(v, index, depth + 1)
    return out


def _plan(t: Target) -> _Plan | str:
    k = t.kernel
    if PARAM in k.constexprs:
        return f"{k.name} already has an {PARAM} parameter"
    ints = {n for n in k.params if n not in k.constexprs}
    index = ArangeIndex(k.node, k.constexprs, ints)
    defs, incs = _single_defs(k.node)
    strides: list[cst.BinaryOperation] = []
    rows: list[cst.BinaryOperation] = []
    cmps: list[tuple[cst.Comparison, int]] = []
    involved: set[str] = set()
    blocks: set[str] = set()
    # stride -> every product multiplies an aligned index (a unit stride keeps it aligned)
    unit_ok: dict[str, bool] = {}
    for call in (n for n in walk(k.node) if isinstance(n, cst.Call) and call_name(n) in ("tl.load", "tl.store")):
        pos = positional(call)
        if not pos or call.args[0].keyword is not None:
            continue
        terms = _add_terms(pos[0], defs)
        lane_blocks: set[str] = set()
        if any(isinstance(x, cst.Name) and index.name(x.value, lane_blocks) for x in terms):
            for prod, stride in _row_products(terms, incs, ints, index):  # scalar row offsets next to 1-D lanes
                if not any(prod is r for r in rows):
                    rows.append(prod)
                    involved.add(stride)
                    blocks |= lane_blocks
        # the address itself and the terms of the pointer variables it reads (``a_ptrs = a_ptr + (offs_am[:, None]
        # * stride_am + ...)`` then ``tl.load(a_ptrs)``; a ``+=`` advance keeps the products' alignment)
        for n in (m for root in (pos[0], *terms) for m in walk(root)):
            if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Multiply):
                if any(n is s_ for s_ in strides):
                    continue
                for a, b in ((n.left, n.right), (n.right, n.left)):
                    bc = broadcast_index(a)
                    if bc and isinstance(b, cst.Name) and b.value in ints:
                        strides.append(n)
                        involved.add(b.value)
                        aligned = index.name(bc[0], blocks)
                        unit_ok[b.value] = unit_ok.get(b.value, True) and aligned
                        break
        mask = arg_value(call, "mask", 2 if call_name(call) == "tl.store" else 1)
        if isinstance(mask, cst.Name) and mask.value in defs:  # mask = cols < n, assigned once
            mask = defs[mask.value]
        for n in walk(mask) if mask is not None else []:
            if not (isinstance(n, cst.Comparison) and len(n.comparisons) == 1
                    and isinstance(n.comparisons[0].operator, cst.LessThan)) or any(n is c for c, _ in cmps):
                continue
            bc, right = broadcast_index(n.left), n.comparisons[0].comparator
            if not (isinstance(right, cst.Name) and right.value in ints):
                continue
            if bc and index.name(bc[0], blocks):
                cmps.append((n, bc[1]))
                involved.add(right.value)
            elif isinstance(n.left, cst.Name) and index.name(n.left.value, blocks):  # 1-D lanes: cols < n
                cmps.append((n, -1))
                involved.add(right.value)
    wraps = [(w, n) for w, n in index.wraps if any(w is m for x in (*strides, *rows, *(c for c, _ in cmps))
                                                   for m in _index_nodes(x, index))]
    others: list[cst.CSTNode] = [*strides, *rows, *(c for c, _ in cmps)]
    wraps = [(w, n) for w, n in wraps if not any(w is m for o in others for m in walk(o))]  # inline: left as is
    involved |= {n for _, n in wraps}
    if not strides and not rows and not cmps:
        return (f"{k.name} has no broadcast stride products, row offsets next to lane indices, or arange-based bound "
                "checks in its loads/stores")
    hinted: list[cst.CSTNode] = [*strides, *rows, *(c for c, _ in cmps), *(w for w, _ in wraps)]
    if any(o is not n and any(m is n for m in walk(o)) for n in hinted for o in hinted):
        return f"{k.name}: nested stride products; hints would overlap"
    args: list[str] = []
    bound = _host_names(t.tree.module)
    for site in t.sites:
        loose_site = sorted(set().union(*(_read_names(a.value) for a in site.call.args)) - bound)
        if loose_site:  # e.g. META[...] outside the grid lambda: the launch itself is broken; adding to it hides that
            return f"the launch of {k.name} reads names bound nowhere in the host code ({', '.join(loose_site)})"
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
            vals = _config_values(t, name) if k.autotuned else None
            if vals is None or any(v % 8 for v in vals):
                return f"block size {name} is neither passed at the launch nor a multiple of 8 in every config"
        args.append(", ".join(texts))
    anchor = _import_block_end(t.tree.module)
    if anchor is None:
        return "no import block to put the helper after"
    return _Plan(strides, rows, cmps, [w for w, _ in wraps], involved, blocks, args, anchor)


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
        return [{"kernel": t.kernel.name, "hinted": len(plan.strides) + len(plan.rows) + len(plan.cmps)}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        p = _plan(t)
        assert not isinstance(p, str)
        for n in p.strides:
            t.tree.edit(n, lambda m: _wrap(m, "tl.multiple_of", f"[{PARAM}, {PARAM}]"))
        for n in p.rows:
            t.tree.edit(n, lambda m: _wrap(m, "tl.multiple_of", PARAM))
        for w in p.wraps:
            t.tree.edit(w, lambda m: _wrap(_wrap(m, "tl.multiple_of", PARAM), "tl.max_contiguous", PARAM))
        for c, axis in p.cmps:
            shape = PARAM if axis == -1 else f"[1, {PARAM}]" if axis == 1 else f"[{PARAM}, 1]"
            t.tree.edit(c, functools.partial(_wrap, head="tl.max_constancy", tail=shape))
        t.tree.add_params(t.kernel.node, [f"{PARAM}: tl.constexpr"])
        for site, text in zip(t.sites, p.args, strict=True):
            t.tree.add_keyword(site.call, PARAM, f"{HELPER}({text})")
        helper = statements(_HELPER_SRC)
        helper[0] = helper[0].with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
        t.tree.insert_after(p.anchor, helper)
        rows = f", {len(p.rows)} row offset(s) hinted tl.multiple_of" if p.rows else ""
        rows += f", {len(p.wraps)} wrapped index(es) (% n) hinted ALIGN-contiguous" if p.wraps else ""
        return (f"{t.kernel.name}: {len(p.strides)} stride product(s) hinted tl.multiple_of{rows} and "
                f"{len(p.cmps)} bound check(s) tl.max_constancy, by {PARAM} = largest of 8/4/2 dividing "
                f"{', '.join(sorted(p.involved | p.blocks))} at each launch (1: no hint)")


def count_async_copies(ptx: str) -> tuple[int, int]:
    """(cp.async copies, global loads) in PTX: the evidence this rewrite is about."""
    cp = sum(1 for ln in ptx.splitlines() if re.search(r"cp\.async\.c[ag]\.", ln))
    return cp, sum(1 for ln in ptx.splitlines() if "ld.global" in ln)

