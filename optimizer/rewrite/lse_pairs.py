"""Log-sum-exp pairs among a row block's reductions: a max and the sums of ``exp(x - max)`` that read it.

``chunked_row_reduction`` splits a whole-row block into chunks with one per-lane accumulator per reduction; a
reduction that reads another one's result is a second pass it cannot split, except for this shape::

    m = tl.max(x, axis=0)
    s = tl.sum(E(x - m), axis=0)          # E: tl.exp, tl.exp2, or a @triton.jit helper returning one of them

where the sum may scale its argument by a scalar (``E((x - m) * c)``, ``E(c * (x - m))``) and mask it
(``tl.where(M, E(x - m), 0.0)``, the max then of ``x`` or ``tl.where(M, x, -inf)``). Since
``E((x - a) c) = E((x - b) c) * E((b - a) c)``, each lane keeps its running max and rescales its partial sum when
the max grows (the online softmax of Milakov & Gimelshein), and the lanes are brought to the row max after the
loop::

    m_new = tl.maximum(acc_m, x)
    m_ref = tl.where(m_new == float("-inf"), 0.0, m_new)     # lanes that saw no value yet: no inf - inf
    acc_s = acc_s * E(acc_m - m_ref) + E(x - m_ref)
    acc_m = m_new
    ...
    m = tl.max(acc_m, axis=0)
    s = tl.sum(acc_s * E(acc_m - m), axis=0)

Domain (``find_pairs``; what does not match is left to the caller's refusal): the max is a whole statement
``m = tl.max(X[, 0])`` assigning a name bound nowhere else in the kernel; the sum is a ``tl.sum`` over axis 0 of
``E(X - m)`` (optionally times a scalar that reads neither the block nor a reduction result) with ``X`` the same
expression as the max's input, as normalized Python.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from optimizer.kernel.flow import assigned
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import arg_value, body_of, call_name, walk
from optimizer.rewrite.tree import node_code as _code

__all__ = ["LsePair", "LseSum", "exp_functions", "find_pairs"]

#: Triton's exponentials: the rescaling identity holds for any base
_EXP = frozenset({"tl.exp", "tl.exp2", "tl.math.exp", "tl.math.exp2", "triton.language.exp", "triton.language.exp2"})


@dataclass
class LseSum:
    call: cst.Call  # the tl.sum
    exp: str  # the exponential it applies (as called: ``tl.exp`` or a helper's name)
    exp_input: str  # the block in its exponent (``X`` of ``E(X - m)``), as written
    scale: str | None  # the scalar factor of the exponent, as written
    mask: str | None = None  # ``tl.sum(tl.where(M, E(..), 0.0))``: M, as written


@dataclass
class LsePair:
    max_call: cst.Call
    m: str  # the name the max is assigned to
    x: str  # the max's input, as written
    sums: list[LseSum]


def _norm(text: str) -> str:
    return ast.unparse(ast.parse(f"({text})", mode="eval").body)


def exp_functions(t: Target) -> set[str]:
    """Triton's exponentials and the ``@triton.jit`` helpers of the module whose body is ``return E(p)`` or
    ``return E(p.to(...))`` for their one parameter ``p`` and ``E`` one of them (fla's ``exp``)."""
    out = set(_EXP)
    for name, k in t.tree.kernels.items():
        body = body_of(k.node)
        params = k.node.params.params
        line: cst.CSTNode | None = body[-1] if len(body) == 1 else None
        # ``def exp(x): return ...`` on one line: the suite holds the return itself
        ret = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else line
        call = ret.value if isinstance(ret, cst.Return) else None
        if len(params) != 1 or not isinstance(call, cst.Call) or call_name(call) not in _EXP or len(call.args) != 1:
            continue
        arg = call.args[0].value
        if (isinstance(arg, cst.Call) and isinstance(arg.func, cst.Attribute) and arg.func.attr.value == "to"
                and len(arg.args) == 1):
            arg = arg.func.value
        if isinstance(arg, cst.Name) and arg.value == params[0].name.value:
            out.add(name)
    return out


def _axis0(call: cst.Call) -> bool:
    axis = arg_value(call, "axis", 1)
    extra = [a for a in call.args if a.keyword is not None and a.keyword.value not in ("input", "axis")]
    return (axis is None or _code(axis) in ("0", "-1", "None")) and not extra and not any(a.star for a in call.args)


def _difference(e: cst.BaseExpression) -> tuple[cst.BinaryOperation, cst.BaseExpression | None] | None:
    """``X - m`` -> (it, None); ``(X - m) * c`` or ``c * (X - m)`` -> (the difference, c)."""
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Subtract):
        return e, None
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Multiply):
        for d, c in ((e.left, e.right), (e.right, e.left)):
            if isinstance(d, cst.BinaryOperation) and isinstance(d.operator, cst.Subtract):
                return d, c
    return None


