"""What one recorded launch configuration costs to compile, estimated before compiling it (bounded L3 capture).

Triton keeps a block's tiles in registers, spread over the program's threads: a 65536-wide fp32 row at one warp is
2048 values per thread. ptxas has 255 32-bit registers per thread, so such a tile spills whenever it is live at once,
and the compile of the unrolled code grows with it (two such configurations of an autotuned cross-entropy kernel ran
past a 600 s capture timeout, so the L3 verdict depended on the machine's load). The estimate here is a rule over the
kernel's source and the recorded constexprs, never over wall time:

- ``tile_elements``: the largest block a program holds, as the product of the two largest distinct ``tl.arange``
  extents in the kernel at the recorded values (a 2-D tile; a 1-D kernel has one extent). An upper bound for a kernel
  whose aranges index different tiles (a matmul's M x N accumulator vs its K-wide operands).
- ``per_thread``: that block over the program's threads (``num_warps`` x 32).
- ``within_budget``: at most ``MAX_PER_THREAD`` values per thread (one register file). A configuration over it is not
  compiled: its spills are certain if the tile is live at once, and its compile time is unbounded.

Domain: Triton kernels whose tile extents are ``tl.arange`` calls over literals and recorded constexprs/arguments.
A kernel whose extents cannot be evaluated (no source, an arange over an unknown name) gets no estimate (None) and
compiles as before.
"""

from __future__ import annotations

import ast
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["MAX_PER_THREAD", "budget_note", "per_thread", "tile_elements", "within_budget"]

#: values per thread a configuration may hold in its largest tile and still be compiled (the 255 registers ptxas
#: gives a thread, rounded up: one 32-bit value each)
MAX_PER_THREAD = 256


@lru_cache(maxsize=64)
def _extents(source: str, kernel: str) -> tuple[tuple[str, ...], ...]:
    """The (start, end) source text of every ``tl.arange`` in ``kernel`` (empty when the kernel is not found)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == kernel), None)
    if fn is None:
        return ()
    out = []
    for n in ast.walk(fn):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "arange"
                and len(n.args) == 2):
            out.append((ast.unparse(n.args[0]), ast.unparse(n.args[1])))
    return tuple(dict.fromkeys(out))


def _value(expr: str, values: dict[str, Any]) -> float | None:
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return None
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    calls = (ast.Call, ast.Attribute, ast.Subscript, ast.Lambda)
    if not names <= set(values) or any(isinstance(n, calls) for n in ast.walk(tree)):
        return None
    try:
        out = eval(compile(tree, "<extent>", "eval"), {"__builtins__": {}}, dict(values))  # noqa: S307 -- arithmetic
    except (ArithmeticError, TypeError, ValueError):  # of literals and recorded numbers only (checked above)
        return None
    return float(out) if isinstance(out, (int, float)) and not isinstance(out, bool) else None


def tile_elements(rec: dict[str, Any]) -> int | None:
    """The largest tile of ``rec``'s kernel at its recorded values (see the module docstring); None when the source
    cannot be read or an extent cannot be evaluated."""
    try:
        source = Path(str(rec.get("file") or "")).read_text()
    except OSError:
        return None
    values = {k: v for k, v in {**(rec.get("ir_args") or {}), **(rec.get("constexprs") or {})}.items()
              if isinstance(v, (int, float)) and not isinstance(v, bool)}
    extents = _extents(source, str(rec.get("kernel") or ""))
    if not extents:
        return None
    sizes = []
    for start, end in extents:
        a, b = _value(start, values), _value(end, values)
        if a is None or b is None:
            return None
        sizes.append(max(1, int(b - a)))
    return math.prod(sorted(sizes, reverse=True)[:2])


def _warps(rec: dict[str, Any]) -> int:
    return int((rec.get("options") or {}).get("num_warps") or 4)


def per_thread(rec: dict[str, Any]) -> float | None:
    """Values per thread of the largest tile (``tile_elements`` over ``num_warps`` x 32); None without an estimate."""
    tile = tile_elements(rec)
    return None if tile is None else tile / (max(1, _warps(rec)) * 32)


def within_budget(rec: dict[str, Any]) -> bool:
    """Whether ``rec`` may be compiled (no estimate: yes)."""
    v = per_thread(rec)
    return v is None or v <= MAX_PER_THREAD


def budget_note(rec: dict[str, Any]) -> str:
    """Why ``rec`` is not compiled ("" when it is within the budget)."""
    tile = tile_elements(rec)
    if tile is None:
        return ""
    v = tile / (max(1, _warps(rec)) * 32)
    if v <= MAX_PER_THREAD:
        return ""
    return (f"not compiled: its largest tile ({tile} values over {_warps(rec)} warp(s)) is {v:.0f} values per "
            f"thread, over the {MAX_PER_THREAD} a thread's registers hold; it spills wherever that tile is live at "
            f"once, and its compile time is unbounded")
