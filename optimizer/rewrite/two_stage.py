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

When the programs are many and each reduces only a small block (a 1-D grid ``(cdiv(n, B),)``, the atomic the
last top-level statement, no early return, only ``tl.program_id(0)``), the first points also make the grid
persistent: ``min(cdiv(n, B), P)`` programs each loop over the original programs' blocks
(``for blk in range(tl.program_id(0), n_blocks, tl.num_programs(0))``, the body unchanged with the program id
replaced by ``blk``) and accumulate their share in fp32 before storing one partial, so the second pass adds at
most P partials instead of one per block (P = 2048, then 512; the plain form is the last point).
A persistent point that would leave a recorded case below one program per SM (or shrink a grid already below it)
is dropped by the grid-fill guard (``grid_fill``); the vector form's 64-program point is, wherever a case had 132.

A block-valued atomic into pid-independent addresses (``tl.atomic_add(out_ptr + cols, x, mask=cols < N)`` from
every row program: column sums, bias gradients) takes the vector form of ``two_stage_vector.py``: a persistent
loop accumulating an fp32 register row, one partial row per program, and a second pass over the rows.

The second kernel sums the partials in a fixed order (a [BLOCK] fp32 vector accumulator over chunks, then one
tree reduction) and adds the total to the output, so the result no longer depends on the order in which programs
finish and whatever the output held before the launch (zeros, a bias) is kept, as with the atomic.
``tl.atomic_max`` / ``tl.atomic_min`` (merged by max / min), the two branches of one if/else, independent atomics
on several targets, and grids over ``META`` take the extensions of ``two_stage_merge.py`` (plain form only).
Refused, with the reason: vector atomics outside the vector form's domain, atomics in loops or other branches,
masked scalar atomics, atomic_xchg/cas and mixed operations on one target (their merge differs), a
program-dependent target (that is a scatter, not a same-address reduction).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import libcst as cst

from optimizer.kernel.flow import rank_of
from optimizer.rewrite.common import (
    call_arg,
    fresh,
    host_arg_text,
    launch_statement,
    meta_grid_of,
    single_site_reasons,
    statement_reasons,
    top_statement,
)
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.grid_fill import grid_programs
from optimizer.rewrite.persistent import body, loop_lines, persistent_grid, persistent_reasons, replace_body
from optimizer.rewrite.tree import arg_value
from optimizer.rewrite.two_stage_merge import MERGES, alternatives, finish_source, meta_programs
from optimizer.rewrite.two_stage_vector import vector_reasons, vector_rewrite

__all__ = ["TwoStageReduction"]

def _target_param(t: Target, ptr: cst.BaseExpression) -> tuple[str, str] | None:
    """(pointer parameter, integer offset text) for ``p`` or ``p + 3``."""
    if isinstance(ptr, cst.Name) and ptr.value in t.kernel.params:
        return ptr.value, "0"
    if (isinstance(ptr, cst.BinaryOperation) and isinstance(ptr.operator, cst.Add) and isinstance(ptr.left, cst.Name)
            and ptr.left.value in t.kernel.params and isinstance(ptr.right, cst.Integer)):
        return ptr.left.value, ptr.right.value
    return None


