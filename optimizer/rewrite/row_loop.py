"""The loop form of ``rows_per_program`` on the syntax tree: a static loop over ROWS rows per program.

Used where the kernel is not straight-line code (the tile form of ``optimizer.rewrite.row_tile`` needs that).
A kernel that advances pointers or offsets it received (``x_ptr += row * stride``, or ``x_ptr += BLOCK`` inside
a column loop) would carry the advance from one row of the loop into the next: the H200 campaign's norm
kernel read out of bounds ("illegal memory access"). Every name the row body rebinds that exists before the
loop (a parameter or a value computed before the row index) is therefore saved once before the loop and
restored at the start of every row::

    row_first = tl.program_id(0) * ROWS_PER_PROGRAM
    x_ptr_rpp0 = x_ptr
    for _rpp in tl.static_range(ROWS_PER_PROGRAM):
        x_ptr = x_ptr_rpp0
        row = row_first + _rpp
        if row < n_rows:
            x_ptr += row * stride
            ...
"""

from __future__ import annotations

import textwrap

import libcst as cst

from optimizer.kernel.flow import assigned as _targets
from optimizer.kernel.flow import names as _names
from optimizer.rewrite.common import fresh
from optimizer.rewrite.engine import Target
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.launch_knobs import grid_expr
from optimizer.rewrite.tree import body_of, walk

__all__ = ["rows_as_loop"]


def rows_as_loop(t: Target, pid_var: str, param: str, bound: str, n_rows: str | None, r: int, tile_reason: str,
                 rows_text: str | None = None) -> str:
    """Edit ``t.tree``: ``r`` rows per program (``param``) as a loop; return the description. ``rows_text``: the
    row count as the launcher computes it (default: the grid's first axis as written)."""
    tree, kernel = t.tree, t.kernel.name
    k, site = t.kernel, t.sites[0]
    top = body_of(k.node)
    i = next(
        (
            j
            for j, s in enumerate(top)
            if isinstance(s, cst.SimpleStatementLine)
            and isinstance(s.body[0], cst.Assign)
            and _names(s.body[0].targets[0].target) == {pid_var}
        ),
        None,
    )
    if i is None:
        raise NotApplicable(f"{kernel}: `{pid_var} = tl.program_id(0)` is not a top-level statement")
    pid_line, rest = top[i], top[i + 1:]
    pid_assign = pid_line.body[0] if isinstance(pid_line, cst.SimpleStatementLine) else None
    assert isinstance(pid_assign, cst.Assign)  # what line i was found by
    before = set(k.params) | {n for s in top[:i] for m in walk(s) for n in _targets(m)[0]}
    rebound = sorted({n for s in rest for m in walk(s) if isinstance(m, (cst.Assign, cst.AugAssign, cst.For))
                      for n in _targets(m)[0]} & before - {pid_var})
    saved = {n: fresh(t, f"{n}_rpp0") for n in rebound}
    first = fresh(t, f"{pid_var}_first")
    body = "".join(textwrap.indent(tree.module.code_for_node(s), "        ") for s in rest)
    text = (f"{first} = {tree.code(pid_assign.value)} * {param}\n"
            + "".join(f"{s} = {n}\n" for n, s in saved.items())
            + f"for _rpp in tl.static_range({param}):\n"
            + "".join(f"    {n} = {s}\n" for n, s in saved.items())
            + f"    {pid_var} = {first} + _rpp\n    if {pid_var} < {bound}:\n{body}")
    tree.remove(pid_line)
    tree.insert_before(pid_line, text)
    for s in rest:
        tree.remove(s)
    tree.add_params(k.node, ([] if n_rows else ["n_rows_rpp"]) + [f"{param}: tl.constexpr"])
    g, _assign = grid_expr(tree, site)
    body_g = g.body if isinstance(g, cst.Lambda) else g
    if not isinstance(body_g, (cst.Tuple, cst.List)) or not body_g.elements:  # rows_per_program refuses it first
        raise NotApplicable("grid is not a tuple expression")
    g0 = body_g.elements[0].value
    g0_text = tree.code(g0)
    if isinstance(g, cst.Lambda):
        meta = g.params.params[0].name.value if g.params.params else "META"
        tree.replace(g0, f"triton.cdiv({g0_text}, {meta}[{param!r}])")
        value = str(r)
    else:
        tree.replace(g0, f"triton.cdiv({g0_text}, {param})")
        stmt = tree.statement_of(site.function, g0) if site.function is not None else None
        if stmt is None:
            raise NotApplicable("could not find the statement that builds the grid")
        tree.insert_before(stmt, f"{param} = {r}\n")
        value = param
    if not n_rows:
        tree.add_keyword(site.call, "n_rows_rpp", rows_text or g0_text)
    tree.add_keyword(site.call, param, value)

    restored = f"; {rebound} saved before the row loop and restored per row" if rebound else ""
    return (f"{k.name}: {r} rows per program ({param}) as a loop, grid {g0_text} -> cdiv({g0_text}, {r}); "
            f"bound {bound}{restored} (not tiled: {tile_reason})")
