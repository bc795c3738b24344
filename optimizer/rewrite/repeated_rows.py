"""``repeated_index_loads``: a tile load whose row (or column) index is ``offs // R`` reads every element R times ->
load each element once and repeat it in registers (card ``repeated-index-load-dedup``).

Packed sub-byte operands are the common case: an int4 GEMM (GPTQ, AWQ-style) keeps eight 4-bit weights in one int32
and builds its ``[BLOCK_K, BLOCK_N]`` weight tile with ::

    b_ptrs = b_ptr + ((offs_k[:, None] // 8) * stride_bk + offs_bn[None, :] * stride_bn)
    ...
    b = tl.load(b_ptrs)                        # [BLOCK_K, BLOCK_N] int32: rows come in runs of 8 equal rows
    b = (b >> shifter[:, None]) & 0xF

The load moves ``BLOCK_K x BLOCK_N`` words of which only ``BLOCK_K / 8 x BLOCK_N`` are distinct: on sm_90 the
weight tile is copied global -> shared with ``cp.async.cg`` (L2 only), so every packed word crosses L2 -> SM eight
times, and a small-M dequant GEMM, whose floor is reading the packed weights once, is bound by that traffic. The
rewrite loads the distinct rows and repeats them in registers::

    b_ptrs = b_ptr + (_ladder_run_heads(offs_k // 8, 8)[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    ...
    b = _ladder_repeat_rows(tl.load(b_ptrs), 8)  # [BLOCK_K // 8, BLOCK_N] loaded, [BLOCK_K, BLOCK_N] returned

``_ladder_run_heads(idx // R, R)`` is one value per run of R equal values (``tl.min`` over ``reshape(.., (B // R,
R))``); ``_ladder_repeat_rows(x, R)`` broadcasts each row R times (``reshape(broadcast_to(x[:, None, :]))``). The
values are the same as before: row ``i`` of the old tile is packed row ``idx[i] // R``, and ``idx`` is
``start + tl.arange(0, B)`` with ``start`` a multiple of a block ``B`` that R divides, so ``idx // R`` is constant on
the runs ``[jR, (j+1)R)``. ``tl.static_assert(B % R == 0)`` is added for every block the index is built from
(a launch that breaks it fails to compile instead of computing something else). The column form (``offs[None, :] //
R``) repeats columns the same way.

Domain (refused otherwise): a launched kernel; a ``tl.load`` without mask or ``other`` of a pointer name assigned
once (advanced only by ``+=`` of values with no lane index) or of an inline address, the address holding one
``idx[:, None] // R`` (or ``idx[None, :] // R``) with R an integer literal, a power of two >= 2, ``idx`` built
from ``tl.arange(0, B)`` plus multiples of constexpr blocks (``kernel.lane_index.ArangeIndex``), and no other lane
index on that axis of the address; the pointer name read by nothing but such loads and its advances.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.kernel.repeated_index import find_repeats, repeated_index_loads
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import statements

__all__ = ["HELPERS", "RepeatedIndexLoads", "repeated_index_loads"]

HELPERS = '''@triton.jit
def _ladder_run_heads(idx, R: tl.constexpr):
    """One value per run of R equal values of idx (idx // R over an arange whose runs are aligned to R)."""
    return tl.min(tl.reshape(idx, (idx.shape[0] // R, R)), axis=1)


@triton.jit
def _ladder_repeat_rows(x, R: tl.constexpr):
    """Each row of x R times in a row: the tile a load at row index idx // R returns."""
    return tl.reshape(tl.broadcast_to(x[:, None, :], (x.shape[0], R, x.shape[1])), (x.shape[0] * R, x.shape[1]))


@triton.jit
def _ladder_repeat_cols(x, R: tl.constexpr):
    """Each column of x R times in a row: the tile a load at column index idx // R returns."""
    return tl.reshape(tl.broadcast_to(x[:, :, None], (x.shape[0], x.shape[1], R)), (x.shape[0], x.shape[1] * R))
'''
_NAMES = ("_ladder_run_heads", "_ladder_repeat_rows", "_ladder_repeat_cols")


def _anchor(module: cst.Module) -> cst.BaseStatement | None:
    """The helpers go before the first ``@triton.jit`` function (after the imports and module constants)."""
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and any("jit" in cst.Module([]).code_for_node(d.decorator)
                                                     for d in stmt.decorators):
            return stmt
    return None


class RepeatedIndexLoads:
    """Loads at row index ``idx // R`` -> the distinct rows loaded once and repeated in registers."""

    kind = "repeated_index_loads"
    card = "repeated-index-load-dedup"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        found, why = find_repeats(t.kernel, t.tree)
        if found:
            return []
        if any(isinstance(s, cst.FunctionDef) and s.name.value in _NAMES for s in t.tree.module.body):
            return ["the repeat helpers are already defined (rewritten before)"]
        return why or [f"{t.kernel.name}: no tl.load whose address indexes a tile axis with `idx // R` (each element "
                       "read R times)"]

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        found, _ = find_repeats(t.kernel, t.tree)
        return [{"kernel": t.kernel.name, "loads": len(found)}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        found, _ = find_repeats(t.kernel, t.tree)
        assert found
        anchor = _anchor(t.tree.module)
        if anchor is None:
            from optimizer.rewrite.errors import NotApplicable

            raise NotApplicable("no @triton.jit function to put the repeat helpers before")
        blocks: dict[str, int] = {}
        notes = []
        for r in found:
            sub = "[:, None]" if r.axis == 0 else "[None, :]"
            t.tree.replace(r.div, f"_ladder_run_heads({r.index} // {r.factor}, {r.factor}){sub}")
            helper = "_ladder_repeat_rows" if r.axis == 0 else "_ladder_repeat_cols"
            def repeat(m: cst.CSTNode, h: str = helper, f: int = r.factor) -> cst.CSTNode:
                assert isinstance(m, cst.BaseExpression)  # the edited load
                return cst.parse_expression(f"{h}(__x__, {f})").with_changes(
                    args=[cst.Arg(m), cst.Arg(cst.Integer(str(f)))])
            t.tree.edit(r.load, repeat)
            for b in r.blocks:
                blocks[b] = max(blocks.get(b, 1), r.factor)
            notes.append(f"{r.index} // {r.factor} ({'rows' if r.axis == 0 else 'columns'})")
        body = t.kernel.node.body
        stmts = list(body.body) if isinstance(body, cst.IndentedBlock) else []
        if stmts and blocks:
            asserts = statements("".join(f'tl.static_assert({b} % {f} == 0, "{b} must be a multiple of {f}: the '
                                         f'repeated rows come in aligned runs")\n' for b, f in sorted(blocks.items())))
            first = stmts[0]
            doc = (isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr)
                   and isinstance(first.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))
            if doc:
                t.tree.insert_after(first, asserts)
            else:
                t.tree.insert_before(first, asserts)
        helpers = statements(HELPERS)
        t.tree.insert_before(anchor, helpers)
        return (f"{t.kernel.name}: {len(found)} load(s) at a repeated lane index ({', '.join(notes)}) read each "
                "element once and repeat it in registers (_ladder_repeat_rows/_cols), the index reduced to one value "
                "per run (_ladder_run_heads)")
