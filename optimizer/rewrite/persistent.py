"""A persistent grid for a kernel whose last statement is a same-address atomic (shared by both two-stage forms).

The original programs of a 1-D grid ``(G,)`` become iterations of a loop run by ``min(G, P)`` programs:
``for blk in range(tl.program_id(0), n_blocks, tl.num_programs(0))`` with the body unchanged but for the program id,
which becomes ``blk``. The caller supplies what goes before the loop, the accumulation inside it and the partial
store after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import libcst as cst

from optimizer.rewrite.common import fresh, grid_node, top_statement
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import body_of, is_docstring, walk

__all__ = ["PID", "body", "loop_lines", "persistent_grid", "persistent_reasons", "replace_body"]

#: ``tl.program_id(0)`` / ``tl.program_id(axis=0)``
PID = re.compile(r"tl\.program_id\(\s*(?:axis\s*=\s*)?0\s*\)")


def body(t: Target) -> list[cst.BaseStatement]:
    """The kernel's top-level statements without its docstring."""
    stmts = body_of(t.kernel.node)
    return stmts[1:] if stmts and is_docstring(stmts[0]) else stmts


def persistent_reasons(t: Target, a: Any) -> list[str]:
    """Why the grid cannot be made persistent around the atomic access ``a`` (empty: it can)."""
    out = []
    grid = t.launches[0].grid_elements if t.launches else None
    if not grid or len(grid) != 1:
        out.append("not a 1-D tuple grid")
    stmts = body(t)
    if a is None or not stmts or top_statement(t, a.node) is not stmts[-1]:
        out.append("the atomic is not the last statement")
    code = t.tree.code(t.kernel.node.body)
    if any(isinstance(n, cst.Return) for n in walk(t.kernel.node)):
        out.append("the kernel returns early")
    if "tl.num_programs" in code or len(PID.findall(code)) != code.count("tl.program_id("):
        out.append("the kernel uses another program axis or tl.num_programs")
    return out


def loop_lines(t: Target, stmts: Iterable[cst.BaseStatement], blk: str, n_blocks: str) -> list[str]:
    """``for blk in range(tl.program_id(0), n_blocks, tl.num_programs(0)):`` and ``stmts`` indented under it, with
    the program id replaced by ``blk``."""
    lines = [f"for {blk} in range(tl.program_id(0), {n_blocks}, tl.num_programs(0)):"]
    for stmt in stmts:
        code = PID.sub(blk, t.tree.module.code_for_node(stmt).strip("\n"))
        lines += ["    " + ln if ln.strip() else ln for ln in code.splitlines()]
    return lines


def replace_body(t: Target, lines: list[str]) -> None:
    """The kernel's whole body (docstring kept) becomes ``lines``."""
    stmts = body(t)
    for stmt in stmts:
        t.tree.remove(stmt)
    t.tree.insert_before(stmts[-1], "\n".join(ln.rstrip() for ln in lines) + "\n")


def persistent_grid(t: Target, programs: int) -> tuple[str, str, str]:
    """Launch ``min(G, programs)`` programs instead of ``G``; returns (a fresh name for the ``n_blocks`` argument, the
    host expression of the program count, ``G``'s text). The caller adds the parameter and passes ``G`` to it."""
    g0 = (t.launches[0].grid_elements or [""])[0]
    progs = f"min({g0}, {int(programs)})"
    t.tree.replace(grid_node(t.sites[0], t.tree), f"({progs},)")
    return fresh(t, "n_blocks_ts"), progs, g0
