"""Row tiling, the tile form of ``rows_per_program``: a one-row-per-program kernel becomes a [ROWS, BLOCK] tile,
reduced along axis=1.

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

Preconditions (``tile_refusal`` names the first that fails): the kernel is straight-line code after
``row = tl.program_id(0)`` (no loops, branches or returns; an ``if`` over constexprs only is compiled away), every
``tl.arange`` is one-dimensional and not yet indexed with ``None``, every reduction or scan runs over axis 0 (or the
whole 1-D vector), every call is elementwise, a load/store, or one of those reductions, and some load or store is
addressed by the row. Loads and stores whose address depends on the row get the row bound in their mask; others (a
weight vector) broadcast unchanged. ``tl.num_programs(0)`` (the kernel's own row count) becomes the row bound.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Iterator, Sequence
from typing import TypeGuard

import libcst as cst

from optimizer.rewrite.compiler_hints import expr_text
from optimizer.rewrite.launch_knobs import NOT_LITERAL, literal_value
from optimizer.rewrite.tree import CstKernel, Tree, arg_value, body_of, dotted, kids, skip_ids, walk

__all__ = ["ROW_OK", "plan_row_tile", "tile_refusal"]

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
#: nodes with no counterpart in Python's ast: looked through when calls are visited in ``ast.walk``'s order
_THROUGH = (cst.SimpleStatementLine, cst.IndentedBlock, cst.SimpleStatementSuite, cst.ComparisonTarget, cst.Element,
            cst.SubscriptElement, cst.Index, cst.Else, cst.DictElement, cst.Decorator)


def _fname(call: cst.Call) -> str:
    plain = isinstance(call.func, (cst.Name, cst.Attribute)) and dotted(call.func)
    return dotted(call.func) if plain else expr_text(call.func)


def _positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None]


def _keyword(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _children(n: cst.CSTNode) -> list[cst.CSTNode]:
    out: list[cst.CSTNode] = []
    for c in kids(n):
        out += _children(c) if isinstance(c, _THROUGH) or (isinstance(c, cst.Arg) and c.keyword is None) else [c]
    return out


def _in_ast_order(k: CstKernel) -> Iterator[cst.CSTNode]:
    """The kernel's nodes breadth first, parameters, body, then decorators (the order ``ast.walk`` reports them in,
    so the first refusal named is the one the row tiling always named)."""
    f = k.node
    queue: deque[cst.CSTNode] = deque([f.params, *_children(f.body)])
    queue.extend(d.decorator for d in f.decorators)
    while queue:
        n = queue.popleft()
        yield n
        queue.extend(_children(n))


def _constexpr_if(stmt: cst.CSTNode, k: CstKernel) -> TypeGuard[cst.If]:
    """``if FLAG:`` over constexpr parameters only: resolved at compile time, so the code stays straight-line."""
    if not isinstance(stmt, cst.If):
        return False
    skip = skip_ids(stmt.test)
    names = {n.value for n in walk(stmt.test) if isinstance(n, cst.Name) and id(n) not in skip
             and n.value not in ("True", "False", "None")}
    return bool(names) and names <= set(k.constexprs)


def _small(stmts: Sequence[cst.CSTNode]) -> list[cst.CSTNode]:
    """Statement lines flattened into their small statements; compound statements stay."""
    out: list[cst.CSTNode] = []
    for s in stmts:
        out += list(s.body) if isinstance(s, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else [s]
    return out


def _block(suite: cst.BaseSuite) -> list[cst.CSTNode]:
    return _small(list(suite.body))


def _straight(k: CstKernel, stmts: Sequence[cst.CSTNode]) -> list[cst.CSTNode]:
    """The statements in order, the branches of constexpr ``if``s inlined (both: either may be compiled)."""
    out: list[cst.CSTNode] = []
    for stmt in stmts:
        if _constexpr_if(stmt, k):
            orelse = stmt.orelse
            rest = [] if orelse is None else [orelse] if isinstance(orelse, cst.If) else _block(orelse.body)
            out += _straight(k, _block(stmt.body)) + _straight(k, rest)
        else:
            out.append(stmt)
    return out


def after_pid(k: CstKernel, pid: cst.Assign) -> list[cst.CSTNode]:
    body = _small(body_of(k.node))
    return _straight(k, body[body.index(pid) + 1:])


def _is_int(e: cst.CSTNode | None, values: tuple[object, ...]) -> bool:
    v = literal_value(e) if e is not None else NOT_LITERAL
    return v is not NOT_LITERAL and not isinstance(v, str) and v in values


def _check(k: CstKernel, pid: cst.Assign) -> str | None:
    for stmt in after_pid(k, pid):
        if not isinstance(stmt, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Expr)):
            return (f"{k.name} has a {type(stmt).__name__.lower()} statement after the row index; "
                    "row tiling needs straight-line code (an `if` over constexprs is fine)")
    for n in _in_ast_order(k):
        if isinstance(n, cst.Subscript) and any(isinstance(m, cst.Name) and m.value == "None"
                                                for e in n.slice for m in walk(e)):
            return f"{k.name} already indexes with None (it is not a 1-D row kernel)"
        if not isinstance(n, cst.Call):
            continue
        name, pos = _fname(n), _positional(n)
        if name == "tl.program_id":
            if n is not pid.value and pos and _is_int(pos[0], (0,)):
                return f"{k.name} reads tl.program_id(0) twice"
            continue
        if name == "tl.num_programs":  # axis 0 becomes the row count (the tiled grid is smaller); others stay
            axis = pos[0] if pos else arg_value(n, "axis")
            if axis is None or literal_value(axis) is NOT_LITERAL:
                return f"{k.name} calls tl.num_programs with a non-literal axis"
            continue
        if name in ("tl.load", "tl.store", "tl.arange", *_ELEMENTWISE) or name.startswith(_ELEMENTWISE_PREFIXES):
            if name == "tl.arange" and len(pos) != 2:
                return "tl.arange without (start, end)"
            continue
        if name in _REDUCTIONS or name in _SCANS:
            kw = _keyword(n, "axis")
            axis = kw.value if kw is not None else pos[1] if len(pos) > 1 else None
            if axis is not None and not _is_int(axis, (0, None)):
                return f"{name} over axis {expr_text(axis)}; row tiling needs axis 0"
            if _keyword(n, "keep_dims") is not None:
                return f"{name} already sets keep_dims"
            continue
        if isinstance(n.func, cst.Attribute) and n.func.attr.value in _METHODS:
            continue
        return f"{k.name} calls {name}, which row tiling does not know to be elementwise"
    return None


def _mentions(node: cst.CSTNode, names: set[str]) -> bool:
    skip = skip_ids(node)
    return any(isinstance(n, cst.Name) and n.value in names and id(n) not in skip for n in walk(node))


def _row_dependent(stmts: list[cst.CSTNode], var: str) -> set[str]:
    dep = {var}
    for stmt in stmts:
        if isinstance(stmt, cst.Assign):
            targets, value = [t.target for t in stmt.targets], stmt.value
        elif isinstance(stmt, (cst.AugAssign, cst.AnnAssign)) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        else:
            continue
        if _mentions(value, dep):
            dep |= {n.value for t in targets for n in walk(t) if isinstance(n, cst.Name) and id(n) not in skip_ids(t)}
    return dep


def _row_var(pid: cst.Assign) -> str:
    """The row index's name: ``pid`` is ``rows_per_program.row_index``'s assignment, of a plain name."""
    return cst.ensure_type(pid.targets[0].target, cst.Name).value


def _row_accesses(k: CstKernel, pid: cst.Assign) -> list[cst.Call]:
    """Loads and stores whose address (first positional argument) depends on the row index."""
    dep = _row_dependent(after_pid(k, pid), _row_var(pid))
    return [n for n in walk(k.node) if isinstance(n, cst.Call) and _fname(n) in ("tl.load", "tl.store")
            and _positional(n) and _mentions(_positional(n)[0], dep)]


def tile_refusal(k: CstKernel, pid: cst.Assign) -> str | None:
    """Why the kernel cannot be row-tiled (None: it can)."""
    why = _check(k, pid)
    if why is None and not _row_accesses(k, pid):
        var = _row_var(pid)
        why = f"no load or store of {k.name} is addressed by the row index {var}"
    return why


def _parens(old: cst.CSTNode, new: cst.BaseExpression) -> cst.BaseExpression:
    assert isinstance(old, cst.BaseExpression)  # the edited call
    return new.with_changes(lpar=old.lpar, rpar=old.rpar)


def _row_vector(old: cst.CSTNode) -> cst.CSTNode:
    """``tl.arange(..)`` -> ``tl.arange(..)[None, :]`` (its parentheses kept outside)."""
    assert isinstance(old, cst.BaseExpression)  # the edited call
    return cst.Subscript(old.with_changes(lpar=[], rpar=[]), cst.ensure_type(cst.parse_expression("x[None, :]"),
                                                                             cst.Subscript).slice,
                         lpar=old.lpar, rpar=old.rpar)


def _new_args(text: str) -> list[cst.Arg]:
    return list(cst.ensure_type(cst.parse_expression(f"f({text})"), cst.Call).args)


def _set_axis(c: cst.CSTNode, reduce: bool) -> cst.CSTNode:
    """The reduction (or scan) along axis 1, keeping dims for a reduction."""
    assert isinstance(c, cst.Call)
    args = list(c.args)
    pos = [i for i, a in enumerate(args) if a.keyword is None]
    at = next((i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == "axis"), None)
    if at is None and len(pos) > 1:
        at = pos[1]  # tl.max(x, axis), tl.reduce(x, axis, fn), tl.cumsum(x, axis)
    if at is not None:
        args[at] = args[at].with_changes(value=_parens(args[at].value, cst.Integer("1")))
        extra = _new_args("keep_dims=True") if reduce else []
    else:  # whole-vector reduction: now along the tile's columns
        at = pos[-1]
        extra = _new_args("axis=1, keep_dims=True" if reduce else "axis=1")
    if extra:
        comma = args[at].comma
        args[at] = args[at].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        extra[-1] = extra[-1].with_changes(comma=comma)
    return c.with_changes(args=[*args[:at + 1], *extra, *args[at + 1:]])


def _and_row_ok(node: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(node, cst.BaseExpression)
    inner = node.with_changes(lpar=[cst.LeftParen(), *node.lpar], rpar=[*node.rpar, cst.RightParen()])
    return cst.BinaryOperation(inner, cst.BitAnd(), cst.Name(ROW_OK))


def plan_row_tile(tree: Tree, k: CstKernel, pid: cst.Assign, pid_line: cst.BaseStatement, param: str,
                  bound: str) -> str:
    """Edit ``tree`` so kernel ``k`` processes ``param`` rows per program as a tile (``bound`` rows in all); return
    the description. ``tile_refusal`` must have passed."""
    var = _row_var(pid)
    n_red = 0
    for n in walk(k.node):
        if not isinstance(n, cst.Call):
            continue
        name = _fname(n)
        if name == "tl.num_programs" and _is_int(pos[0] if (pos := _positional(n)) else arg_value(n, "axis"), (0,)):
            tree.edit(n, lambda old: _parens(old, cst.Name(bound)))  # the row count, not the tiled grid's
        elif name == "tl.arange":
            tree.edit(n, _row_vector)
        elif name in _REDUCTIONS or name in _SCANS:
            tree.edit(n, functools.partial(_set_axis, reduce=name in _REDUCTIONS))
            n_red += 1
    accesses = _row_accesses(k, pid)
    for n in accesses:
        mask = arg_value(n, "mask", 2 if _fname(n) == "tl.store" else 1)
        if mask is None:
            tree.add_keyword(n, "mask", ROW_OK)
        else:
            tree.edit(mask, _and_row_ok)
    tree.replace(pid.value, f"{tree.code(pid.value)} * {param} + tl.arange(0, {param})[:, None]")
    tree.insert_after(pid_line, f"{ROW_OK} = {var} < {bound}\n")
    return (f"{k.name}: a [{param}, BLOCK] tile of rows per program ({var} gains a row axis, {n_red} reduction(s) "
            f"along axis=1 with keep_dims, {len(accesses)} row-addressed access(es) masked by {var} < {bound})")
