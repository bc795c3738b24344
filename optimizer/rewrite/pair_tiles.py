"""``interleaved_pairs``: two accesses of interleaved element pairs -> one ``[..., 2]`` tile (card
``interleaved-pair-tiles``).

Interleaved pairs (the real and imaginary parts of complex numbers, rotary-embedding pairs, (x, y) coordinates)
are often read and written as two strided accesses, one per member::

    re = tl.load(p + d * 2, mask=m, other=0.0)
    im = tl.load(p + d * 2 + 1, mask=m, other=0.0)
    ...
    tl.store(p + d * 2, new_re, mask=m)
    tl.store(p + d * 2 + 1, new_im, mask=m)

Each access steps two elements between neighbouring lanes: every warp-wide load fetches the same sectors twice and
each thread moves one element per instruction. The pair as one tile with a unit-stride last axis::

    re, im = tl.split(tl.load(tl.expand_dims(p + d * 2, -1) + tl.arange(0, 2), mask=tl.expand_dims(m, -1),
                              other=0.0))
    ...
    tl.store(tl.expand_dims(p + d * 2, -1) + tl.arange(0, 2), tl.join(new_re.to(...), new_im.to(...)),
             mask=tl.expand_dims(m, -1))

halves the memory instructions and makes each warp's access contiguous (the two members of a pair sit in
neighbouring lanes or in one thread's vector). The values are the same: the tile's ``[..., 0]`` / ``[..., 1]`` are
the elements at ``A`` / ``A + 1``; a stored value is cast to the pointer's element type, as ``tl.store`` does.

Domain (each refused otherwise): in a launched kernel, two ``name = tl.load(A, ...)`` / ``tl.load(A + 1, ...)``
in the same block with the same mask, ``other`` and keyword arguments, the address ``A`` a block address (it, or the
definitions it reads, contains ``tl.arange``) that steps 2 elements per lane (a product by the literal 2); between
the two loads no store or atomic and no statement that reads or assigns the second name or assigns a name the address
reads. Stores: two adjacent ``tl.store(A, x, ...)`` / ``tl.store(A + 1, y, ...)`` with the same mask and keywords.
Every such pair of the kernel is rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import arg_value, call_name, expand_defs, skip_ids, walk

__all__ = ["InterleavedPairs"]

_NONE = ("no pair of tl.load / tl.store at addresses A and A + 1 where A is a block address stepping 2 elements per "
         "lane (interleaved pairs)")
_MEMORY_WRITES = ("tl.store", "tl.atomic_add", "tl.atomic_max", "tl.atomic_min", "tl.atomic_xchg", "tl.atomic_cas",
                  "tl.atomic_and", "tl.atomic_or", "tl.atomic_xor")


@dataclass
class _Access:
    stmt: cst.SimpleStatementLine
    call: cst.Call
    address: cst.BaseExpression
    rest: list[str]  # every other argument's code (positional after the address, then keywords, sorted)
    mask: cst.BaseExpression | None
    target: str | None  # the assigned name of a load
    value: cst.BaseExpression | None  # the stored value of a store
    suffix: str = ""  # a load's conversion chain (``.to(tl.float32)``), applied to the whole tile


@dataclass
class _Plan:
    loads: list[tuple[_Access, _Access]] = field(default_factory=list)
    stores: list[tuple[_Access, _Access]] = field(default_factory=list)


def _names(node: cst.CSTNode) -> set[str]:
    skip = skip_ids(node)
    return {n.value for n in walk(node) if isinstance(n, cst.Name) and id(n) not in skip}


def _assigned(stmt: cst.CSTNode) -> set[str]:
    out: set[str] = set()
    for n in walk(stmt):
        targets: list[cst.BaseAssignTargetExpression] = []
        if isinstance(n, cst.Assign):
            targets = [t.target for t in n.targets]
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign)):
            targets = [n.target]
        for t in targets:
            out |= {m.value for m in walk(t) if isinstance(m, cst.Name)}
    return out


def _access(stmt: cst.BaseStatement, code: Any) -> _Access | None:
    """A ``name = tl.load(...)`` or ``tl.store(...)`` statement line."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    small = stmt.body[0]
    target = None
    suffix = ""
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        call, target = small.value, small.targets[0].target.value
        want = "tl.load"
        # tl.load(...).to(dtype) / .cast(dtype): the conversion applies element-wise, so to the tile as well
        while (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
               and call.func.attr.value in ("to", "cast") and isinstance(call.func.value, cst.Call)):
            args = ", ".join((f"{a.keyword.value}=" if a.keyword is not None else "") + code(a.value)
                             for a in call.args)
            suffix = f".{call.func.attr.value}({args})" + suffix
            call = call.func.value
    elif isinstance(small, cst.Expr):
        call, want = small.value, "tl.store"
    else:
        return None
    if not isinstance(call, cst.Call) or call_name(call) != want or any(a.star for a in call.args):
        return None
    address = arg_value(call, "pointer", 0)
    if address is None:
        return None
    value = arg_value(call, "value", 1) if want == "tl.store" else None
    if want == "tl.store" and value is None:
        return None
    skip = {id(address), id(value)}
    pos = [code(a.value) for a in call.args if a.keyword is None and id(a.value) not in skip]
    kws = sorted(f"{a.keyword.value}={code(a.value)}" for a in call.args if a.keyword is not None
                 and id(a.value) not in skip)
    mask = arg_value(call, "mask", 2 if want == "tl.store" else 1)
    return _Access(stmt, call, address, pos + kws, mask, target, value, suffix)


