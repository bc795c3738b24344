"""Preparation step: a kernel's early ``return`` guards -> the rest of the body under the negated guard.

Real kernels skip work for a row with a guard: ``if slot_idx < 0: return`` (vLLM's KV-cache write skips padded
tokens), and some end with a bare ``return``. A transform that wraps the body in a loop over several rows per
program (``rows_per_program``) cannot keep a ``return`` in it (it would end every later row of the program too), so
it refuses such a kernel ("returns early"). This preparation rewrites the guards into the form it reads, leaving
the program unchanged::

    if slot_idx < 0:                    if not (slot_idx < 0):
        return               ->             tile_i = tl.program_id(axis=1)
    tile_i = tl.program_id(axis=1)          ...
    ...
    return

Domain: every ``return`` of the kernel returns no value and is a top-level statement of its body: a bare last
statement (dropped), or the only statement of an ``if`` without ``elif`` / ``else`` (the statements after it move
under ``if not (<guard>):``, guards nesting in order). Anything else (a return in a loop, in a branch beside other
statements, returning a value) is refused with the reason, and the transform's refusal stands.
``optimizer.rewrite.registry`` runs it before ``rows_per_program`` when that refuses for this reason.
"""

from __future__ import annotations

import textwrap

import libcst as cst

from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.tree import Tree, body_of, walk

__all__ = ["TRIGGER", "guard_early_returns"]

#: the refusal text (``rows_per_program``) this preparation answers
TRIGGER = "returns early"


def _is_return(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Return) \
        and stmt.body[0].value is None


def _guard(stmt: cst.BaseStatement) -> cst.BaseExpression | None:
    """The condition of ``if <c>: return`` (nothing else in it, no elif / else), else None."""
    if isinstance(stmt, cst.If) and stmt.orelse is None and isinstance(stmt.body, cst.IndentedBlock) \
            and len(stmt.body.body) == 1 and _is_return(stmt.body.body[0]):
        return stmt.test
    return None


def guard_early_returns(source: str) -> tuple[str, str]:
    """(new source, description); raises ``NotApplicable`` when no launched kernel's returns are all guards."""
    tree = Tree(source)
    done, reasons = [], []
    for name, k in tree.kernels.items():
        returns = [n for n in walk(k.node.body) if isinstance(n, cst.Return)]
        if not returns or not tree.launches_of(name):
            continue
        top = list(body_of(k.node))
        guards = {id(s): g for s in top if (g := _guard(s)) is not None}
        last = top[-1] if top and _is_return(top[-1]) else None
        placed = {id(r) for s in top if id(s) in guards or s is last for r in walk(s) if isinstance(r, cst.Return)}
        stray = [r for r in returns if id(r) not in placed]
        if stray:
            reasons.append(f"{name}: a return is not a top-level `if <guard>: return` or the last statement"
                           + (" (it returns a value)" if any(r.value is not None for r in stray) else ""))
            continue
        code = tree.module.code_for_node
        text, depth, empty = "", 0, False
        for s in top:
            if s is last:
                continue
            if id(s) in guards:
                text += textwrap.indent(f"if not ({code(guards[id(s)]).strip()}):\n", "    " * depth)
                depth, empty = depth + 1, True
                continue
            text += textwrap.indent(code(s), "    " * depth)
            empty = False
        if empty:
            text += "    " * depth + "pass\n"  # a guard with nothing after it
        first = top[0]
        tree.insert_before(first, text)
        for s in top:
            tree.remove(s)
        done.append(f"{name}: {len(guards)} early return guard(s) -> the rest under `if not (...)`"
                    + (", the final bare return dropped" if last is not None else ""))
    if not done:
        raise NotApplicable("no launched kernel returns only from top-level guards: " + "; ".join(reasons)
                            if reasons else "no launched kernel returns early")
    return tree.render(), "; ".join(done)
