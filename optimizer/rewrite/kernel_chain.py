"""``kernel_chain_fusion``: consecutive launches over the same grid -> one kernel (card ``kernel-chain-fusion``).

A first translation often splits one row-wise op into kernels that pass per-program values through global
buffers (naive softmax: ``row_max_kernel`` stores ``m`` at ``max_ptr + row``, ``row_sum_exp_kernel`` and
``normalize_kernel`` load it back at ``max_ptr + row``). Each kernel runs one program per row over the same grid,
so program ``p`` of a later kernel reads only what program ``p`` of an earlier one wrote: the launches fuse into
one kernel whose body is the bodies in order, and the value stays in a register. Before::

    row_max_kernel[(M,)](x, row_max, N, BLOCK=128)
    row_sum_exp_kernel[(M,)](x, row_max, row_sum, N, BLOCK=128)
    normalize_kernel[(M,)](x, row_max, row_sum, y, N, BLOCK=128)

After::

    fused_row_max_row_sum_exp_normalize_kernel[(M,)](x, N, y, BLOCK=128)   # row_max / row_sum allocations gone

    # kernel: row = tl.program_id(0); <max loop> ; <sum-of-exp loop using m> ; <normalize loop using m, s>

The result is one kernel with several passes over the row, which the one-kernel transforms take next
(``single_pass_fusion`` fuses the max and sum-of-exp loops into one online pass).

Domain, each refused with its reason:

- consecutive launch statements (``k[grid](...)``) of one block of one host function, with textually identical
  grids; the statements between them neither rebind nor mention anything the earlier launches pass (allocations
  of new buffers excepted); each kernel launched from this one place only, not autotuned / no heuristics, no
  ``return``, no parameter defaults, no ``*args``, and the same launch options (``num_warps``, ...);
- every buffer (a host argument, by its text) that one kernel of the chain writes is touched by the other kernels
  only as a *forwardable* read: a ``tl.load`` in a later kernel, in a top-level statement (not inside a loop or
  branch), at the same per-program address as the write -- the addresses are compared after substituting the
  kernels' single-assignment locals, the program id and the host text of every parameter, so ``max_ptr + row``
  with ``row = tl.program_id(0)`` matches in both kernels, and so does an element-wise block ``h_ptr + offs`` with
  ``offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)`` and the same BLOCK. The write is one top-level
  ``tl.store`` whose address depends on the program id; the read's mask is the write's (or the write is
  unmasked). Refused: a read at another location (another row, a scan carry, a second pass over every partial,
  which needs a grid-wide barrier), a read before the write, two writers, atomics on a shared buffer, writes or
  reads inside loops, and host arguments that may alias a written buffer (``T`` and ``T[1:]``).

When the launches' grids differ because a later kernel is a flat element-wise kernel that finds its row by
``offs // D``, the applier first regrids it to one program per row (``optimizer.rewrite.row_regrid``), then fuses.

The program-id mapping matters only through those addresses: kernels that share no written buffer may map
program ids differently (each program runs every body for its own id, as the separate launches did).

Rewrite: one ``@triton.jit`` kernel (it replaces the first kernel; the others are removed when nothing else names
them) whose parameters are the union of the kernels' (one parameter per distinct host argument, renamed where
names clash), whose body is the bodies in order (``v = tl.program_id(a)`` once; a name first bound inside a loop
of a later kernel that an earlier kernel binds at the top level is renamed, since Triton would carry it around the
loop); each forwarded load becomes the stored value (``tl.where(mask, value, other)`` when the load has
``other=``), bound to a fresh name at the store when the stored expression is not a name left unchanged until
the read. A store is dropped when the host does not name the buffer outside its allocation and the chain (or names
it only as the template of another allocation, ``torch.empty_like(buf)``): scratch. The allocation is the ``buf =
torch.empty/zeros/..._like(...)`` that runs before the chain, in its block or in a block around it (a chain inside
a host loop over scratch allocated once before the loop: each iteration reads only what it just wrote, so nothing
crosses iterations); its parameter goes when nothing else reads it, and its allocation with it when no remaining
allocation takes it as a template. A value bound for a buffer of known dtype other than float32 (an explicit
``dtype=``, or followed through ``torch.empty_like``) is cast to it (``.to(tl.bfloat16)``); of unknown dtype
(``torch.empty_like`` of an argument), to the buffer's element type (``.to(p.dtype.element_ty)``, the parameter
kept); for a float32 buffer it is forwarded as it is (the round trip would only have widened it). One launch at the
last launch's place, the earlier launch statements removed.
"""

from __future__ import annotations

from typing import Any

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.kernel_chain_analysis import Chain, block_of, grid_text, launch_stmt
from optimizer.rewrite.kernel_chain_emit import rewrite_chain

__all__ = ["KernelChainFusion"]


# ------------------------------------------------------------------------------------------------ the transform
def _chains(t: Target) -> tuple[list[str], list[Chain]]:
    """Candidate windows around the target's launch, longest first, and the reasons when there is none."""
    if len(t.sites) != 1:
        return [f"launched from {len(t.sites)} places (a chain needs each kernel launched once)"], []
    site = t.sites[0]
    if site.function is None or site.statement is None:
        return ["not launched from a function"], []
    block = block_of(site.function, site.statement)
    if block is None:
        return ["the launch statement is not in a block"], []
    launched = {i: ls for i, s in enumerate(block) if (ls := launch_stmt(t.tree, s)) is not None}
    idx = list(launched)
    me = next((i for i in idx if block[i] is site.statement), None)
    if me is None:
        return ["the launch is not a statement of its own (`kernel[grid](...)`)"], []
    grid = grid_text(site)
    pos = idx.index(me)
    lo = hi = pos
    reasons = []
    while lo > 0 and grid_text(launched[idx[lo - 1]]) == grid:
        lo -= 1
    while hi + 1 < len(idx) and grid_text(launched[idx[hi + 1]]) == grid:
        hi += 1
    for j in (lo - 1, hi + 1):
        if 0 <= j < len(idx):
            other = launch_stmt(t.tree, block[idx[j]])
            assert other is not None
            reasons.append(f"{other.kernel}{grid_text(other)} and {t.kernel.name}{grid} launch different grids")
    if hi == lo:
        return reasons or ["no other launch in the same block"], []
    run = idx[lo:hi + 1]
    me_pos = run.index(me)
    windows = [run[s:s + n] for n in range(len(run), 1, -1) for s in range(0, len(run) - n + 1) if s <= me_pos < s + n]
    chains = []
    for w in windows:
        c = Chain(t.tree, site.function, block, w)
        if not c.reasons:
            chains.append(c)
        elif w is windows[0]:
            reasons = [f"{'+'.join(k.name for k in c.kernels) or 'the chain'}: {r}" for r in c.reasons] + reasons
    return reasons, chains


class KernelChainFusion:
    """Consecutive launches over one grid whose kernels pass per-program values through buffers -> one kernel."""

    kind = "kernel_chain_fusion"
    card = "kernel-chain-fusion"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        reasons, chains = _chains(t)
        return [] if chains else reasons

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"kernels": [k.name for k in c.kernels]} for c in _chains(t)[1]][:1]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        chain = next(c for c in _chains(t)[1] if [k.name for k in c.kernels] == point["kernels"])
        return rewrite_chain(t.tree, chain)
