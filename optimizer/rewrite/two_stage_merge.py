"""``two_stage_reduction`` beyond one top-level ``tl.atomic_add``: max/min merges, branch alternatives, META grids.

Four extensions of the scalar form (``two_stage.py``), each with its domain:

- **merge**: ``tl.atomic_max`` / ``tl.atomic_min`` as well as ``tl.atomic_add``. The partials hold the output's
  dtype (a max or min is exact in it), and the second stage combines them with the output's current value by the
  same operation (``tl.maximum`` / ``tl.minimum`` over a vector, then ``tl.max`` / ``tl.min``), in a fixed order.
  NaN inputs are outside the domain (an atomic's NaN ordering and ``tl.maximum``'s differ).
- **alternatives**: several same-address atomics on one target that are the branches of one top-level
  ``if``/``else`` (each branch exactly one atomic statement, the same operation): every program runs exactly one
  of them, so each becomes the store of the program's partial (``if tl.constexpr(hip): atomic_max(p, v,
  sem="relaxed") else: atomic_max(p, v)``).
- **targets**: same-address atomics on different targets (``out_ptr`` and ``out_ptr + 1``: a sum and a max in
  one pass), each a top-level statement (or a pair of alternatives) whose value is unused, are independent: each
  target gets its own partials buffer and second pass, merged by its own operation (plain form only).
- **META grid**: a grid over the meta-parameters (``lambda meta: (cdiv(n, meta["BLOCK"]),)``) launches a number of
  programs the host learns only at the launch (the autotuner's or heuristic's block). The partials are sized for
  the most programs it can launch: the grid evaluated at the smallest value of each block it reads (the autotune
  configs' smallest, or the value the launch passes), and filled with the merge's identity (zeros for a sum, the
  output's value for a max / min), so the slots of programs that were not launched leave the result unchanged.
  Refused when the grid reads a meta-parameter whose smallest value the source does not spell out.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.rewrite.autotune_configs import parsed_configs
from optimizer.rewrite.common import meta_grid_of, meta_keys
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import walk

__all__ = ["MERGES", "alternatives", "finish_source", "meta_programs"]

#: atomic -> (elementwise merge, reduction) of its second stage
MERGES = {"tl.atomic_add": ("", "tl.sum"), "tl.atomic_max": ("tl.maximum", "tl.max"),
          "tl.atomic_min": ("tl.minimum", "tl.min")}

_SUM = '''
@triton.jit
def {name}(partials_ptr, out_ptr, n_partials, offset, BLOCK: tl.constexpr):
    """Second stage of {kernel}: sum the per-program partials in a fixed order, add the total to the output."""
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_partials, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partials_ptr + offs, mask=offs < n_partials, other=0.0)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + offset, tl.load(out_ptr + offset) + total)
'''

_EXTREME = '''
@triton.jit
def {name}(partials_ptr, out_ptr, n_partials, offset, BLOCK: tl.constexpr):
    """Second stage of {kernel}: the {what} of the output's value and the per-program partials, in a fixed order."""
    cur = tl.load(out_ptr + offset)
    acc = tl.zeros([BLOCK], dtype=cur.dtype) + cur
    for start in range(0, n_partials, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        part = tl.load(partials_ptr + offs, mask=offs < n_partials, other=0)
        acc = {merge}(acc, tl.where(offs < n_partials, part, acc))
    tl.store(out_ptr + offset, {reduce}(acc, axis=0))
'''


def finish_source(op: str, name: str, kernel: str) -> str:
    if op == "tl.atomic_add":
        return _SUM.format(name=name, kernel=kernel)
    merge, reduce = MERGES[op]
    return _EXTREME.format(name=name, kernel=kernel, merge=merge, reduce=reduce, what=reduce.removeprefix("tl."))


def _atomic_only(suite: cst.BaseSuite) -> cst.Call | None:
    body = suite.body if isinstance(suite, cst.IndentedBlock) else []
    if len(body) == 1 and isinstance(s := body[0], cst.SimpleStatementLine) and len(s.body) == 1 \
            and isinstance(e := s.body[0], cst.Expr) and isinstance(e.value, cst.Call):
        return e.value
    return None


def alternatives(t: Target, calls: list[cst.Call]) -> str:
    """Why the atomic calls ``calls`` (two or more, one target) are not the branches of one top-level if/else."""
    for stmt in t.kernel.node.body.body:
        if isinstance(stmt, cst.If) and isinstance(stmt.orelse, cst.Else):
            branches = [_atomic_only(stmt.body), _atomic_only(stmt.orelse.body)]
            if {id(c) for c in branches if c is not None} == {id(c) for c in calls} and len(calls) == 2:
                return ""
    return (f"{len(calls)} same-address atomics on one target that are not the two branches of one top-level "
            "if/else (each branch only the atomic): a program could run several")


def meta_programs(t: Target) -> tuple[str | None, str]:
    """(the most programs the META grid can launch, as host code; why not) -- (None, "") for a tuple grid."""
    meta = meta_grid_of(t)
    if meta is None:
        return None, ""
    key, elements = meta
    cfgs = parsed_configs(t) if t.kernel.autotuned else None
    smallest: dict[str, Any] = {}
    for name in sorted({k for e in elements for k in meta_keys(e, key)}):
        values = [c["kwargs"][name] for c in cfgs or [] if name in c["kwargs"]]
        arg = t.sites[0].arg_for(t.kernel, name)
        if values and all(isinstance(v, int) for v in values):
            smallest[name] = min(values)
        elif arg is not None and isinstance(arg, cst.Integer):
            smallest[name] = int(arg.value, 0)
        else:
            return None, (f"the grid reads {key}[{name!r}], whose smallest value the source does not spell out (an "
                          "autotune config int or a literal at the launch): the partials cannot be sized")

    class _Sub(cst.CSTTransformer):
        def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:  # noqa: N802
            keys = meta_keys(original_node, key)
            if isinstance(original_node.value, cst.Name) and original_node.value.value == key and len(keys) == 1:
                return cst.Integer(str(smallest[keys.pop()]))
            return updated_node

    subbed = [e.visit(_Sub()) for e in elements]
    assert all(isinstance(e, cst.BaseExpression) for e in subbed)  # only subscripts are replaced, by integers
    if any(isinstance(n, cst.Name) and n.value == key for e in subbed if isinstance(e, cst.CSTNode) for n in walk(e)):
        return None, f"the grid uses {key} other than as {key}['<name>']"
    return " * ".join(f"({cst.Module([]).code_for_node(e)})" for e in subbed if isinstance(e, cst.CSTNode)), ""
