"""``value_only_reduction``: drop an argmax whose index only masks the maximum out again (card
``value-only-reduction``).

Before (the top-2 idiom)::

    first = tl.max(x, axis=0)
    first_idx = tl.argmax(x, axis=0)
    rest = tl.where(offs == first_idx, float("-inf"), x)
    second = tl.max(rest, axis=0)

After (single-operand reductions only; duplicate maxima counted so ties keep torch.topk semantics)::

    first = tl.max(x, axis=0)
    first_idx_is_ext = x == tl.expand_dims(first, 0)
    first_idx_count = tl.sum(first_idx_is_ext.to(tl.int32), axis=0)
    rest = tl.where(first_idx_is_ext, float("-inf"), x)
    second = tl.max(rest, axis=0)
    second = tl.where(first_idx_count > 1, first, second)

Domain: a launched kernel with a top-level ``idx = tl.argmax(x, ...)`` (or ``tl.argmin``) over a name ``x``, where
every later use of ``idx`` is ``<expr> == idx`` as the condition of ``tl.where(cond, fill, x)`` over the same ``x``,
and the masked values feed a ``tl.max`` (``tl.min``) with the same axis assigned to a name. Refused otherwise: an
index that is stored, compared otherwise or used in arithmetic is consumed for real, and a masked value that no
named reduction reads has no second extreme to fix up for ties. The first argmax of the kernel that qualifies is
rewritten; an existing ``m = tl.max(x, axis)`` before it is reused as the extreme value, else one is added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import libcst as cst

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import Tree, body_of, call_name, skip_ids, statements, walk

__all__ = ["ValueOnlyReduction"]

_NONE = "no tl.argmax / tl.argmin assigned to a name in a kernel"


def _assign_of(stmt: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    if (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)
            and len(stmt.body[0].targets) == 1 and isinstance(stmt.body[0].targets[0].target, cst.Name)):
        return stmt.body[0].targets[0].target.value, stmt.body[0].value
    return None


def _positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


def _axis(tree: Tree, call: cst.Call) -> str | None:
    kw = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "axis"), None)
    pos = _positional(call)
    if kw is None and len(pos) > 1:
        kw = pos[1]
    return None if kw is None or (isinstance(kw, cst.Name) and kw.value == "None") else tree.code(kw)


def _keep_dims(call: cst.Call) -> bool:
    kw = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "keep_dims"), None)
    return isinstance(kw, cst.Name) and kw.value == "True"


@dataclass
class _Plan:
    index: str
    values: str
    reduction: str  # tl.max / tl.min
    axis: str | None
    keep: bool
    statement: cst.SimpleStatementLine  # the argmax
    extreme: str | None  # an existing ``m = tl.max(x, axis)`` before the argmax
    masks: list[tuple[cst.Comparison, cst.SimpleStatementLine, str]]  # (condition, reduction statement, its target)


def _plan_one(tree: Tree, body: list[cst.BaseStatement], i: int, idx: str, call: cst.Call) -> _Plan | str:
    red = "tl.min" if call_name(call) == "tl.argmin" else "tl.max"
    x = cst.ensure_type(_positional(call)[0], cst.Name).value
    axis, keep = _axis(tree, call), _keep_dims(call)
    rest = body[i + 1:]
    uses, wheres = 0, []
    for s in rest:
        skip = skip_ids(s)
        for n in walk(s):
            if isinstance(n, cst.Name) and n.value == idx and id(n) not in skip:
                uses += 1
            if (isinstance(n, cst.Call) and call_name(n) == "tl.where" and len(n.args) == 3
                    and not any(a.keyword or a.star for a in n.args)):
                cmp, third = n.args[0].value, n.args[2].value
                if (isinstance(cmp, cst.Comparison) and len(cmp.comparisons) == 1
                        and isinstance(cmp.comparisons[0].operator, cst.Equal)
                        and idx in [c.value for c in (cmp.left, cmp.comparisons[0].comparator)
                                    if isinstance(c, cst.Name)]
                        and isinstance(third, cst.Name) and third.value == x):
                    wheres.append((n, cmp))
    if not uses or uses != len(wheres):
        return f"the index {idx} is consumed beyond masking {x} (e.g. stored or used in arithmetic)"
    extreme = None
    for s in body[:i]:
        a = _assign_of(s)
        if (a and isinstance(a[1], cst.Call) and call_name(a[1]) == red and _positional(a[1])
                and tree.code(_positional(a[1])[0]) == x and _axis(tree, a[1]) == axis and _keep_dims(a[1]) == keep):
            extreme = a[0]
    masks = []
    for where, cmp in wheres:
        target = _reduction_target(tree, rest, where, red, axis)
        if target is None:
            return "the masked values do not feed a max/min reduction assigned to a name"
        masks.append((cmp, *target))
    argmax = body[i]
    assert isinstance(argmax, cst.SimpleStatementLine)  # plan() found the argmax's assignment on it (_assign_of)
    return _Plan(idx, x, red, axis, keep, argmax, extreme, masks)


def _reduction_target(tree: Tree, rest: list[cst.BaseStatement], where: cst.Call, red: str,
                      axis: str | None) -> tuple[cst.SimpleStatementLine, str] | None:
    """The top-level ``name = tl.max(<masked>, axis)`` statement that consumes the masked values, and its name."""
    masked_name = None
    for s in rest:
        a = _assign_of(s)
        if a and a[1] is where:
            masked_name = a[0]
        if (a and isinstance(a[1], cst.Call) and call_name(a[1]) == red and _axis(tree, a[1]) == axis
                and _positional(a[1])):
            arg = _positional(a[1])[0]
            if isinstance(s, cst.SimpleStatementLine) and (  # as _assign_of found it
                    arg is where or (masked_name and isinstance(arg, cst.Name) and arg.value == masked_name)):
                return s, a[0]
    return None


def _plan(t: Target) -> _Plan | str:
    body = body_of(t.kernel.node)
    reason = _NONE
    for i, stmt in enumerate(body):
        a = _assign_of(stmt)
        if (not a or not isinstance(a[1], cst.Call) or call_name(a[1]) not in ("tl.argmax", "tl.argmin")
                or not _positional(a[1]) or not isinstance(_positional(a[1])[0], cst.Name)):
            continue
        plan = _plan_one(t.tree, body, i, a[0], a[1])
        if isinstance(plan, _Plan):
            return plan
        reason = plan
    return reason


class ValueOnlyReduction:
    """An argmax used only to mask the maximum -> value masks plus a duplicate count (ties kept)."""

    kind = "value_only_reduction"
    card = "value-only-reduction"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        plan = _plan(t)
        return [] if isinstance(plan, _Plan) else [plan]

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        plan = _plan(t)
        assert isinstance(plan, _Plan)
        return [{"index": plan.index, "values": plan.values}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        p = _plan(t)
        assert isinstance(p, _Plan) and p.index == point["index"]
        idx, x, m = p.index, p.values, p.extreme
        red_args = (f", axis={p.axis}" if p.axis is not None else "") + (", keep_dims=True" if p.keep else "")
        lines = []
        if m is None:
            m = f"{idx}_value"
            lines.append(f"{m} = {p.reduction}({x}{red_args})")
        # keep_dims results already broadcast against x; otherwise restore the reduced axis
        hit = f"{x} == tl.expand_dims({m}, {p.axis})" if p.axis is not None and not p.keep else f"{x} == {m}"
        lines += [f"{idx}_is_ext = {hit}", f"{idx}_count = tl.sum({idx}_is_ext.to(tl.int32){red_args})"]
        new = statements("\n".join(lines))
        new[0] = new[0].with_changes(leading_lines=p.statement.leading_lines)
        t.tree.edit(p.statement, lambda _old: cst.FlattenSentinel(new))
        fixed = []
        for cmp, stmt, target in p.masks:
            t.tree.replace(cmp, f"{idx}_is_ext")
            t.tree.insert_after(stmt, f"{target} = tl.where({idx}_count > 1, {m}, {target})")
            fixed.append(target)
        is_min = p.reduction == "tl.min"
        return (f"{'argmin' if is_min else 'argmax'} of {x} replaced by value masks ({idx}_is_ext) with a duplicate "
                f"count; second extreme {', '.join(fixed)} keeps tie semantics")
