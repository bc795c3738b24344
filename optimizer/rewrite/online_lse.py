"""``online_logsumexp``: fuse a max pass and a sum-of-exp pass over the same chunks into one pass (card
``online-logsumexp``).

A first translation of logsumexp / cross-entropy / log-softmax over long rows reads every row twice::

    m = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < n_cols, other=float("-inf"))
        m = tl.maximum(m, x)
    row_max = tl.max(m, axis=0)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < n_cols, other=float("-inf"))
        s += tl.exp(x - row_max)

After the rewrite each lane keeps its own running max and rescales its partial sum when the max grows (the
online softmax of Milakov & Gimelshein), and the lanes are brought to the row max once after the loop, so the
row is read once::

    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = ...; x = ...
        m_new = tl.maximum(m, x)
        m_ref = tl.where(m_new == float("-inf"), 0.0, m_new)   # lanes that saw no value yet: no inf - inf
        s = s * tl.exp(m - m_ref) + tl.exp(x - m_ref)
        m = m_new
    row_max = tl.max(m, axis=0)
    s = s * tl.exp(m - row_max)

The scalar form (``m = tl.maximum(m, tl.max(x, axis=0))`` then ``s += tl.sum(tl.exp(x - m), axis=0)``) fuses the
same way without the lane merge: ``m`` is already the row max after the loop.

Domain (each precondition checked; the refusal names the one that fails, for the loop closest to matching): a
launched kernel with two top-level ``for`` loops with the same header and the same statements except the last (no
``else``); the first loop ends in ``m = tl.maximum(m, x)`` (or of chunk maxima); between the loops only
``row_max = tl.max(m, ...)`` and the sum's initialisation (only the initialisation in the scalar form); the second
loop ends in ``s += tl.exp(x - row_max)`` (or ``s = s + ...``; ``tl.sum(..., axis=0)`` of it in the scalar form) over
the same ``x``; nothing in the loops reads ``s`` or ``row_max`` otherwise, and the initialisation does not depend on
the max. Statements are compared as normalized Python (``ast.unparse``), so layout and comments do not matter.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import libcst as cst

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import Tree, body_of, call_name, leading_lines, skip_ids, statements, walk

__all__ = ["OnlineLogsumexp"]

_NONE = "no kernel has a max loop followed by a sum-of-exp loop over the same chunks"


class _Refused(Exception):
    pass


def _u(tree: Tree, node: cst.CSTNode) -> str:
    """The node as normalized Python (``ast.unparse``): layout, parentheses and comments left out."""
    code = tree.code(node)
    if isinstance(node, cst.BaseExpression):
        return ast.unparse(ast.parse(f"({code})", mode="eval").body)
    return ast.unparse(ast.parse(code))


def _pos(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


def _call(node: cst.CSTNode | None, name: str) -> cst.Call | None:
    return node if isinstance(node, cst.Call) and call_name(node) == name else None


def _assign(stmt: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    if (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)
            and len(stmt.body[0].targets) == 1 and isinstance(stmt.body[0].targets[0].target, cst.Name)):
        return stmt.body[0].targets[0].target.value, stmt.body[0].value
    return None


def _loaded(e: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Call) and call_name(n) == "tl.load" for n in walk(e))


def _two_args(c: cst.Call | None) -> list[cst.BaseExpression] | None:
    return _pos(c) if c is not None and len(c.args) == 2 and len(_pos(c)) == 2 else None


def _running_max(tree: Tree, stmt: cst.CSTNode) -> tuple[str, str] | None:
    """``m = tl.maximum(m, x)`` (either order) -> (m, x); x may also be an inline loaded expression
    (``tl.maximum(m, tl.load(...))``), returned as its normalized text."""
    a = _assign(stmt)
    args = _two_args(_call(a[1], "tl.maximum")) if a else None
    if not a or not args:
        return None
    mine = [i for i, v in enumerate(args) if isinstance(v, cst.Name) and v.value == a[0]]
    if not mine:
        return None
    other = args[1 - mine[0]]
    if isinstance(other, cst.Name):
        return a[0], other.value
    return (a[0], _u(tree, other)) if _loaded(other) else None


def _accumulated(stmt: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    """``s += term`` or ``s = s + term`` -> (s, term)."""
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if (isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign)
            and isinstance(small.target, cst.Name)):
        return small.target.value, small.value
    if ((a := _assign(stmt)) and isinstance(a[1], cst.BinaryOperation) and isinstance(a[1].operator, cst.Add)
            and isinstance(a[1].left, cst.Name) and a[1].left.value == a[0]):
        return a[0], a[1].right
    return None


def _exp_term(tree: Tree, term: cst.CSTNode) -> tuple[str, str] | None:
    """``tl.exp(x - r)`` -> (x, r); x a name or an inline loaded expression (normalized text)."""
    e = _call(term, "tl.exp")
    if not e or len(e.args) != 1 or len(_pos(e)) != 1:
        return None
    d = _pos(e)[0]
    if not isinstance(d, cst.BinaryOperation) or not isinstance(d.operator, cst.Subtract):
        return None
    x, r = d.left, d.right
    if not isinstance(r, cst.Name) or not (isinstance(x, cst.Name) or _loaded(x)):
        return None
    return (x.value if isinstance(x, cst.Name) else _u(tree, x)), r.value


def _sum_of_exp(tree: Tree, stmt: cst.CSTNode) -> tuple[str, str, str] | None:
    """``s += tl.exp(x - r)`` or ``s = s + tl.exp(x - r)`` -> (s, x, r)."""
    if (acc := _accumulated(stmt)) is None or (xr := _exp_term(tree, acc[1])) is None:
        return None
    return acc[0], *xr


def _whole_axis0(red: cst.Call) -> bool:
    pos = _pos(red)
    kws = [(a.keyword.value, a.value) for a in red.args if a.keyword is not None]
    axis = pos[1] if len(pos) > 1 else next((v for name, v in kws if name == "axis"), None)
    return (isinstance(axis, cst.Integer) and axis.value == "0" and len(pos) <= 2
            and all(name == "axis" for name, _ in kws) and not any(a.star for a in red.args))


def _chunk_max(tree: Tree, stmt: cst.CSTNode) -> tuple[str, str] | None:
    """``m = tl.maximum(m, tl.max(x, axis=0))`` (either order; a scalar running max of chunk maxima) -> (m, x)."""
    a = _assign(stmt)
    args = _two_args(_call(a[1], "tl.maximum")) if a else None
    if not a or not args:
        return None
    mine = [i for i, v in enumerate(args) if isinstance(v, cst.Name) and v.value == a[0]]
    red = _call(args[1 - mine[0]], "tl.max") if mine else None
    if red is None or not _pos(red) or not _whole_axis0(red):
        return None
    x = _pos(red)[0]
    return (a[0], x.value) if isinstance(x, cst.Name) else ((a[0], _u(tree, x)) if _loaded(x) else None)


def _chunk_sum_of_exp(tree: Tree, stmt: cst.CSTNode) -> tuple[str, str, str] | None:
    """``s += tl.sum(tl.exp(x - r), axis=0)`` (or ``s = s + ...``) -> (s, x, r)."""
    if (acc := _accumulated(stmt)) is None:
        return None
    red = _call(acc[1], "tl.sum")
    if red is None or not _pos(red) or not _whole_axis0(red):
        return None
    xr = _exp_term(tree, _pos(red)[0])
    return (acc[0], *xr) if xr else None


def _reads(stmts: list[cst.CSTNode], names: set[str]) -> bool:
    for s in stmts:
        skip = skip_ids(s)
        if any(isinstance(n, cst.Name) and n.value in names and id(n) not in skip for n in walk(s)):
            return True
    return False


def _body(loop: cst.CSTNode) -> list[cst.BaseStatement]:
    if isinstance(loop, cst.For) and isinstance(loop.body, cst.IndentedBlock):
        return body_of(loop)
    return []


@dataclass
class _Match:
    loop1: cst.For
    loop2: cst.For
    init: cst.SimpleStatementLine
    red: cst.SimpleStatementLine | None  # None: the scalar form
    m: str
    x: str
    s: str
    r: str | None


def _same_loops(tree: Tree, loop1: cst.For, loop2: cst.For) -> None:
    if (_u(tree, loop1.target), _u(tree, loop1.iter)) != (_u(tree, loop2.target), _u(tree, loop2.iter)):
        raise _Refused("the max loop and the next loop iterate differently")
    same = [_u(tree, s) for s in _body(loop1)[:-1]] == [_u(tree, s) for s in _body(loop2)[:-1]]
    if not same or loop1.orelse or loop2.orelse:
        raise _Refused("the two loops do not load the same chunk the same way")


def _second_loop(body: list[cst.BaseStatement], i: int, m: str) -> tuple[list[cst.BaseStatement], cst.For]:
    j = i + 1
    while j < len(body) and not isinstance(body[j], cst.For):
        j += 1
    if j == len(body):
        raise _Refused(f"the running max {m} is not followed by a second loop over the same chunks")
    return body[i + 1:j], cst.ensure_type(body[j], cst.For)  # the loop stopped at a for


def _match_scalar(tree: Tree, body: list[cst.BaseStatement], i: int) -> _Match:
    """The scalar two-pass form (a running max of chunk maxima, then a sum of per-chunk sums of exp)."""
    loop1 = body[i]
    rm = _chunk_max(tree, _body(loop1)[-1]) if _body(loop1) else None
    if rm is None:
        raise _Refused("no loop ending in a running max (m = tl.maximum(m, x)) or of chunk maxima "
                       "(m = tl.maximum(m, tl.max(x, axis=0)))")
    m, x = rm
    between, loop2 = _second_loop(body, i, m)
    assert isinstance(loop1, cst.For)
    _same_loops(tree, loop1, loop2)
    se = _chunk_sum_of_exp(tree, _body(loop2)[-1]) if _body(loop2) else None
    if se is None or se[2] != m:
        raise _Refused(f"the second loop does not end in a sum of tl.sum(tl.exp(x - {m}), axis=0)")
    s, x2, _r = se
    if x2 != x:
        raise _Refused(f"the sum exponentiates {x2}, the max runs over {x}")
    init = next((b for b in between if isinstance(b, cst.SimpleStatementLine) and (a := _assign(b)) and a[0] == s),
                None)
    if init is None or len(between) != 1:
        raise _Refused(f"between the loops there must be only {s}'s initialisation")
    if _reads([*_body(loop1), *_body(loop2)[:-1]], {s}) or _reads([init], {m, x}):
        raise _Refused(f"the loops read {s} beyond the sum, or {s}'s initialisation depends on the max")
    return _Match(loop1, loop2, init, None, m, x, s, None)


def _match(tree: Tree, body: list[cst.BaseStatement], i: int) -> _Match:
    """The two-pass pattern starting at ``body[i]`` (the first loop), or _Refused with the reason."""
    loop1 = body[i]
    rm = _running_max(tree, _body(loop1)[-1]) if _body(loop1) else None
    if rm is None:
        raise _Refused("no loop ending in a running max (m = tl.maximum(m, x))")
    m, x = rm
    between, loop2 = _second_loop(body, i, m)
    assert isinstance(loop1, cst.For)
    _same_loops(tree, loop1, loop2)
    se = _sum_of_exp(tree, _body(loop2)[-1]) if _body(loop2) else None
    if se is None:
        raise _Refused("the second loop does not end in a sum of exp(x - row_max)")
    s, x2, r = se
    if x2 != x:
        raise _Refused(f"the sum exponentiates {x2}, the max runs over {x}")
    red = next((b for b in between if isinstance(b, cst.SimpleStatementLine) and (a := _assign(b)) and a[0] == r
                and (c := _call(a[1], "tl.max"))
                and _pos(c) and _u(tree, _pos(c)[0]) == m), None)
    init = next((b for b in between if isinstance(b, cst.SimpleStatementLine) and (a := _assign(b)) and a[0] == s),
                None)
    if red is None or init is None or len(between) != 2:
        raise _Refused(f"between the loops there must be only {r} = tl.max({m}, ...) and {s}'s initialisation")
    if _reads([*_body(loop1), *_body(loop2)[:-1]], {s, r}) or _reads([init], {m, r, x}):
        raise _Refused(f"the loops read {s} or {r} beyond the sum, or {s}'s initialisation depends on the max")
    return _Match(loop1, loop2, init, red, m, x, s, r)


def _find(t: Target) -> _Match | str:
    """The first top-level loop pair that matches, else the reason of the closest match (a loop with a running max)."""
    tree = t.tree
    body = body_of(t.kernel.node)
    reason, rm_found = _NONE, False
    for i, stmt in enumerate(body):
        if not isinstance(stmt, cst.For):
            continue
        last = _body(stmt)[-1] if _body(stmt) else None
        try:
            try:
                return _match(tree, body, i)
            except _Refused:
                if not (last is not None and _chunk_max(tree, last)):
                    raise
                return _match_scalar(tree, body, i)
        except _Refused as exc:
            close = last is not None and (_running_max(tree, last) is not None or _chunk_max(tree, last) is not None)
            if close or not rm_found:  # keep the reason of the closest match
                reason, rm_found = str(exc), rm_found or close
    return reason


def _bare(stmt: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
    """The statement alone: no comment lines above it, no trailing comment."""
    return stmt.with_changes(leading_lines=[], trailing_whitespace=cst.TrailingWhitespace())


class OnlineLogsumexp:
    """A max pass then a sum-of-exp pass over the same chunks -> one online pass (the row read once)."""

    kind = "online_logsumexp"
    card = "online-logsumexp"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        found = _find(t)
        return [found] if isinstance(found, str) else []

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        found = _find(t)
        assert not isinstance(found, str)
        return [{"max": found.m, "sum": found.s}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        p = _find(t)
        assert not isinstance(p, str)
        m, x, s = p.m, p.x, p.s
        bind, shown = "", x if x.isidentifier() else "the loaded chunk"
        if not x.isidentifier():  # an inline load: read the chunk once, under a name
            bind, x = f"{m}_x = {x}\n", f"{m}_x"
        if p.red is None:
            step = (f"{m}_new = tl.maximum({m}, tl.max({x}, axis=0))\n"
                    f"{m}_ref = tl.where({m}_new == float(\"-inf\"), 0.0, {m}_new)\n"
                    f"{s} = {s} * tl.exp({m} - {m}_ref) + tl.sum(tl.exp({x} - {m}_ref), axis=0)\n")
        else:
            step = (f"{m}_new = tl.maximum({m}, {x})\n"
                    f"{m}_ref = tl.where({m}_new == float(\"-inf\"), 0.0, {m}_new)\n"
                    f"{s} = {s} * tl.exp({m} - {m}_ref) + tl.exp({x} - {m}_ref)\n")
        online = statements(bind + step + f"{m} = {m}_new\n")
        last = _body(p.loop1)[-1]
        online[0] = online[0].with_changes(leading_lines=leading_lines(last))
        after: list[cst.BaseStatement] = []
        if p.red is not None:
            after = [_bare(p.red), *statements(f"{s} = {s} * tl.exp({m} - {p.r})\n")]
        init = _bare(p.init).with_changes(leading_lines=p.loop1.leading_lines)

        def fuse(loop: cst.CSTNode) -> cst.FlattenSentinel[cst.BaseStatement]:
            assert isinstance(loop, cst.For) and isinstance(loop.body, cst.IndentedBlock)
            body = loop.body.with_changes(body=[*loop.body.body[:-1], *online])
            return cst.FlattenSentinel([init, loop.with_changes(body=body, leading_lines=[]), *after])

        t.tree.edit(p.loop1, fuse)
        for stmt in (p.init, p.red, p.loop2):
            if stmt is not None:
                t.tree.remove(stmt)
        name = t.kernel.name
        if p.red is None:
            return (f"{name}: max pass and sum-of-exp pass over {shown} fused into one online pass ({m} the running "
                    f"max of chunk maxima, {s} rescaled when it grows); each row is read once instead of twice")
        return (f"{name}: max pass and sum-of-exp pass over {shown} fused into one online pass ({m} per lane, "
                f"{s} rescaled when the max grows, then once to {p.r}); each row is read once instead of twice")
