"""Compile-time ``if`` chains after a chunked row block -> one conditional assignment per assigned name.

``chunked_row_passes`` recomputes the row's block statements in every pass, so a branch after the row block must
pick the same arm in each pass and the arm's effect must be a value each pass can recompute. Domain: an ``if`` /
``elif`` / ``else`` chain whose tests read only compile-time names (constexpr parameters, module globals) and
whose arms hold only single assignments (``n = v``) or augmented assignments (``n op= v``) to a name. Arm *i*
becomes, per statement, ``n = (v) if (c_i) else n`` (``n = (n op (v)) if (c_i) else n``), with ``c_i`` the arm's
test and-ed with the negations of the tests before it: the compiler folds the constant test, keeping the arm it
would have taken. Refused with a reason for a test that reads a runtime value and for any other statement in an
arm (a store or a nested ``if`` runs once, not once per pass).
"""

from __future__ import annotations

import libcst as cst

from optimizer.rewrite.tree import node_code as _code
from optimizer.rewrite.tree import walk

__all__ = ["compile_time_branches", "plain_update"]

_WORDS = {"not", "and", "or", "None", "True", "False"}


def _arms(s: cst.If) -> list[tuple[cst.BaseExpression | None, cst.BaseSuite]]:
    """``(test, body)`` per arm in order; the ``else`` arm's test is None."""
    out: list[tuple[cst.BaseExpression | None, cst.BaseSuite]] = [(s.test, s.body)]
    tail = s.orelse
    while isinstance(tail, cst.If):
        out.append((tail.test, tail.body))
        tail = tail.orelse
    if tail is not None:
        out.append((None, tail.body))
    return out


def _assignment(st: cst.CSTNode, cond: str) -> cst.SimpleStatementLine | None:
    """``n = (v) if (cond) else n`` for ``n = v`` / ``n op= v`` to a name; None for any other statement."""
    small = st.body[0] if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        name, value = small.targets[0].target.value, _code(small.value)
    elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
        name = small.target.value
        value = f"{name} {_code(small.operator).rstrip('=').strip()} ({_code(small.value)})"
    else:
        return None
    return cst.ensure_type(cst.parse_statement(f"{name} = ({value}) if ({cond}) else {name}\n"),
                           cst.SimpleStatementLine)


def plain_update(line: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
    """``n op= v`` to a name -> ``n = n op (v)``; any other line as it is. Triton values are immutable (a
    ``tl.tensor`` has no in-place operators), so both rebind ``n`` to the same new value, and the single assignment
    is what each pass can recompute under a fresh name."""
    small = line.body[0] if len(line.body) == 1 else None
    if not (isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name)):
        return line
    name = small.target.value
    text = f"{name} = {name} {_code(small.operator).rstrip('=').strip()} ({_code(small.value)})\n"
    return cst.ensure_type(cst.parse_statement(text), cst.SimpleStatementLine)


def compile_time_branches(s: cst.If, static: set[str]) -> list[cst.SimpleStatementLine] | str:
    """The chain ``s`` as conditional assignments in order (see the module docstring), or the reason it is refused.
    ``static``: the names whose values the compiler knows (constexpr parameters, module globals)."""
    arms = _arms(s)
    for test, _ in arms:
        names = {n.value for n in walk(test) if isinstance(n, cst.Name)} - _WORDS if test is not None else set()
        if not names <= static:
            runtime = ", ".join(sorted(names - static))
            return (f"`if {_code(s.test)}:` after the row block tests a runtime value ({runtime}; only a compile-time "
                    "test keeps each pass's branch fixed)")
    out: list[cst.SimpleStatementLine] = []
    before: list[str] = []  # the negated tests of the arms above
    for test, body in arms:
        parts = [*before, _code(test)] if test is not None else before
        cond = parts[0] if len(parts) == 1 else " and ".join(f"({p})" for p in parts)
        for st in body.body:
            line = _assignment(st, cond)
            if line is None:
                return (f"`if {_code(s.test)}:` holds `{_code(st)}`, not an assignment to a name (only values are "
                        "recomputed per pass)")
            out.append(line)
        if test is not None:
            before.append(f"not ({_code(test)})")
    return out
