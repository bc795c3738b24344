"""The vector form of ``two_stage_reduction``: every program adds a vector into the same addresses.

Domain: the one ``tl.atomic_add(P + OFFS, V[, mask=M])`` of the kernel is its last top-level statement, on a 1-D
tuple grid; ``P`` is a pointer parameter; ``OFFS`` (a name) and ``M`` do not depend on the program id (so every
program hits the same ``len(OFFS)`` addresses: column sums, bias gradients ``db = sum over rows``, a small
per-class vector); the statements that define them read only parameters and each other, so they can move above a
loop. Before::

    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0)
    tl.atomic_add(out_ptr + cols, x, mask=mask)          # M programs serialize on each of the N addresses

After::

    cols = tl.arange(0, BLOCK_N)                          # hoisted: the same for every program
    mask = cols < N
    acc = tl.zeros(cols.shape, dtype=tl.float32)
    for blk in range(tl.program_id(0), n_blocks, tl.num_programs(0)):   # min(M, P) programs
        row = blk
        x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0)
        acc += tl.where(mask, x, 0.0).to(tl.float32)
    tl.store(partials + tl.program_id(0) * n_out + cols, acc, mask=mask)
    # host: partials = torch.zeros(min(M, P), out.numel()); then a second kernel adds the partial rows to out
    # in a fixed order (a [32, 128] tile per step), column chunks in parallel.

Deterministic, and what the output held before (zeros, a bias) is kept, as with the atomic.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.kernel.flow import assigned as _targets
from optimizer.kernel.flow import names as _names
from optimizer.rewrite.common import call_arg, fresh, host_arg_text, launch_statement
from optimizer.rewrite.engine import Target
from optimizer.rewrite.persistent import body, loop_lines, persistent_grid, replace_body
from optimizer.rewrite.tree import arg_value, body_of, call_name, skip_ids, walk

__all__ = ["FINISH_VECTOR", "vector_reasons", "vector_rewrite"]

FINISH_VECTOR = '''
@triton.jit
def {name}(partials_ptr, out_ptr, n_partials, n_out, BLOCK_P: tl.constexpr, BLOCK: tl.constexpr):
    """Second stage of {kernel}: add the per-program partial rows to the output in a fixed order."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n_out
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for p0 in range(0, n_partials, BLOCK_P):
        rows = p0 + tl.arange(0, BLOCK_P)
        tile = tl.load(partials_ptr + rows[:, None] * n_out + offs[None, :],
                       mask=(rows[:, None] < n_partials) & m[None, :], other=0.0)
        acc += tl.sum(tile, axis=0)
    old = tl.load(out_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, (old.to(tl.float32) + acc).to(out_ptr.dtype.element_ty), mask=m)
