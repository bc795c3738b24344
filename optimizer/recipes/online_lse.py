"""The ``online_logsumexp`` recipe: fuse a max pass and a sum-of-exp pass over the same chunks into one pass.

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

Preconditions, each checked (``NotApplicable`` names the one that fails): two consecutive ``for`` loops with the
same header and the same statements except the last; the first loop ends in ``m = tl.maximum(m, x)``; between
the loops only ``row_max = tl.max(m, ...)`` and the sum's initialisation; the second loop ends in
``s += tl.exp(x - row_max)`` (or ``s = s + ...``); nothing in the loops reads ``s`` or ``row_max`` otherwise.
"""

from __future__ import annotations

import ast
from typing import Any

from optimizer.recipes.base import (
    NotApplicable,
    RecipeContext,
    RewriteResult,
    _finish,
    _parse,
)

__all__ = ["apply_online_logsumexp"]


def _call(node: ast.AST | None, name: str) -> ast.Call | None:
    return node if isinstance(node, ast.Call) and ast.unparse(node.func) == name else None


def _assign(stmt: ast.stmt) -> tuple[str, ast.expr] | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id, stmt.value
    return None


def _loaded(e: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) and ast.unparse(n.func) == "tl.load" for n in ast.walk(e))


def _running_max(stmt: ast.stmt) -> tuple[str, str] | None:
    """``m = tl.maximum(m, x)`` (either order) -> (m, x); x may also be an inline loaded expression
    (``tl.maximum(m, tl.load(...))``), returned as its source text."""
    a = _assign(stmt)
    c = _call(a[1], "tl.maximum") if a else None
    if not a or not c or len(c.args) != 2:
        return None
    mine = [i for i, v in enumerate(c.args) if isinstance(v, ast.Name) and v.id == a[0]]
    if not mine:
        return None
    other = c.args[1 - mine[0]]
    if isinstance(other, ast.Name):
        return a[0], other.id
    return (a[0], ast.unparse(other)) if _loaded(other) else None


