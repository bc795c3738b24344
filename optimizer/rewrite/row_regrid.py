"""Row regrid: a flat element-wise kernel that reads a per-row value at ``offs // D`` -> one program per row.

The preparatory step of ``kernel_chain_fusion`` when a chain's launches have different grids. A naive two-kernel
row op computes a per-row statistic on a ``(M,)`` grid and applies it in a flat kernel over all ``M * N``
elements, finding each element's row by an integer division::

    @triton.jit
    def divide_kernel(x_ptr, norm_ptr, y_ptr, n, n_cols, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        norm = tl.load(norm_ptr + offs // n_cols, mask=mask, other=1.0)   # a gather, a division per element
        tl.store(y_ptr + offs, x / norm, mask=mask)
    ...
    divide_kernel[(triton.cdiv(M * N, 256),)](x, norms, y, M * N, N, BLOCK=256)

After, one program per row walks its row in BLOCK-wide chunks; the row's value is one scalar load before the
loop, ``offs // n_cols`` is the row and ``offs % n_cols`` the column::

    row = tl.program_id(0)
    norm = tl.load(norm_ptr + row)
    for col0 in range(0, n_cols, BLOCK):
        cols = col0 + tl.arange(0, BLOCK)
        offs = row * n_cols + cols
        mask = (cols < n_cols) & (offs < n)
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(y_ptr + offs, x / norm, mask=mask)
    ...
    divide_kernel[(M,)](x, norms, y, M * N, N, BLOCK=256)

The grid is now the producer's ``(M,)``, and ``norm_ptr + row`` is the address the producer stored at, so the chain
fusion can forward it. Domain: the kernel is straight-line code whose first statements define ``offs =
tl.program_id(0) * B + tl.arange(0, B)`` (``pid`` may be named first) with a constexpr ``B``; every other use of
``offs`` is ``offs // D`` or ``offs % D`` with one kernel parameter ``D``, an address ``ptr + offs``, or the
bound ``offs < n``; a load whose address uses ``offs // D`` and not ``offs`` itself is per row (hoisted, unmasked:
every row of the new grid exists); no atomics, no reductions, no ``tl.dot``. Host: one launch with the grid
``(triton.cdiv(A * Dh, B),)`` (or ``(A * Dh + B - 1) // B``) where ``Dh`` is the host text passed for ``D``: the
rows are ``A``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import libcst as cst

from optimizer.rewrite.context import RecipeContext, RewriteResult
from optimizer.rewrite.engine import prepared_first
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.tree import Tree, arg_value, body_of, call_name, walk

__all__ = ["regrid_row_broadcast", "regridded_first"]

_NOT_ELEMENTWISE = ("tl.sum", "tl.max", "tl.min", "tl.argmax", "tl.argmin", "tl.reduce", "tl.cumsum", "tl.dot",
                    "tl.atomic_add", "tl.atomic_max", "tl.atomic_min", "tl.atomic_xchg", "tl.atomic_cas")


def _is_name(e: cst.CSTNode, name: str) -> bool:
    return isinstance(e, cst.Name) and e.value == name


def _offs_def(tree: Tree, body: list[cst.BaseStatement], constexprs: list[str]) -> tuple[int, str, str] | None:
    """(index, offs name, block) of ``offs = <pid> * B + tl.arange(0, B)`` among the top-level statements."""
    pids = {"tl.program_id(0)", "tl.program_id(axis=0)"}
    for i, st in enumerate(body):
        x = st.body[0] if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 else None
        if not (isinstance(x, cst.Assign) and len(x.targets) == 1 and isinstance(x.targets[0].target, cst.Name)):
            continue
        v = x.value
        if isinstance(v, cst.Call) and tree.code(v) in pids:
            pids.add(x.targets[0].target.value)
            continue
        if (
            isinstance(v, cst.BinaryOperation)
            and isinstance(v.operator, cst.Add)
            and isinstance(v.left, cst.BinaryOperation)
            and isinstance(v.left.operator, cst.Multiply)
            and tree.code(v.left.left) in pids
            and isinstance(v.right, cst.Call)
            and call_name(v.right) == "tl.arange"
        ):
            b = tree.code(v.left.right)
            start, end = arg_value(v.right, "start", 0), arg_value(v.right, "end", 1)
            if (
                b in constexprs
                and end is not None
                and tree.code(end) == b
                and start is not None
                and tree.code(start) == "0"
            ):
                return i, x.targets[0].target.value, b
    return None


def regrid_row_broadcast(source: str) -> tuple[str, str]:
    """The source with one flat row-broadcast kernel regridded to one program per row, and what changed; raises
    ``NotApplicable`` with every kernel's reason otherwise."""
    tree = Tree(source)
    reasons = []
    for name in tree.kernels:
        why = _try(tree, name)
        if why is None:
            return tree.render(), _DONE[0]
        reasons.append(f"{name}: {why}")
    raise NotApplicable("row regrid: " + " | ".join(reasons or ["no kernel"]))


