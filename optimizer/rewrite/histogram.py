"""``privatized_histogram``: data-indexed counting atomics (a histogram) -> per-program counts, one atomic per bin.

Domain (card ``privatized-histogram``, feature ``scatter_atomic``): a kernel with exactly one ``tl.atomic_add``,
a top-level statement outside loops and branches whose old value is unused, that adds the constant 1 (``1``,
``1.0`` or ``tl.full(shape, 1, dtype)``) at ``P + IDX``: ``P`` a pointer parameter, ``IDX`` a name assigned once
from a ``tl.load`` (optionally through ``.to(...)``) and holding a block (a bincount, MoE routing counts, token
counts); masked or not; one launch with a tuple grid whose host passes a named tensor for ``P``. Before::

    lab = tl.load(labels_ptr + offs, mask=mask, other=0)
    tl.atomic_add(counts_ptr + lab, tl.full((BLOCK,), 1, tl.int32), mask=mask)   # n atomics on C hot counters

After::

    if PRIV_BINS > 0:
        hist = tl.histogram(lab.to(tl.int32), PRIV_BINS, mask=(mask) & (lab >= 0) & (lab < PRIV_BINS))
        bins = tl.arange(0, PRIV_BINS)
        tl.atomic_add(counts_ptr + bins, hist.to(counts_ptr.dtype.element_ty), mask=(bins < n_bins) & (hist > 0))
    else:
        tl.atomic_add(counts_ptr + lab, tl.full((BLOCK,), 1, tl.int32), mask=mask)   # unchanged
    # host: kernel[grid](..., n_bins=counts.numel(),
    #                    PRIV_BINS=triton.next_power_of_2(counts.numel()) if counts.numel() <= 1024 else 0)

Each program counts its block in on-chip memory and issues at most one atomic per non-empty bin (``hist > 0``:
never more atomics than the original, at most min(BLOCK, C)); labels outside [0, numel) are dropped where the
original wrote out of bounds. More bins than the cap (``max_bins``) keep the original path. A 2-D index block is
flattened with ``tl.ravel`` (``tl.histogram`` takes 1-D int32). Refused, with the reason: a weighted histogram
(the added value is not 1), atomics other than ``tl.atomic_add``, several atomics, atomics in loops or branches,
an index computed from program ids (a scatter without contention), a scalar index.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.kernel.flow import rank_of
from optimizer.rewrite.common import fresh, launch_arg, single_site_reasons, top_statement
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import arg_value, call_name, statements, walk

__all__ = ["PrivatizedHistogram"]


def _is_one(e: cst.BaseExpression | None) -> bool:
    """``1``, ``1.0`` or ``tl.full(shape, 1, dtype)``."""
    if isinstance(e, cst.Integer | cst.Float):
        return float(e.evaluated_value) == 1.0
    if isinstance(e, cst.Call) and call_name(e) == "tl.full":
        return _is_one(arg_value(e, "value", 1))
    return False


def _loaded(e: cst.BaseExpression) -> bool:
    """``tl.load(...)``, possibly through ``.to(...)`` casts."""
    while isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute) and e.func.attr.value == "to":
        e = e.func.value
    return isinstance(e, cst.Call) and call_name(e) == "tl.load"


class PrivatizedHistogram:
    """Counting tl.atomic_add at a loaded index -> tl.histogram per program plus one atomic per non-empty bin."""

    kind = "privatized_histogram"
    card = "privatized-histogram"

    def _parts(self, t: Target):
        """(atomic access, its top-level statement, pointer parameter, index name) where the shape matches."""
        a = t.facts.atomics[0]
        stmt = top_statement(t, a.node)
        ptr = arg_value(a.node, "pointer", 0)
        p = idx = None
        if isinstance(ptr, cst.BinaryOperation) and isinstance(ptr.operator, cst.Add):
            for left, right in ((ptr.left, ptr.right), (ptr.right, ptr.left)):
                if (isinstance(left, cst.Name) and isinstance(right, cst.Name) and left.value in t.kernel.params
                        and left.value not in t.kernel.constexprs):
                    p, idx = left.value, right.value
                    break
        return a, stmt, p, idx

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        atomics = t.facts.atomics
        if len(atomics) != 1:
            return [f"{len(atomics)} atomics in the kernel (the rewrite handles exactly one)"]
        a, stmt, p, idx = self._parts(t)
        out = single_site_reasons(t)
        if a.op != "tl.atomic_add":
            out.append(f"{a.op} is not a count (only tl.atomic_add is rewritten)")
        if a.in_loop or stmt is None:
            out.append(f"{a.op}({a.pointer}) is not a top-level statement (in a loop, a branch, or its value used)")
        if not _is_one(arg_value(a.node, "val", 1)):
            out.append("weighted histogram: the added value is not the constant 1")
        if p is None or idx is None:
            out.append(f"target {a.pointer} is not a pointer parameter plus an index name")
            return out
        defs = t.tree.assignments(t.kernel.node, idx)
        if len(defs) != 1 or not _loaded(defs[0].value):
            out.append(f"index {idx} is not loaded data (assigned once from tl.load): an address computed from "
                       "program ids is a scatter without contention")
        elif rank_of(t.kernel.node, defs[0].value) == 0:
            out.append(f"index {idx} is a scalar (one label per program): nothing to count per program")
        if not out:
            host = t.sites[0].arg_for(t.kernel, p)
            if not isinstance(host, cst.Name | cst.Attribute):
                out.append(f"the launch does not pass a named tensor for {p}")
            if not any(isinstance(n, cst.Import) and any(al.evaluated_name == "triton" and al.asname is None
                                                         for al in n.names) for n in walk(t.tree.module)):
                out.append("the module does not `import triton` (the host computes triton.next_power_of_2)")
        return out

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"max_bins": int(params.get("max_bins", 1024))}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        tree, k, site = t.tree, t.kernel, t.sites[0]
        a, stmt, p, idx = self._parts(t)
        assert stmt is not None and p is not None and idx is not None
        host = tree.code(launch_arg(t, p))  # preconditions: a named tensor
        nb, pb, hist, bins = fresh(t, "n_bins"), fresh(t, "PRIV_BINS"), fresh(t, "hist"), fresh(t, "bins")
        mask = arg_value(a.node, "mask", 2)
        valid = f"({idx} >= 0) & ({idx} < {pb})"
        if mask is not None:
            valid = (tree.code(mask) if isinstance(mask, cst.Name) else f"({tree.code(mask)})") + " & " + valid
        src = f"{idx}.to(tl.int32)"
        defs = tree.assignments(k.node, idx)
        if rank_of(k.node, defs[0].value) >= 2:  # tl.histogram takes a 1-D block
            src, valid = f"tl.ravel({src})", f"tl.ravel({valid})"
        extra = "".join(f", {kw}={tree.code(v)}" for kw in ("sem", "scope") if (v := arg_value(a.node, kw)) is not None)
        text = (f"if {pb} > 0:\n"
                f"    {hist} = tl.histogram({src}, {pb}, mask={valid})\n"
                f"    {bins} = tl.arange(0, {pb})\n"
                f"    tl.atomic_add({p} + {bins}, {hist}.to({p}.dtype.element_ty), "
                f"mask=({bins} < {nb}) & ({hist} > 0){extra})\n"
                f"else:\n    pass\n")
        branch = statements(text)[0]

        def swap(old: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(old, cst.SimpleStatementLine) and isinstance(branch, cst.If)
            orelse = cst.Else(body=cst.IndentedBlock([old.with_changes(leading_lines=[])]))
            return branch.with_changes(leading_lines=old.leading_lines, orelse=orelse)

        tree.edit(stmt, swap)
        tree.add_params(k.node, [nb, f"{pb}: tl.constexpr"])
        cap = int(point["max_bins"])
        tree.add_keyword(site.call, nb, f"{host}.numel()")
        tree.add_keyword(site.call, pb, f"triton.next_power_of_2({host}.numel()) if {host}.numel() <= {cap} else 0")
        return (f"{k.name}: tl.atomic_add({a.pointer}, 1) per element -> tl.histogram of each program's block into "
                f"{pb} bins (the power of two >= {host}.numel(), up to {cap}; more bins keep the original atomics) "
                f"and one atomic per non-empty bin")
