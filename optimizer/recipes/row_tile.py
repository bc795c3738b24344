"""Row tiling: a one-row-per-program kernel becomes a [ROWS, BLOCK] tile, reduced along axis=1.

This is the rewrite the ``rows-per-program`` and ``groups-per-program-moe-scoring`` cards describe. It is a
vectorizing transform, not a loop: every row-indexed value gains a leading tile dimension, so a program moves
ROWS times more bytes per instruction and short rows fill whole warps. Before::

    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + row * n + offs, mask=offs < n)
    m = tl.max(x, axis=0)
    tl.store(OUT + row, m)

After::

    row = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    row_tile_ok = row < n_rows
    offs = tl.arange(0, BLOCK)[None, :]
    x = tl.load(X + row * n + offs, mask=(offs < n) & row_tile_ok)
    m = tl.max(x, axis=1, keep_dims=True)
    tl.store(OUT + row, m, mask=row_tile_ok)

Preconditions, each checked (``NotApplicable`` names the one that fails): the kernel is straight-line code
after ``row = tl.program_id(0)`` (no loops, branches or returns), every ``tl.arange`` is one-dimensional and
not yet indexed with ``None``, every reduction or scan runs over axis 0 (or the whole 1-D vector), and every
call is elementwise, a load/store, or one of those reductions. Loads and stores whose address depends on the
row get the row bound in their mask; others (a weight vector) broadcast unchanged.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from optimizer.recipes.base import NotApplicable
from optimizer.source import Kernel, SourceText

__all__ = ["TileEdit", "plan_row_tile"]

_REDUCTIONS = {"tl.max", "tl.min", "tl.sum", "tl.argmax", "tl.argmin", "tl.xor_sum", "tl.reduce"}
_SCANS = {"tl.cumsum", "tl.cumprod", "tl.associative_scan"}
_ELEMENTWISE = {
    "tl.where", "tl.maximum", "tl.minimum", "tl.exp", "tl.exp2", "tl.log", "tl.log2", "tl.sqrt", "tl.sqrt_rn",
    "tl.rsqrt", "tl.abs", "tl.sigmoid", "tl.fdiv", "tl.div_rn", "tl.fma", "tl.sin", "tl.cos", "tl.erf", "tl.floor",
    "tl.ceil", "tl.clamp", "tl.softmax", "tl.umulhi", "tl.cast", "tl.multiple_of", "tl.max_contiguous",
    "float", "int", "min", "max", "abs",
}
_ELEMENTWISE_PREFIXES = ("tl.math.", "tl.extra.", "libdevice.", "tl.extra.cuda.libdevice.")
_METHODS = {"to"}
ROW_OK = "row_tile_ok"


@dataclass
class TileEdit:
    """Source edits for the kernel body; the caller rewrites the grid and the launch."""

    row_var: str
    description: str


def _name(call: ast.Call) -> str:
    return ast.unparse(call.func)


def _axis_node(call: ast.Call) -> ast.expr | None:
    kw = next((k.value for k in call.keywords if k.arg == "axis"), None)
    return call.args[1] if kw is None and len(call.args) > 1 else kw


def _mentions(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _constexpr_if(k: Kernel, stmt: ast.stmt) -> bool:
    """``if FLAG:`` over constexpr parameters only: resolved at compile time, so the code stays straight-line."""
    if not isinstance(stmt, ast.If):
        return False
    names = {n.id for n in ast.walk(stmt.test) if isinstance(n, ast.Name)}
    return bool(names) and names <= set(k.constexprs)


def _straight(k: Kernel, stmts: list[ast.stmt]) -> list[ast.stmt]:
    """The statements in order, the branches of constexpr ``if``s inlined (both: either may be compiled)."""
    out: list[ast.stmt] = []
    for stmt in stmts:
        if _constexpr_if(k, stmt):
            out += _straight(k, stmt.body) + _straight(k, stmt.orelse)  # type: ignore[attr-defined]
        else:
            out.append(stmt)
    return out


def _check(k: Kernel, pid: ast.Assign) -> None:
    body = k.node.body
    after = _straight(k, body[body.index(pid) + 1:])
    for stmt in after:
        if not isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
            raise NotApplicable(f"{k.name} has a {type(stmt).__name__.lower()} statement after the row index; "
                                "row tiling needs straight-line code (an `if` over constexprs is fine)")
    for n in ast.walk(k.node):
        if isinstance(n, ast.Subscript) and any(isinstance(e, ast.Constant) and e.value is None
                                                for e in ast.walk(n.slice)):
            raise NotApplicable(f"{k.name} already indexes with None (it is not a 1-D row kernel)")
        if not isinstance(n, ast.Call):
            continue
        name = _name(n)
        if name == "tl.program_id":
            axis = n.args[0] if n.args else None
            if n is not pid.value and isinstance(axis, ast.Constant) and axis.value == 0:
                raise NotApplicable(f"{k.name} reads tl.program_id(0) twice")
            continue
        if name == "tl.num_programs":  # axis 0 becomes the row count (the tiled grid is smaller); others stay
            axis = n.args[0] if n.args else next((kw.value for kw in n.keywords if kw.arg == "axis"), None)
            if not isinstance(axis, ast.Constant):
                raise NotApplicable(f"{k.name} calls tl.num_programs with a non-literal axis")
            continue
        if name in ("tl.load", "tl.store", "tl.arange") or name in _ELEMENTWISE or name.startswith(_ELEMENTWISE_PREFIXES):
            if name == "tl.arange" and len(n.args) != 2:
                raise NotApplicable("tl.arange without (start, end)")
            continue
        if name in _REDUCTIONS or name in _SCANS:
            axis = _axis_node(n)
            if axis is not None and not (isinstance(axis, ast.Constant) and axis.value in (0, None)):
                raise NotApplicable(f"{name} over axis {ast.unparse(axis)}; row tiling needs axis 0")
            if any(kw.arg == "keep_dims" for kw in n.keywords):
                raise NotApplicable(f"{name} already sets keep_dims")
            continue
        if isinstance(n.func, ast.Attribute) and n.func.attr in _METHODS:
            continue
        raise NotApplicable(f"{k.name} calls {name}, which row tiling does not know to be elementwise")


def _row_dependent(body: list[ast.stmt], var: str) -> set[str]:
    dep = {var}
    for stmt in body:
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        else:
            continue
        if _mentions(value, dep):
            dep |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return dep


def _set_axis(st: SourceText, call: ast.Call, reduce: bool) -> None:
    kw = next((k for k in call.keywords if k.arg == "axis"), None)
    pos = 1  # tl.max(x, axis), tl.reduce(x, axis, fn), tl.cumsum(x, axis)
    extra = ", keep_dims=True" if reduce else ""
    if kw is not None:
        st.replace(kw.value, "1")
        if reduce:
            st.insert(st.span(kw.value)[1], extra)
    elif len(call.args) > pos:
        st.replace(call.args[pos], "1")
        if reduce:
            st.insert(st.span(call.args[pos])[1], extra)
    else:  # whole-vector reduction: now along the tile's columns
        st.insert(st.span(call.args[-1])[1], f", axis=1{extra}")


def _mask_arg(call: ast.Call, is_store: bool) -> ast.expr | None:
    kw = next((k.value for k in call.keywords if k.arg == "mask"), None)
    if kw is None:
        pos = 2 if is_store else 1
        if len(call.args) > pos:
            kw = call.args[pos]
    return kw


def plan_row_tile(st: SourceText, k: Kernel, pid: ast.Assign, param: str, bound: str) -> TileEdit:
    """Edit ``st`` so kernel ``k`` processes ``param`` rows per program as a tile; ``bound`` is the row count."""
    _check(k, pid)
    var = pid.targets[0].id  # type: ignore[attr-defined]
    body = k.node.body
    dep = _row_dependent(_straight(k, body[body.index(pid) + 1:]), var)
    calls = [n for n in ast.walk(k.node) if isinstance(n, ast.Call)]
    for n in calls:  # the grid's row extent: the row count, not the tiled grid's
        if _name(n) == "tl.num_programs" and (n.args[0] if n.args else n.keywords[0].value).value == 0:  # type: ignore[attr-defined]
            st.replace(n, bound)
    # aranges first: at a shared offset, edits apply in the order they were made
    for n in calls:
        if _name(n) == "tl.arange":
            st.insert(st.span(n)[1], "[None, :]")
    n_red = n_mem = 0
    for n in calls:
        name = _name(n)
        if name in _REDUCTIONS or name in _SCANS:
            _set_axis(st, n, reduce=name in _REDUCTIONS)
            n_red += 1
        elif name in ("tl.load", "tl.store") and n.args and _mentions(n.args[0], dep):
            mask = _mask_arg(n, name == "tl.store")
            if mask is None:
                anchor = max(n.args + [kw.value for kw in n.keywords], key=lambda a: (a.end_lineno, a.end_col_offset))
                st.insert(st.span(anchor)[1], f", mask={ROW_OK}")
            else:
                a, b = st.span(mask)
                st.insert(a, "(")
                st.insert(b, f") & {ROW_OK}")
            n_mem += 1
    if n_mem == 0:
        raise NotApplicable(f"no load or store of {k.name} is addressed by the row index {var}")
    ind = st.indent_of(pid.lineno)
    st.insert(st.span(pid.value)[1], f" * {param} + tl.arange(0, {param})[:, None]\n{ind}{ROW_OK} = {var} < {bound}")
    desc = (f"{k.name}: a [{param}, BLOCK] tile of rows per program ({var} gains a row axis, {n_red} reduction(s) "
            f"along axis=1 with keep_dims, {n_mem} row-addressed access(es) masked by {var} < {bound})")
    return TileEdit(var, desc)
