"""``two_stage_reduction``: same-address atomics -> per-program partials and a deterministic second pass.

Domain (card ``two-stage-reduction``, feature ``same_address_atomic``): a kernel whose programs each add one
scalar into the same address with ``tl.atomic_add(out_ptr, value)`` (a full sum, a loss mean), as a top-level
statement outside loops and branches, unmasked, its old value unused; the pointer is a parameter, optionally
plus an integer literal; one launch with a tuple grid. Before::

    tl.atomic_add(out_ptr, tl.sum(x, axis=0))           # every program serializes on one L2 line

After::

    tl.store(partials_tsr + tl.program_id(0), tl.sum(x, axis=0))
    # host, around the launch:
    partials_tsr = torch.empty(<programs>, device=out.device, dtype=torch.float32)
    kernel[grid](..., partials_tsr=partials_tsr)
    two_stage_finish[(1,)](partials_tsr, out, partials_tsr.numel(), 0, BLOCK=1024)

The second kernel sums the partials in a fixed order (a [BLOCK] fp32 vector accumulator over chunks, then one
tree reduction) and adds the total to the output, so the result no longer depends on the order in which programs
finish and whatever the output held before the launch (zeros, a bias) is kept, as with the atomic.
Refused, with the reason: vector atomics, atomics in loops or branches, masked atomics, atomic_max/min/xchg/cas
(their merge differs), a program-dependent target (that is a scatter, not a same-address reduction).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.recipes.base import RecipeContext
from optimizer.rewrite.common import fresh, host_arg_text, single_site_reasons
from optimizer.rewrite.engine import Target
from optimizer.rewrite.facts import rank_of
from optimizer.rewrite.tree import arg_value

__all__ = ["TwoStageReduction"]

_FINISH = '''
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


def _target_param(t: Target, ptr: cst.BaseExpression) -> tuple[str, str] | None:
    """(pointer parameter, integer offset text) for ``p`` or ``p + 3``."""
    if isinstance(ptr, cst.Name) and ptr.value in t.kernel.params:
        return ptr.value, "0"
    if (isinstance(ptr, cst.BinaryOperation) and isinstance(ptr.operator, cst.Add) and isinstance(ptr.left, cst.Name)
            and ptr.left.value in t.kernel.params and isinstance(ptr.right, cst.Integer)):
        return ptr.left.value, ptr.right.value
    return None


class TwoStageReduction:
    """Same-address tl.atomic_add -> per-program partials plus a deterministic second-pass kernel."""

    kind = "two_stage_reduction"
    card = "two-stage-reduction"

    def _atomic(self, t: Target):
        same = t.facts.same_address_atomics
        return same[0] if len(same) == 1 else None

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        same = t.facts.same_address_atomics
        if not same:
            return ["no atomic hits the same address from every program"]
        out = single_site_reasons(t)
        if len(same) > 1:
            out.append(f"{len(same)} same-address atomics (the rewrite handles one)")
        a = same[0]
        top = [s for s in t.kernel.node.body.body if isinstance(s, cst.SimpleStatementLine)]  # type: ignore[attr-defined]
        stmt = next((s for s in top if isinstance(s.body[0], cst.Expr) and s.body[0].value is a.node), None)
        if a.op != "tl.atomic_add":
            out.append(f"{a.op} merges differently from a sum (only tl.atomic_add is rewritten)")
        if a.in_loop or stmt is None:
            out.append(f"{a.op}({a.pointer}) is not a top-level statement (in a loop, a branch, or its value used)")
        if a.mask is not None:
            out.append(f"{a.op}({a.pointer}) is masked")
        ptr = arg_value(a.node, "pointer", 0)
        if ptr is None or _target_param(t, ptr) is None:
            out.append(f"target {a.pointer} is not a pointer parameter (plus an integer literal)")
        val = arg_value(a.node, "val", 1)
        if val is not None and rank_of(t.kernel.node, val) > 0:
            out.append(f"the added value {t.tree.code(val)} is a block, not a scalar per program")
        if not out and host_arg_text(t, _target_param(t, ptr)[0]) is None:  # type: ignore[index,arg-type]
            out.append("the launch does not pass the output pointer")
        return out

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"second_stage_block": int(params.get("block", 1024))}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        tree, k, site = t.tree, t.kernel, t.sites[0]
        a = self._atomic(t)
        assert a is not None
        param, offset = _target_param(t, arg_value(a.node, "pointer", 0))  # type: ignore[misc,arg-type]
        out_host = host_arg_text(t, param)
        partials, finish = fresh(t, "partials_tsr"), fresh(t, f"{k.name}_finish")
        dims = len(t.launches[0].grid_elements or [])
        lin = "tl.program_id(0)"
        if dims >= 2:
            lin += " + tl.num_programs(0) * (tl.program_id(1)" + (" + tl.num_programs(1) * tl.program_id(2))" if dims == 3 else ")")
        val = tree.code(arg_value(a.node, "val", 1))  # type: ignore[arg-type]
        tree.replace(a.node, f"tl.store({partials} + {lin}, {val})")
        tree.add_params(k.node, [partials])
        n_prog = " * ".join(f"({g})" for g in t.launches[0].grid_elements or [])
        tree.insert_before(site.statement, f"{partials} = torch.empty({n_prog}, device={out_host}.device, dtype=torch.float32)\n")  # type: ignore[arg-type]
        tree.add_keyword(site.call, partials, partials)
        block = point["second_stage_block"]
        tree.insert_after(site.statement, f"{finish}[(1,)]({partials}, {out_host}, {partials}.numel(), {offset}, BLOCK={block})\n")  # type: ignore[arg-type]
        tree.insert_after(k.node, _FINISH.format(name=finish, kernel=k.name))
        return (f"{k.name}: tl.atomic_add({a.pointer}, ...) from every program -> one fp32 partial per program "
                f"({partials}, {n_prog} programs) and {finish}, a one-program pass that sums them in a fixed order")