_NEG_INF = frozenset({"float('-inf')", "-float('inf')", "-math.inf", "float('-Inf')"})


def _masked(e: cst.BaseExpression | None) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """``tl.where(M, E, 0.0)`` (a zero for the lanes left out) -> (M, E); else None."""
    if not isinstance(e, cst.Call):
        return None
    args = [a.value for a in e.args if a.keyword is None and not a.star]
    if call_name(e) == "tl.where" and len(args) == 3 and _code(args[2]).strip() in ("0", "0.0", "0."):
        return args[0], args[1]
    return None


def _max_inputs(x: str, mask: cst.BaseExpression | None) -> set[str]:
    """The texts (normalized) of the block the max reads, as the sum's exponent may name it: the block itself, or,
    for a masked sum, ``X`` where the max reads ``tl.where(M, X, -inf)`` with the sum's ``M``."""
    out = {_norm(x)}
    w = cst.parse_expression(x)
    args = [a.value for a in w.args if a.keyword is None] if isinstance(w, cst.Call) else []
    if (mask is not None and call_name(w) == "tl.where" and len(args) == 3 and _norm(_code(args[0])) == _norm(
            _code(mask)) and _norm(_code(args[2])) in _NEG_INF):
        out.add(_norm(_code(args[1])))
    return out


def find_pairs(t: Target, reductions: list[cst.Call], statements: list[cst.BaseStatement],
               block_names: set[str], result_names: set[str]) -> list[LsePair]:
    """The log-sum-exp pairs among ``reductions`` (the ``tl.sum`` / ``tl.max`` calls of ``statements``, the code
    after the block is built); ``block_names``: the names that hold the block, ``result_names``: the names the
    statements assign (a scale must read neither)."""
    exps = exp_functions(t)
    binds: dict[str, int] = {}
    for n in walk(t.kernel.node.body):
        for name in assigned(n)[0]:
            binds[name] = binds.get(name, 0) + 1
    maxes: dict[str, LsePair] = {}
    ids = {id(r) for r in reductions}
    for s in statements:
        line = s.body[0] if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 else None
        if (isinstance(line, cst.Assign) and len(line.targets) == 1 and isinstance(line.targets[0].target, cst.Name)
                and isinstance(line.value, cst.Call) and id(line.value) in ids and call_name(line.value) == "tl.max"
                and _axis0(line.value) and binds.get(line.targets[0].target.value) == 1):
            x = arg_value(line.value, "input", 0)
            if x is not None:
                m = line.targets[0].target.value
                maxes[m] = LsePair(line.value, m, _code(x), [])
    for r in reductions:
        arg = arg_value(r, "input", 0)
        mask = _masked(arg) if call_name(r) == "tl.sum" else None
        if mask is not None:
            arg = mask[1]
            if {n.value for n in walk(mask[0]) if isinstance(n, cst.Name)} & result_names:
                continue
        if call_name(r) != "tl.sum" or not _axis0(r) or not isinstance(arg, cst.Call) or call_name(arg) not in exps:
            continue
        inner = arg_value(arg, "x", 0) if len(arg.args) == 1 else None
        parts = _difference(inner) if inner is not None else None
        if parts is None:
            continue
        d, c = parts
        pair = maxes.get(d.right.value) if isinstance(d.right, cst.Name) else None
        if pair is None or _norm(_code(d.left)) not in _max_inputs(pair.x, mask[0] if mask else None):
            continue
        if c is not None and {n.value for n in walk(c) if isinstance(n, cst.Name)} & (block_names | result_names):
            continue
        pair.sums.append(LseSum(r, call_name(arg), _code(d.left), _code(c) if c is not None else None,
                                _code(mask[0]) if mask else None))
    return [p for p in maxes.values() if p.sums]