def _plus_one(second: cst.BaseExpression, first: cst.BaseExpression, code: Any) -> bool:
    """``second`` is ``first + 1``."""
    return (isinstance(second, cst.BinaryOperation) and isinstance(second.operator, cst.Add)
            and isinstance(second.right, cst.Integer) and second.right.value == "1"
            and code(second.left) == code(first))


def _steps_two(address: cst.BaseExpression, defs: dict[str, cst.BaseExpression]) -> bool:
    """The address is a block address (``tl.arange`` in it or its definitions) with a product by the literal 2."""
    full = expand_defs(address, defs)
    if not any(isinstance(n, cst.Call) and call_name(n) == "tl.arange" for n in walk(full)):
        return False
    return any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Multiply)
               and any(isinstance(s, cst.Integer) and s.value == "2" for s in (n.left, n.right))
               for n in walk(address))


def _blocks(fn: cst.FunctionDef) -> list[list[cst.BaseStatement]]:
    return [list(n.body) for n in walk(fn) if isinstance(n, cst.IndentedBlock)]


def _defs(fn: cst.FunctionDef) -> dict[str, cst.BaseExpression]:
    """Names assigned exactly once in the kernel (a simple ``name = expr``) -> their definition."""
    seen: dict[str, list[cst.BaseExpression]] = {}
    for n in walk(fn):
        if isinstance(n, cst.Assign):
            for t in n.targets:
                if isinstance(t.target, cst.Name):
                    seen.setdefault(t.target.value, []).append(n.value)
                else:
                    for m in walk(t.target):
                        if isinstance(m, cst.Name):
                            seen.setdefault(m.value, []).extend([n.value, n.value])
        elif isinstance(n, (cst.AugAssign, cst.For)):
            for m in walk(n.target):
                if isinstance(m, cst.Name):
                    seen.setdefault(m.value, []).extend([cst.Name("_"), cst.Name("_")])
    return {k: v[0] for k, v in seen.items() if len(v) == 1}