def _accumulated(stmt: ast.stmt) -> tuple[str, ast.expr] | None:
    """``s += term`` or ``s = s + term`` -> (s, term)."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and isinstance(stmt.target, ast.Name):
        return stmt.target.id, stmt.value
    if (a := _assign(stmt)) and isinstance(a[1], ast.BinOp) and isinstance(a[1].op, ast.Add) \
            and isinstance(a[1].left, ast.Name) and a[1].left.id == a[0]:
        return a[0], a[1].right
    return None


def _sum_of_exp(stmt: ast.stmt) -> tuple[str, str, str] | None:
    """``s += tl.exp(x - r)`` or ``s = s + tl.exp(x - r)`` -> (s, x, r)."""
    if (acc := _accumulated(stmt)) is None:
        return None
    s, term = acc
    e = _call(term, "tl.exp")
    if not e or len(e.args) != 1 or not isinstance(e.args[0], ast.BinOp) or not isinstance(e.args[0].op, ast.Sub):
        return None
    x, r = e.args[0].left, e.args[0].right
    if not isinstance(r, ast.Name) or not (isinstance(x, ast.Name) or _loaded(x)):
        return None
    return s, (x.id if isinstance(x, ast.Name) else ast.unparse(x)), r.id


def _reads(stmts: list[ast.stmt], names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for s in stmts for n in ast.walk(s))


def _chunk_max(stmt: ast.stmt) -> tuple[str, str] | None:
    """``m = tl.maximum(m, tl.max(x, axis=0))`` (either order; a scalar running max of chunk maxima) -> (m, x)."""
    a = _assign(stmt)
    c = _call(a[1], "tl.maximum") if a else None
    if not a or not c or len(c.args) != 2:
        return None
    mine = [i for i, v in enumerate(c.args) if isinstance(v, ast.Name) and v.id == a[0]]
    red = _call(c.args[1 - mine[0]], "tl.max") if mine else None
    if red is None or not red.args or not _whole_axis0(red):
        return None
    x = red.args[0]
    return (a[0], x.id) if isinstance(x, ast.Name) else ((a[0], ast.unparse(x)) if _loaded(x) else None)


def _whole_axis0(red: ast.Call) -> bool:
    axis = red.args[1] if len(red.args) > 1 else next((k.value for k in red.keywords if k.arg == "axis"), None)
    return isinstance(axis, ast.Constant) and axis.value == 0 and len(red.args) <= 2 and all(
        k.arg == "axis" for k in red.keywords)


def _chunk_sum_of_exp(stmt: ast.stmt) -> tuple[str, str, str] | None:
    """``s += tl.sum(tl.exp(x - r), axis=0)`` (or ``s = s + ...``) -> (s, x, r)."""
    if (acc := _accumulated(stmt)) is None:
        return None
    s, term = acc
    red = _call(term, "tl.sum")
    if red is None or not red.args or not _whole_axis0(red):
        return None
    inner = ast.Expr(value=red.args[0])
    se = _sum_of_exp(ast.AugAssign(target=ast.Name(id=s), op=ast.Add(), value=inner.value))
    return (s, se[1], se[2]) if se else None


def _match_scalar(body: list[ast.stmt], i: int) -> dict[str, Any]:
    """The scalar two-pass form (a running max of chunk maxima, then a sum of per-chunk sums of exp)."""
    loop1 = body[i]
    rm = _chunk_max(loop1.body[-1]) if isinstance(loop1, ast.For) and loop1.body else None
    if rm is None:
        raise NotApplicable("no loop ending in a running max (m = tl.maximum(m, x)) or of chunk maxima "
                            "(m = tl.maximum(m, tl.max(x, axis=0)))")
    m, x = rm
    j = i + 1
    while j < len(body) and not isinstance(body[j], ast.For):
        j += 1
    if j == len(body):
        raise NotApplicable(f"the running max {m} is not followed by a second loop over the same chunks")
    between, loop2 = body[i + 1:j], body[j]
    assert isinstance(loop1, ast.For) and isinstance(loop2, ast.For)
    if (ast.unparse(loop1.target), ast.unparse(loop1.iter)) != (ast.unparse(loop2.target), ast.unparse(loop2.iter)):
        raise NotApplicable("the max loop and the next loop iterate differently")
    same = [ast.unparse(s) for s in loop1.body[:-1]] == [ast.unparse(s) for s in loop2.body[:-1]]
    if not same or loop1.orelse or loop2.orelse:
        raise NotApplicable("the two loops do not load the same chunk the same way")
    se = _chunk_sum_of_exp(loop2.body[-1]) if loop2.body else None
    if se is None or se[2] != m:
        raise NotApplicable(f"the second loop does not end in a sum of tl.sum(tl.exp(x - {m}), axis=0)")
    s, x2, _r = se
    if x2 != x:
        raise NotApplicable(f"the sum exponentiates {x2}, the max runs over {x}")
    init = next((b for b in between if (a := _assign(b)) and a[0] == s), None)
    if init is None or len(between) != 1:
        raise NotApplicable(f"between the loops there must be only {s}'s initialisation")
    if _reads(loop1.body + loop2.body[:-1], {s}) or _reads([init], {m, x}):
        raise NotApplicable(f"the loops read {s} beyond the sum, or {s}'s initialisation depends on the max")
    return {"loop1": loop1, "loop2": loop2, "init": init, "m": m, "x": x, "s": s, "scalar": True}


def _match(body: list[ast.stmt], i: int) -> dict[str, Any]:
    """The two-pass pattern starting at ``body[i]`` (the first loop), or NotApplicable with the reason."""
    loop1 = body[i]
    rm = _running_max(loop1.body[-1]) if isinstance(loop1, ast.For) and loop1.body else None
    if rm is None:
        raise NotApplicable("no loop ending in a running max (m = tl.maximum(m, x))")
    m, x = rm
    j = i + 1
    between: list[ast.stmt] = []
    while j < len(body) and not isinstance(body[j], ast.For):
        between.append(body[j])
        j += 1
    if j == len(body):
        raise NotApplicable(f"the running max {m} is not followed by a second loop over the same chunks")
    loop2 = body[j]
    assert isinstance(loop1, ast.For) and isinstance(loop2, ast.For)
    if (ast.unparse(loop1.target), ast.unparse(loop1.iter)) != (ast.unparse(loop2.target), ast.unparse(loop2.iter)):
        raise NotApplicable("the max loop and the next loop iterate differently")
    prefix1, prefix2 = [ast.unparse(s) for s in loop1.body[:-1]], [ast.unparse(s) for s in loop2.body[:-1]]
    if prefix1 != prefix2 or loop1.orelse or loop2.orelse:
        raise NotApplicable("the two loops do not load the same chunk the same way")
    se = _sum_of_exp(loop2.body[-1]) if loop2.body else None
    if se is None:
        raise NotApplicable("the second loop does not end in a sum of exp(x - row_max)")
    s, x2, r = se
    if x2 != x:
        raise NotApplicable(f"the sum exponentiates {x2}, the max runs over {x}")
    red = next((b for b in between if (a := _assign(b)) and a[0] == r and (c := _call(a[1], "tl.max"))
                and c.args and ast.unparse(c.args[0]) == m), None)
    init = next((b for b in between if (a := _assign(b)) and a[0] == s), None)
    if red is None or init is None or len(between) != 2:
        raise NotApplicable(f"between the loops there must be only {r} = tl.max({m}, ...) and {s}'s initialisation")
    if _reads(loop1.body + loop2.body[:-1], {s, r}) or _reads([init], {m, r, x}):
        raise NotApplicable(f"the loops read {s} or {r} beyond the sum, or {s}'s initialisation depends on the max")
    return {"loop1": loop1, "loop2": loop2, "red": red, "init": init, "m": m, "x": x, "s": s, "r": r}


def apply_online_logsumexp(params: dict[str, Any], ctx: RecipeContext) -> RewriteResult:
    p = _parse(ctx)
    reason = "no kernel has a max loop followed by a sum-of-exp loop over the same chunks"
    rm_found = False
    for k in p.kernels.values():
        body = k.node.body
        for i, stmt in enumerate(body):
            if not isinstance(stmt, ast.For):
                continue
            try:
                try:
                    pat = _match(body, i)
                except NotApplicable:
                    if not (stmt.body and _chunk_max(stmt.body[-1])):
                        raise
                    pat = _match_scalar(body, i)
            except NotApplicable as exc:
                close = bool(stmt.body) and (_running_max(stmt.body[-1]) is not None
                                             or _chunk_max(stmt.body[-1]) is not None)
                if close or not rm_found:  # keep the reason of the closest match (a loop with a running max)
                    reason, rm_found = f"{k.name}: {exc}", rm_found or close
                continue
            return _rewrite(p, ctx, k.name, pat)
    raise NotApplicable(reason)


def _rewrite(p: Any, ctx: RecipeContext, kernel: str, pat: dict[str, Any]) -> RewriteResult:
    if pat.get("scalar"):
        return _rewrite_scalar(p, ctx, kernel, pat)
    st = p.st
    loop1, loop2, m, x, s, r = pat["loop1"], pat["loop2"], pat["m"], pat["x"], pat["s"], pat["r"]
    ind = st.indent_of(loop1.lineno)
    inner = st.indent_of(loop1.body[-1].lineno)
    last = loop1.body[-1]
    bind, shown = "", x if x.isidentifier() else "the loaded chunk"
    if not x.isidentifier():  # an inline load: read the chunk once, under a name
        bind, x = f"{inner}{m}_x = {x}\n", f"{m}_x"
    online = (bind + f"{inner}{m}_new = tl.maximum({m}, {x})\n"
              f"{inner}{m}_ref = tl.where({m}_new == float(\"-inf\"), 0.0, {m}_new)\n"
              f"{inner}{s} = {s} * tl.exp({m} - {m}_ref) + tl.exp({x} - {m}_ref)\n"
              f"{inner}{m} = {m}_new\n")
    init_text = st.segment(pat["init"])
    red_text = st.segment(pat["red"])
    # one edit from the first loop's header to the end of the second loop
    new = (f"{ind}{init_text}\n"
           + "".join(st.lines[loop1.lineno - 1: last.lineno - 1])
           + online
           + f"{ind}{red_text}\n"
           + f"{ind}{s} = {s} * tl.exp({m} - {r})\n")
    st.replace_range(st.line_start(loop1.lineno), st.line_start(loop2.end_lineno + 1), new)
    desc = (f"{kernel}: max pass and sum-of-exp pass over {shown} fused into one online pass ({m} per lane, "
            f"{s} rescaled when the max grows, then once to {r}); each row is read once instead of twice")
    return _finish("online_logsumexp", ctx, st.apply(), desc, {"max": m, "sum": s})


def _rewrite_scalar(p: Any, ctx: RecipeContext, kernel: str, pat: dict[str, Any]) -> RewriteResult:
    """The scalar form: ``m`` is already the row max after the loop, so no lane merge follows it."""
    st = p.st
    loop1, loop2, m, x, s = pat["loop1"], pat["loop2"], pat["m"], pat["x"], pat["s"]
    ind = st.indent_of(loop1.lineno)
    inner = st.indent_of(loop1.body[-1].lineno)
    last = loop1.body[-1]
    bind, shown = "", x if x.isidentifier() else "the loaded chunk"
    if not x.isidentifier():
        bind, x = f"{inner}{m}_x = {x}\n", f"{m}_x"
    online = (bind + f"{inner}{m}_new = tl.maximum({m}, tl.max({x}, axis=0))\n"
              f"{inner}{m}_ref = tl.where({m}_new == float(\"-inf\"), 0.0, {m}_new)\n"
              f"{inner}{s} = {s} * tl.exp({m} - {m}_ref) + tl.sum(tl.exp({x} - {m}_ref), axis=0)\n"
              f"{inner}{m} = {m}_new\n")
    new = (f"{ind}{st.segment(pat['init'])}\n"
           + "".join(st.lines[loop1.lineno - 1: last.lineno - 1])
           + online)
    st.replace_range(st.line_start(loop1.lineno), st.line_start(loop2.end_lineno + 1), new)
    desc = (f"{kernel}: max pass and sum-of-exp pass over {shown} fused into one online pass ({m} the running max "
            f"of chunk maxima, {s} rescaled when it grows); each row is read once instead of twice")
    return _finish("online_logsumexp", ctx, st.apply(), desc, {"max": m, "sum": s})
