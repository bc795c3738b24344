"""``compiler_hints``: ``tl.multiple_of`` / ``tl.max_contiguous`` where they are known to hold (card
``compiler-hints-contiguity``).

``{"hints": [...], "targets": [...], "value": 16}``. Two kinds of target:

- ``offsets``: a top-level ``offs = tl.arange(0, B)`` or ``offs = pid * B + tl.arange(0, B)`` gets, on the next
  line, ``offs = tl.max_contiguous(tl.multiple_of(offs, V), V)``, V the recipe's value capped by the block the
  recorded launch passed (a block of 8 is contiguous over 8, not 16); a target list naming variables hints only
  those;
- ``strides``: a ``stride*`` parameter every recorded launch passed divisible by 16 gets
  ``stride = tl.multiple_of(stride, V)`` as the kernel's first statement (after its docstring), for V <= 16.

Domain: the hot kernel (else the most launched, else the first launched one; never another in its place).
Refused: nothing left to hint there (offsets already hinted, no arange offsets of that form, no recorded launch, or
a stride some recorded launch passed undivisible).
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.launch_knobs import NOT_LITERAL, literal_value
from optimizer.rewrite.tree import body_of, dotted

__all__ = ["CompilerHints", "expr_text"]


def expr_text(node: cst.CSTNode) -> str:
    """The expression as ``ast.unparse`` spells it (layout and redundant parentheses normalized)."""
    return ast.unparse(ast.parse(cst.Module([]).code_for_node(node).strip(), mode="eval"))


def _arange(n: cst.CSTNode) -> cst.Call | None:
    if (isinstance(n, cst.Call) and dotted(n.func) in ("tl.arange", "triton.language.arange")
            and len([a for a in n.args if a.keyword is None]) == 2):
        return n
    return None


def _positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None]


def _arange_offsets(body: list[cst.BaseStatement]) -> list[tuple[cst.SimpleStatementLine, str, str]]:
    """Top-level ``v = [pid * B +] tl.arange(0, B)`` assignments: (their line, v, the block expression B)."""
    out = []
    for line in body:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for stmt in line.body:
            if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0].target, cst.Name)):
                continue
            v = stmt.value
            ar = _arange(v)
            if ar is None and isinstance(v, cst.BinaryOperation) and isinstance(v.operator, cst.Add):
                for side, other in ((v.left, v.right), (v.right, v.left)):
                    a = _arange(side)
                    if (a is not None and isinstance(other, cst.BinaryOperation)
                            and isinstance(other.operator, cst.Multiply)
                            and expr_text(_positional(a)[1]) in {expr_text(other.left), expr_text(other.right)}):
                        ar = a
            if ar is not None and expr_text(_positional(ar)[0]) == "0":
                out.append((line, stmt.targets[0].target.value, expr_text(_positional(ar)[1])))
    return out


@dataclass
class _Plan:
    after: list[tuple[cst.BaseStatement, str]] = field(default_factory=list)  # (line, statement to add after it)
    first: list[str] = field(default_factory=list)  # statements to add before the kernel's first statement
    hinted: list[str] = field(default_factory=list)


def _plan(t: Target, ctx: RecipeContext, params: dict[str, Any]) -> _Plan:
    hints = set(params.get("hints") or ["multiple_of", "max_contiguous"])
    targets = list(params.get("targets") or ["offsets", "strides"])
    value = int(params.get("value", 16))
    k = t.kernel
    src = ast.unparse(ast.parse(textwrap.dedent(t.tree.module.code_for_node(k.node))))
    body = body_of(k.node)
    plan = _Plan()
    constexpr_vals: dict[str, Any] = next(
        (r.get("constexprs", {}) for r in ctx.launches if r.get("kernel") == k.name), {}
    )
    if "offsets" in targets or any(x not in ("offsets", "strides") for x in targets):
        for line, var, block in _arange_offsets(body):
            if targets != ["offsets"] and "offsets" not in targets and var not in targets:
                continue
            if f"multiple_of({var}" in src or f"max_contiguous({var}" in src:
                continue
            bval = constexpr_vals.get(block)
            v = min(value, bval) if isinstance(bval, int) and bval > 0 else value
            if v < 2:  # a one-lane block: multiple_of(x, 1) / max_contiguous(x, 1) state nothing
                continue
            e = var
            if "multiple_of" in hints:
                e = f"tl.multiple_of({e}, {v})"
            if "max_contiguous" in hints:
                e = f"tl.max_contiguous({e}, {v})"
            if e != var:
                plan.after.append((line, f"{var} = {e}\n"))
                plan.hinted.append(f"{var}: {e}")
    if "strides" in targets and "multiple_of" in hints:
        recs = [r for r in ctx.launches if r.get("kernel") == k.name]
        for name in k.params:
            if not name.lower().startswith("stride") or name in k.constexprs or f"multiple_of({name}" in src:
                continue
            if recs and all(name in r.get("divisible_by_16", []) for r in recs) and value <= 16:
                plan.first.append(f"{name} = tl.multiple_of({name}, {value})\n")
                plan.hinted.append(f"{name}: multiple_of {value} (every recorded launch had it divisible by 16)")
    return plan


def _first_statement(body: list[cst.BaseStatement]) -> cst.BaseStatement:
    """The kernel's first statement after a docstring (the docstring itself when it is the only one)."""
    s0 = body[0]
    if (isinstance(s0, cst.SimpleStatementLine) and isinstance(s0.body[0], cst.Expr)
            and literal_value(s0.body[0].value) is not NOT_LITERAL and len(body) > 1):
        return body[1]
    return s0


class CompilerHints:
    """Divisibility and contiguity hints on block offsets and on strides the recorded launches show divisible."""

    kind = "compiler_hints"
    card = "compiler-hints-contiguity"

    def selects(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> bool:
        return True  # the hot kernel (the first target) or nothing

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        t.plan = _plan(t, ctx, params)
        if not t.plan.hinted:
            return [f"no un-hinted block offsets or always-divisible strides in {t.kernel.name}"]
        return []

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"hinted": t.plan.hinted}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        plan: _Plan = t.plan
        for line, text in plan.after:
            t.tree.insert_after(line, text)
        if plan.first:
            t.tree.insert_above(_first_statement(body_of(t.kernel.node)), "".join(plan.first))
        return f"{t.kernel.name}: " + "; ".join(plan.hinted)