def _plan(t: Target) -> _Plan | str:
    code, fn = t.tree.code, t.kernel.node
    defs = _defs(fn)
    plan = _Plan()
    for block in _blocks(fn):
        acc = [_access(s, code) for s in block]
        used: set[int] = set()
        for i, a in enumerate(acc):
            if a is None or i in used or not _steps_two(a.address, defs):
                continue
            for j in range(i + 1, len(block)):
                b = acc[j]
                if (b is not None and j not in used and (b.target is None) == (a.target is None)
                        and _plus_one(b.address, a.address, code) and b.rest == a.rest and b.suffix == a.suffix):
                    if a.target is None and j == i + 1:
                        plan.stores.append((a, b))
                        used |= {i, j}
                    elif a.target is not None and b.target is not None and _loads_movable(block, i, j, a, b):
                        plan.loads.append((a, b))
                        used |= {i, j}
                    break
                if a.target is None:
                    break  # stores pair only when adjacent
    return plan if plan.loads or plan.stores else _NONE


def _loads_movable(block: list[cst.BaseStatement], i: int, j: int, a: _Access, b: _Access) -> bool:
    """The second load may move up to the first: nothing between writes memory, touches its name or redefines
    what the address, mask and other arguments read."""
    assert a.target is not None and b.target is not None
    if a.target == b.target or a.target in _names(a.call):
        return False
    reads = _names(b.call)
    for s in block[i + 1:j]:
        if not isinstance(s, cst.SimpleStatementLine):
            return False
        if any(isinstance(n, cst.Call) and call_name(n) in _MEMORY_WRITES for n in walk(s)):
            return False
        if b.target in _names(s) or _assigned(s) & (reads | {a.target}):
            return False
    return True


class InterleavedPairs:
    """Two accesses of interleaved element pairs (``A`` and ``A + 1``, ``A`` stepping 2 elements) -> one tile."""

    kind = "interleaved_pairs"
    card = "interleaved-pair-tiles"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        plan = _plan(t)
        t.plan = plan
        return [] if isinstance(plan, _Plan) else [plan]

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        plan = t.plan if isinstance(t.plan, _Plan) else _plan(t)
        assert isinstance(plan, _Plan)
        return [{"load_pairs": len(plan.loads), "store_pairs": len(plan.stores)}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        plan = t.plan if isinstance(t.plan, _Plan) else _plan(t)
        assert isinstance(plan, _Plan)
        code, tree = t.tree.code, t.tree
        lines = []
        for a, b in plan.loads:
            tree.replace(a.stmt.body[0], _small(f"{a.target}, {b.target} = tl.split({_call(a, code)}{a.suffix})"))
            tree.remove(b.stmt)
            lines.append(f"{a.target}, {b.target}")
        for a, b in plan.stores:
            assert a.value is not None and b.value is not None
            elt = f"({code(a.address)}).dtype.element_ty"
            joined = f"tl.join(({code(a.value)}).to({elt}), ({code(b.value)}).to({elt}))"
            tree.replace(a.stmt.body[0], _small(_call(a, code, joined)))
            tree.remove(b.stmt)
            lines.append(f"store {code(a.address)}")
        return (f"{t.kernel.name}: {len(plan.loads)} load pair(s) and {len(plan.stores)} store pair(s) at A / A + 1 "
                f"-> one [..., 2] tile each (tl.split / tl.join): {'; '.join(lines)}")[:600]


def _call(a: _Access, code: Any, value: str | None = None) -> str:
    """The pair's access as one tile: the address and mask gain a trailing axis of 2 (the mask broadcasts)."""
    args = [f"tl.expand_dims({code(a.address)}, -1) + tl.arange(0, 2)"]
    if value is not None:
        args.append(value)
    for arg in a.call.args:
        if arg.value is a.address or arg.value is a.value:
            continue
        text = f"tl.expand_dims({code(arg.value)}, -1)" if arg.value is a.mask else code(arg.value)
        args.append(f"{arg.keyword.value}={text}" if arg.keyword is not None else text)
    return f"{call_name(a.call)}({', '.join(args)})"


def _small(text: str) -> cst.BaseSmallStatement:
    stmt = cst.parse_statement(text + "\n")
    assert isinstance(stmt, cst.SimpleStatementLine)
    return stmt.body[0]