class TwoStageReduction:
    """Same-address tl.atomic_add / max / min -> per-program partials plus a deterministic second-pass kernel."""

    kind = "two_stage_reduction"
    card = "two-stage-reduction"

    def _atomic(self, t: Target):
        same = t.facts.same_address_atomics
        return same[0] if len(same) == 1 else None

    @staticmethod
    def _groups(t: Target) -> dict[str, list[Any]]:
        """Target pointer -> its same-address atomics (one, or the two branches of an if/else), in source order."""
        groups: dict[str, list[Any]] = {}
        for x in t.facts.same_address_atomics:
            groups.setdefault(x.pointer, []).append(x)
        return groups

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        same = t.facts.same_address_atomics
        if not same:
            return ["no atomic hits the same address from every program"]
        out = single_site_reasons(t, meta_grid=True, decorated=True) + statement_reasons(t)
        groups = self._groups(t)
        for xs in groups.values():  # each target independently: its own partials and second pass
            a = xs[0]
            if len(xs) > 1:
                out += [why] if (why := alternatives(t, [x.node for x in xs])) else []
            elif a.in_loop or top_statement(t, a.node) is None:
                out.append(f"{a.op}({a.pointer}) is not a top-level statement (in a loop, a branch, or its value used)")
            if len({x.op for x in xs}) > 1 or a.op not in MERGES:
                out.append(f"{', '.join(sorted({x.op for x in xs}))} on {a.pointer} merge differently from one sum, "
                           "max or min (only tl.atomic_add, tl.atomic_max or tl.atomic_min, one per target, is "
                           "rewritten)")
            if any(arg_value(x.node, "val", 1) is None for x in xs):
                out.append(f"{a.op}({a.pointer}, ...) passes its value through *args (the rewrite reads it)")
        out += [why] if (why := meta_programs(t)[1]) else []
        if out:
            return out
        a = same[0]
        blocks = [x for x in same if rank_of(t.kernel.node, call_arg(x.node, "val", 1)) > 0]
        if blocks and (len(same) > 1 or a.op != "tl.atomic_add" or meta_grid_of(t) is not None):
            return [f"the value of {blocks[0].op}({blocks[0].pointer}) is a block: the vector form handles one "
                    "top-level tl.atomic_add under a tuple grid"]
        if self._vector(t):
            vec = persistent_reasons(t, a) + vector_reasons(t, a)
            val = t.tree.code(call_arg(a.node, "val", 1))  # tested above
            return [f"the added value {val} is a block, not a scalar per program, and the vector form does not apply: "
                    f"{'; '.join(vec)}"] if vec else []
        for xs in groups.values():
            a = xs[0]
            if any(x.mask is not None for x in xs):
                out.append(f"{a.op}({a.pointer}) is masked")
            ptr = arg_value(a.node, "pointer", 0)
            target = _target_param(t, ptr) if ptr is not None else None
            if target is None:
                out.append(f"target {a.pointer} is not a pointer parameter (plus an integer literal)")
            elif host_arg_text(t, target[0]) is None:
                out.append(f"the launch does not pass the output pointer {target[0]}")
        return out

    def _vector(self, t: Target) -> bool:
        a = self._atomic(t)
        val = arg_value(a.node, "val", 1) if a is not None else None
        return val is not None and rank_of(t.kernel.node, val) > 0

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        block = int(params.get("block", 1024))
        plain = {"second_stage_block": block}
        if self._vector(t):  # partial rows of n_out floats per program: fewer programs than the scalar form
            return [{"form": "vector", "programs": int(p)} for p in params.get("vector_programs") or (256, 64)]
        a = self._atomic(t)
        if a is None or persistent_reasons(t, a) or a.op != "tl.atomic_add":
            return [plain]  # the persistent loop accumulates a sum of one atomic's values
        return [
            *({"second_stage_block": block, "programs": int(p)} for p in params.get("programs") or (2048, 512)),
            plain,
        ]

    def programs_after(
        self, t: Target, ctx: RecipeContext, point: dict[str, Any], rec: Mapping[str, Any]
    ) -> int | None:
        """A persistent point launches ``min(G, P)`` programs of a recorded 1-D grid ``(G,)`` (the grid-fill guard,
        ``grid_fill``); the plain point keeps the grid (None)."""
        cap, programs = point.get("programs"), grid_programs(rec)
        return min(programs, cap) if isinstance(cap, int) and programs is not None else None

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        tree, k, site = t.tree, t.kernel, t.sites[0]
        a = self._atomic(t)
        if point.get("form") == "vector":
            assert a is not None  # preconditions: the vector form has one atomic
            return vector_rewrite(t, a, point)
        meta = meta_grid_of(t) if t.launches[0].grid_elements is None else None
        dims = len(meta[1]) if meta is not None else len(t.launches[0].grid_elements or [])
        lin = "tl.program_id(0)"
        if dims >= 2:
            lin += " + tl.num_programs(0) * (tl.program_id(1)" + (
                " + tl.num_programs(1) * tl.program_id(2))" if dims == 3 else ")"
            )
        n_prog = meta_programs(t)[0] or " * ".join(f"({g})" for g in t.launches[0].grid_elements or [])
        persistent = point.get("programs")
        stmt = launch_statement(site)  # preconditions: the launch has its own statement line
        done, new_params = [], []
        for i, xs in enumerate(self._groups(t).values()):
            x0 = xs[0]
            target = _target_param(t, call_arg(x0.node, "pointer", 0))
            assert target is not None  # preconditions: each target is a pointer parameter (plus a literal)
            param, offset = target
            out_host = host_arg_text(t, param)
            partials = fresh(t, "partials_tsr" + (str(i + 1) if i else ""))
            finish = fresh(t, f"{k.name}_finish" + (str(i + 1) if i else ""))
            if persistent:  # one atomic: the body above it loops over the original programs; one partial store after
                assert a is not None
                val = tree.code(call_arg(a.node, "val", 1))  # preconditions: passed, not through *args
                n_blocks, n_prog, g0 = persistent_grid(t, persistent)
                blk, acc = fresh(t, "blk_ts"), fresh(t, "acc_ts")
                replace_body(t, [f"{acc} = tl.zeros([], dtype=tl.float32)",
                                 *loop_lines(t, body(t)[:-1], blk, n_blocks), f"    {acc} += ({val}).to(tl.float32)",
                                 f"tl.store({partials} + tl.program_id(0), {acc})"])
                new_params += [partials, n_blocks]
                tree.add_keyword(site.call, n_blocks, g0)
            else:
                for x in xs:  # one, or the branches of one if/else (alternatives)
                    tree.replace(x.node, f"tl.store({partials} + {lin}, {tree.code(call_arg(x.node, 'val', 1))})")
                new_params.append(partials)
            if x0.op != "tl.atomic_add":  # the merge's identity in every slot: the output's value, in its dtype
                alloc = f"{out_host}.reshape(-1)[{offset}:{offset} + 1].repeat({n_prog})"
            else:  # slots of programs a META grid does not launch must add nothing
                alloc = (f"torch.{'zeros' if meta is not None else 'empty'}({n_prog}, device={out_host}.device, "
                         "dtype=torch.float32)")
            tree.insert_before(stmt, f"{partials} = {alloc}\n")
            tree.add_keyword(site.call, partials, partials)
            tree.insert_after(stmt, f"{finish}[(1,)]({partials}, {out_host}, {partials}.numel(), {offset}, "
                                    f"BLOCK={point['second_stage_block']})\n")
            tree.insert_after(k.node, finish_source(x0.op, finish, k.name))
            done.append(f"{x0.op}({x0.pointer}) -> {partials} merged by {finish} ({MERGES[x0.op][1]})")
        tree.add_params(k.node, new_params)
        return (f"{k.name}: same-address atomics from every program -> one partial per program ({n_prog} programs"
                + (" at most" if meta is not None else "")
                + (", each looping over the original programs' blocks" if persistent else "")
                + f"), a one-program pass per target in a fixed order: {'; '.join(done)}")