'''


def _read(e: cst.CSTNode) -> set[str]:
    """Variables read in ``e`` (not attribute or keyword names, not the ``tl`` module)."""
    return _names(e, frozenset(skip_ids(e))) - {"tl", "triton"}


def _defs(t: Target) -> dict[str, list[cst.SimpleStatementLine]]:
    """Top-level statements by the names they assign."""
    out: dict[str, list[cst.SimpleStatementLine]] = {}
    for stmt in t.kernel.node.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets, _ = _targets(small)
                for name in targets:
                    out.setdefault(name, []).append(stmt)
    return out


def hoistable(t: Target, names: set[str]) -> tuple[list[cst.BaseStatement], list[str]]:
    """The top-level statements defining ``names`` (and what they read), in order, if each is assigned once from
    parameters, constants and each other with no program id, load or atomic; else the reasons."""
    defs, params = _defs(t), set(t.kernel.params)
    need, seen, why = sorted(names), set(), []  # a list in name order: the reasons read the same on every run
    stmts: list[cst.BaseStatement] = []
    while need:
        name = need.pop(0)
        if name in seen or name in params or name in ("tl", "triton"):
            continue
        seen.add(name)
        found = defs.get(name, [])
        if len(found) != 1:
            why.append(f"{name} is assigned {len(found)} times at the top level (not once)")
            continue
        stmt = found[0]
        calls = {call_name(n) for n in walk(stmt) if isinstance(n, cst.Call)}
        if calls & {"tl.program_id", "tl.load", "tl.atomic_add", "tl.num_programs"}:
            why.append(f"{name} depends on the program id or on memory")
            continue
        if stmt not in stmts:
            stmts.append(stmt)
        for small in stmt.body:
            _, value = _targets(small)
            if value is not None:
                need += sorted(_read(value))
    order = body_of(t.kernel.node)
    return sorted(stmts, key=order.index), why


def vector_reasons(t: Target, a: Any) -> list[str]:
    """Why the vector form does not apply (empty: it does)."""
    ptr = arg_value(a.node, "pointer", 0)
    if not (isinstance(ptr, cst.BinaryOperation) and isinstance(ptr.operator, cst.Add)
            and isinstance(ptr.left, cst.Name) and ptr.left.value in t.kernel.params
            and isinstance(ptr.right, cst.Name)):
        return [f"target {a.pointer} is not a pointer parameter plus a name"]
    mask = arg_value(a.node, "mask", 3)
    names = {ptr.right.value} | (_read(mask) if mask is not None else set())
    _, why = hoistable(t, names - set(t.kernel.params))
    if host_arg_text(t, ptr.left.value) is None:
        why.append("the launch does not pass the output pointer")
    return why


def vector_rewrite(t: Target, a: Any, point: dict[str, Any]) -> str:
    """Edit ``t.tree`` into the persistent vector form (see the module docstring); returns the description."""
    tree, k, site = t.tree, t.kernel, t.sites[0]
    ptr = arg_value(a.node, "pointer", 0)
    # vector_reasons passed: the pointer is param + offs, two names
    assert isinstance(ptr, cst.BinaryOperation) and isinstance(ptr.left, cst.Name) and isinstance(ptr.right, cst.Name)
    param, offs = ptr.left.value, ptr.right.value
    mask_node = arg_value(a.node, "mask", 3)
    mask = tree.code(mask_node) if mask_node is not None else None
    val = tree.code(call_arg(a.node, "val", 1))  # the vector form: its value is a block, so passed
    hoisted, _ = hoistable(t, {offs} | (_read(mask_node) if mask_node is not None else set()) - set(k.params))
    out_host = host_arg_text(t, param)
    partials, finish = fresh(t, "partials_tsr"), fresh(t, f"{k.name}_finish")
    n_blocks, progs, g0 = persistent_grid(t, point["programs"])
    n_out, blk, acc = (fresh(t, n) for n in ("n_out_ts", "blk_ts", "acc_ts"))
    add = f"tl.where({mask}, {val}, 0.0)" if mask else f"({val})"
    store_mask = f", mask={mask}" if mask else ""
    replace_body(t, [*(tree.module.code_for_node(s).strip("\n") for s in hoisted),
                     f"{acc} = tl.zeros({offs}.shape, dtype=tl.float32)",
                     *loop_lines(t, [s for s in body(t)[:-1] if s not in hoisted], blk, n_blocks),
                     f"    {acc} += {add}.to(tl.float32)",
                     f"tl.store({partials} + tl.program_id(0) * {n_out} + {offs}, {acc}{store_mask})"])
    tree.add_params(k.node, [partials, n_blocks, n_out])
    stmt = launch_statement(site)  # the caller's preconditions: the launch has its own statement line
    tree.insert_before(stmt, f"{partials} = torch.zeros(({progs}, {out_host}.numel()), "
                             f"device={out_host}.device, dtype=torch.float32)\n")
    tree.add_keyword(site.call, partials, partials)
    tree.add_keyword(site.call, n_blocks, g0)
    tree.add_keyword(site.call, n_out, f"{out_host}.numel()")
    tree.insert_after(stmt, f"{finish}[(triton.cdiv({out_host}.numel(), 128),)]({partials}, {out_host}, "
                            f"{partials}.shape[0], {out_host}.numel(), BLOCK_P=32, BLOCK=128)\n")
    tree.insert_after(k.node, FINISH_VECTOR.format(name=finish, kernel=k.name))
    return (f"{k.name}: tl.atomic_add({a.pointer}, <vector>) from every program -> {progs} persistent programs, "
            f"each adding its blocks' vectors in an fp32 register row stored to {partials}, and {finish}, a second "
            "pass that adds the partial rows in a fixed order (column chunks in parallel)")
