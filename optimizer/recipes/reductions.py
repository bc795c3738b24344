"""The ``value_only_reduction`` recipe: drop an argmax whose index only masks the maximum out again.

Before (the top-2 idiom)::

    first = tl.max(x, axis=0)
    first_idx = tl.argmax(x, axis=0)
    rest = tl.where(offs == first_idx, float("-inf"), x)
    second = tl.max(rest, axis=0)

After (single-operand reductions only; duplicate maxima counted so ties keep torch.topk semantics)::

    first = tl.max(x, axis=0)
    first_idx_is_max = x == tl.expand_dims(first, 0)
    first_idx_count = tl.sum(first_idx_is_max.to(tl.int32), axis=0)
    rest = tl.where(first_idx_is_max, float("-inf"), x)
    second = tl.max(rest, axis=0)
    second = tl.where(first_idx_count > 1, first, second)

Applies only when every use of the index is ``<expr> == idx`` inside ``tl.where(cond, fill, x)`` over the same
``x`` and the masked values feed a ``tl.max`` assigned to a name; anything else consumes the index for real.
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

__all__ = ["apply_value_only_reduction"]


def _call_name(node: ast.AST) -> str:
    return ast.unparse(node.func) if isinstance(node, ast.Call) else ""


def _axis(call: ast.Call) -> str | None:
    kw = next((k.value for k in call.keywords if k.arg == "axis"), None)
    if kw is None and len(call.args) > 1:
        kw = call.args[1]
    return None if kw is None or (isinstance(kw, ast.Constant) and kw.value is None) else ast.unparse(kw)


def _keep_dims(call: ast.Call) -> bool:
    kw = next((k.value for k in call.keywords if k.arg == "keep_dims"), None)
    return isinstance(kw, ast.Constant) and kw.value is True


def _assign_of(stmt: ast.stmt) -> tuple[str, ast.expr] | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id, stmt.value
    return None


def apply_value_only_reduction(params: dict[str, Any], ctx: RecipeContext) -> RewriteResult:
    p = _parse(ctx)
    reason = "no tl.argmax / tl.argmin assigned to a name in a kernel"
    for k in p.kernels.values():
        body = k.node.body
        for i, stmt in enumerate(body):
            a = _assign_of(stmt)
            if not a or _call_name(a[1]) not in ("tl.argmax", "tl.argmin") or not isinstance(a[1].args[0], ast.Name):
                continue
            try:
                return _rewrite(p, ctx, body, i, a[0], a[1])  # type: ignore[arg-type]
            except NotApplicable as exc:
                reason = str(exc)
    raise NotApplicable(reason)


def _rewrite(p: Any, ctx: RecipeContext, body: list[ast.stmt], i: int, idx: str, call: ast.Call) -> RewriteResult:
    st = p.st
    is_min = _call_name(call) == "tl.argmin"
    red = "tl.min" if is_min else "tl.max"
    x = call.args[0].id  # type: ignore[attr-defined]
    axis = _axis(call)
    keep = _keep_dims(call)
    # every use of the index: `<e> == idx` as the condition of tl.where(cond, fill, x)
    uses = [n for s in body[i + 1:] for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == idx]
    wheres: list[tuple[ast.Call, ast.Compare]] = []
    for s in body[i + 1:]:
        for n in ast.walk(s):
            if _call_name(n) == "tl.where" and len(n.args) == 3 and isinstance(n.args[0], ast.Compare):  # type: ignore[attr-defined]
                cmp = n.args[0]  # type: ignore[attr-defined]
                names = [c.id for c in [cmp.left, *cmp.comparators] if isinstance(c, ast.Name)]
                if idx in names and len(cmp.ops) == 1 and isinstance(cmp.ops[0], ast.Eq) and ast.unparse(n.args[2]) == x:  # type: ignore[attr-defined]
                    wheres.append((n, cmp))  # type: ignore[arg-type]
    if not uses or len(uses) != len(wheres):
        raise NotApplicable(f"the index {idx} is consumed beyond masking {x} (e.g. stored or used in arithmetic)")
    # the extreme value itself: reuse `m = tl.max(x, axis)` defined before the argmax, else add one
    m = None
    for s in body[:i]:
        a = _assign_of(s)
        if (a and _call_name(a[1]) == red and ast.unparse(a[1].args[0]) == x  # type: ignore[attr-defined]
                and _axis(a[1]) == axis and _keep_dims(a[1]) == keep):  # type: ignore[arg-type]
            m = a[0]
    ind = st.indent_of(body[i].lineno)
    lines = []
    red_args = (f", axis={axis}" if axis is not None else "") + (", keep_dims=True" if keep else "")
    if m is None:
        m = f"{idx}_value"
        lines.append(f"{ind}{m} = {red}({x}{red_args})")
    # keep_dims results already broadcast against x; otherwise restore the reduced axis
    hit = f"{x} == tl.expand_dims({m}, {axis})" if axis is not None and not keep else f"{x} == {m}"
    lines.append(f"{ind}{idx}_is_ext = {hit}")
    lines.append(f"{ind}{idx}_count = tl.sum({idx}_is_ext.to(tl.int32){red_args})")
    st.replace_range(st.line_start(body[i].lineno), st.line_start(body[i].end_lineno + 1), "\n".join(lines) + "\n")
    fixed = []
    for where, cmp in wheres:
        st.replace(cmp, f"{idx}_is_ext")
        target = _reduction_target(body, i, where, red, axis)
        stmt = next(s for s in body if s.lineno <= target[1] <= s.end_lineno)
        st.insert(st.line_start(stmt.end_lineno + 1),
                  f"{st.indent_of(stmt.lineno)}{target[0]} = tl.where({idx}_count > 1, {m}, {target[0]})\n")
        fixed.append(target[0])
    desc = (f"{'argmin' if is_min else 'argmax'} of {x} replaced by value masks ({idx}_is_ext) with a duplicate count; "
            f"second extreme {', '.join(fixed)} keeps tie semantics")
    return _finish("value_only_reduction", ctx, st.apply(), desc, {"index": idx, "values": x})


def _reduction_target(body: list[ast.stmt], i: int, where: ast.Call, red: str, axis: str | None) -> tuple[str, int]:
    """(name, line) of the ``name = tl.max(<masked>, axis)`` that consumes the masked values."""
    masked_name = None
    for s in body[i + 1:]:
        a = _assign_of(s)
        if a and a[1] is where:
            masked_name = a[0]
        if a and _call_name(a[1]) == red and _axis(a[1]) == axis:  # type: ignore[arg-type]
            arg = a[1].args[0]  # type: ignore[attr-defined]
            if arg is where or (masked_name and isinstance(arg, ast.Name) and arg.id == masked_name):
                return a[0], s.lineno
    raise NotApplicable("the masked values do not feed a max/min reduction assigned to a name")