_DONE: list[str] = [""]


def _try(tree: Tree, name: str) -> str | None:
    """Edit ``tree`` for kernel ``name`` and return None, or return why it does not apply (no edit made)."""
    k = tree.kernels[name]
    sites = tree.launches_of(name)
    if len(sites) != 1:
        return f"launched from {len(sites)} places"
    site = sites[0]
    body = body_of(k.node)
    if not all(isinstance(s, cst.SimpleStatementLine) for s in body):
        return "not straight-line code"
    if any(isinstance(n, cst.Call) and call_name(n) in _NOT_ELEMENTWISE for n in walk(k.node)):
        return "has a reduction, a dot or an atomic (not element-wise)"
    found = _offs_def(tree, body, k.constexprs)
    if found is None:
        return "no `offs = tl.program_id(0) * B + tl.arange(0, B)`"
    i0, offs, block = found
    divs = [
        n
        for n in walk(k.node)
        if isinstance(n, cst.BinaryOperation)
        and isinstance(n.operator, (cst.FloorDivide, cst.Modulo))
        and _is_name(n.left, offs)
    ]
    ds = {tree.code(n.right) for n in divs}
    if not divs or len(ds) != 1 or next(iter(ds)) not in k.params:
        return f"no `{offs} // D` with one kernel parameter D (a per-row index)"
    d = next(iter(ds))
    bounds = [
        n
        for n in walk(k.node)
        if isinstance(n, cst.Comparison)
        and _is_name(n.left, offs)
        and len(n.comparisons) == 1
        and isinstance(n.comparisons[0].operator, cst.LessThan)
    ]
    ns = {tree.code(b.comparisons[0].comparator) for b in bounds}
    if len(ns) != 1 or next(iter(ns)) not in k.params:
        return f"`{offs}` is not bounded by one `{offs} < n` with a kernel parameter n"
    n = next(iter(ns))
    # host: grid (triton.cdiv(A * Dh, B),) with Dh the text passed for D and the text passed for n equal to A * Dh
    grid = site.grid
    el = grid.elements if isinstance(grid, cst.Tuple) else None
    cd = el[0].value if el and len(el) == 1 else None
    if not (isinstance(cd, cst.Call) and call_name(cd) == "triton.cdiv" and len(cd.args) == 2):
        return f"grid {tree.code(grid)} is not (triton.cdiv(rows * D, B),)"
    total = cd.args[0].value
    dh, nh = site.arg_for(k, d), site.arg_for(k, n)
    if dh is None or nh is None or tree.code(nh) != tree.code(total):
        return f"the launch does not pass {n} = {tree.code(total)} (the grid's element count)"
    rows = None
    if isinstance(total, cst.BinaryOperation) and isinstance(total.operator, cst.Multiply):
        if tree.code(total.right) == tree.code(dh):
            rows = tree.code(total.left)
        elif tree.code(total.left) == tree.code(dh):
            rows = tree.code(total.right)
    if rows is None:
        return f"the element count {tree.code(total)} is not rows * {tree.code(dh)}"
    used = {x.value for x in walk(k.node) if isinstance(x, cst.Name)}
    row, cols, c0 = (_fresh(used, b) for b in ("row", "cols", "col0"))
    # the new body, from the statements with `offs // D` -> row, `offs % D` -> cols, `offs < n` -> both bounds
    for dv in divs:
        tree.replace(dv, row if isinstance(dv.operator, cst.FloorDivide) else cols)
    for b in bounds:
        tree.replace(b, f"({cols} < {d}) & ({offs} < {n})")
    rendered = cst.parse_module(tree.render())
    new_k = next(f for f in rendered.body if isinstance(f, cst.FunctionDef) and f.name.value == name)
    stmts = body_of(new_k)
    before = [s for s in stmts[:i0] if not _pid_only(s, rendered)]
    rest = stmts[i0 + 1:]
    hoisted, loop = [], []
    loop_names = {offs, cols, c0}
    for s in rest:
        txt = rendered.code_for_node(s).strip()
        x = s.body[0] if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 else None
        loads = [c for c in walk(s) if isinstance(c, cst.Call) and call_name(c) == "tl.load"]
        # (a load whose pointer is not readable, `tl.load(*args)`, stays in the loop: correct, if not hoisted)
        ptr = arg_value(loads[0], "pointer", 0) if len(loads) == 1 else None
        if isinstance(x, cst.Assign) and ptr is not None:
            inside = {id(m) for m in walk(loads[0])}
            reads = {m.value for m in walk(ptr) if isinstance(m, cst.Name)} | {
                m.value for m in walk(x.value) if isinstance(m, cst.Name) and id(m) not in inside}
            if not reads & loop_names:  # a per-row value: one unmasked scalar load before the loop (the row exists)
                hoisted.append(txt.replace(rendered.code_for_node(loads[0]).strip(),
                                           f"tl.load({rendered.code_for_node(ptr).strip()})"))
                continue
        if isinstance(x, cst.Assign):
            loop_names |= {t.target.value for t in x.targets if isinstance(t.target, cst.Name)}
        loop.append(txt)
    head = [rendered.code_for_node(s).strip() for s in before]
    text = "\n".join(
        [
            f"{row} = tl.program_id(0)",
            *head,
            *hoisted,
            f"for {c0} in range(0, {d}, {block}):",
            textwrap.indent(
                "\n".join([f"{cols} = {c0} + tl.arange(0, {block})", f"{offs} = {row} * {d} + {cols}", *loop]), "    "
            ),
        ]
    )
    new_body = cst.parse_statement(f"def _f():\n{textwrap.indent(text, '    ')}\n").body
    tree2 = Tree(rendered.code)
    k2 = tree2.kernels[name]
    tree2.edit(k2.node, lambda f: f.with_changes(body=new_body))
    tree2.replace(tree2.launches_of(name)[0].grid, f"({rows},)")
    tree.__dict__.update(Tree(tree2.render()).__dict__)
    _DONE[0] = (f"{name}: the flat grid over {rows} x {tree.code(dh)} elements -> one "
                f"program per row ({rows},) walking its row in {block}-wide chunks; `{offs} // {d}` -> the row, "
                f"{len(hoisted)} per-row load(s) hoisted out of the chunk loop")
    return None


def _pid_only(s: cst.CSTNode, mod: cst.Module) -> bool:
    """``pid = tl.program_id(0)``: the new body defines the row instead."""
    return mod.code_for_node(s).strip().replace(" ", "").endswith("=tl.program_id(0)")


def _fresh(used: set[str], base: str) -> str:
    name, i = base, 2
    while name in used:
        name, i = f"{base}{i}", i + 1
    used.add(name)
    return name


def regridded_first(fn: Callable[[dict[str, Any], RecipeContext], RewriteResult]
                    ) -> Callable[[dict[str, Any], RecipeContext], RewriteResult]:
    """Wrap the ``kernel_chain_fusion`` applier: when the chain's launches have different grids, regrid a flat
    row-broadcast kernel to one program per row first and fuse the result (one rewrite, one diff against the
    candidate as given)."""
    return prepared_first(fn, "launch different grids", regrid_row_broadcast)
