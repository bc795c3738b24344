"""``lane_accumulators``: a block reduction inside a column loop -> per-lane accumulators reduced once after it.

Card ``looped-row-reduction``. A naive row kernel walks its row in chunks and reduces every chunk to a scalar::

    total = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        total += tl.sum(x, axis=0)                        # a cross-warp reduction + barriers per iteration
        m = tl.maximum(m, tl.max(x, axis=0))

Each ``tl.sum`` / ``tl.max`` over a block spread across warps lowers to shuffles, a shared-memory exchange and
barriers (IR signatures ``cross_warp_reduction``, ``barrier``) -- every iteration. After::

    total_lanes = tl.zeros([BLOCK], dtype=tl.float32)
    m_lanes = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        ...
        total_lanes += x
        m_lanes = tl.maximum(m_lanes, x)
    total += tl.sum(total_lanes, axis=0)                 # one reduction per loop
    m = tl.maximum(m, tl.max(m_lanes, axis=0))

Exact up to floating-point reassociation of the sum: the original reduced every lane of every chunk too (masked
lanes contribute what the load's ``other`` makes them contribute, in both forms).

Domain, per statement (a statement outside it is left as it is; a kernel with none is refused with each reason):
``s += tl.sum(E[, axis=0])`` (or ``s = s + tl.sum(...)``), ``s = tl.maximum(s, tl.max(E[, axis=0]))``,
``s = tl.minimum(s, tl.min(E[, axis=0]))`` (or ``s = tl.max(tl.maximum(E, s))``, the block widened by the
running value first), directly in the body of a ``for`` loop or in a branch of an ``if`` there
on compile-time values (constexprs, globals: Liger's ``if reduction == _REDUCTION_MODE_NONE: ... else: s += ..``;
the lanes of a branch compiled away stay neutral); ``s`` is read and written
nowhere else in that loop; its value before the loop is a literal (``0.0``, ``0``, ``float("-inf")`` ...) or a
scalar parameter the recorded launch types i32 / fp32 (``first_idx = n_cols``), which fixes the accumulator's
dtype (fp32 for a float, int32 for an int); the kernel has one block size (every
``tl.arange(0, B)`` names the same ``B``) and no 2-D tiles (``[:, None]``), so ``E`` is a ``[B]`` vector; the
accumulators hold at most ``_MAX_LANES`` elements per program. Refused: ``tl.dot`` kernels, reductions with other
keywords (``dtype=``, ``keep_dims=``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import libcst as cst

from optimizer.kernel.derived import loop_statements, module_names
from optimizer.rewrite.common import fresh, launch_record
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import arg_value, call_name, walk

__all__ = ["LaneAccumulators", "loop_reductions"]

#: the most accumulator lanes one program may hold (registers: 8 warps x 32 lanes x 64 fp32)
_MAX_LANES = 16384
_COMBINE = {"tl.sum": None, "tl.max": "tl.maximum", "tl.min": "tl.minimum"}
_FLOAT_INIT = {"tl.sum": "0.0", "tl.max": 'float("-inf")', "tl.min": 'float("inf")'}
_INT_INIT = {"tl.sum": "0", "tl.max": "-2147483648", "tl.min": "2147483647"}


@dataclass
class _Site:
    stmt: cst.SimpleStatementLine
    loop: cst.For
    acc: str
    fn: str  # tl.sum | tl.max | tl.min
    value: cst.BaseExpression  # E


def _reduction(e: cst.BaseExpression, acc: str, code: Any) -> tuple[str, cst.BaseExpression] | None:
    """``tl.sum(E[, axis=0])`` (etc.) -> (function, E); None for anything else."""
    if not isinstance(e, cst.Call) or call_name(e) not in _COMBINE:
        return None
    kws = {a.keyword.value for a in e.args if a.keyword is not None}
    if kws - {"axis", "input"} or len(e.args) > 2 or any(a.star for a in e.args):
        return None
    axis = arg_value(e, "axis", 1)
    if axis is not None and code(axis) not in ("0", "None", "-1"):
        return None
    value = arg_value(e, "input", 0)
    if value is None or acc in {n.value for n in walk(value) if isinstance(n, cst.Name)}:
        return None
    return call_name(e), value


def _match(s: cst.CSTNode, code: Any) -> tuple[str, str, cst.BaseExpression] | None:
    """(accumulator, function, E) for one of the accumulating statement forms."""
    if not (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1):
        return None
    x = s.body[0]
    if isinstance(x, cst.AugAssign) and isinstance(x.operator, cst.AddAssign) and isinstance(x.target, cst.Name):
        r = _reduction(x.value, x.target.value, code)
        return (x.target.value, *r) if r and r[0] == "tl.sum" else None
    if not (isinstance(x, cst.Assign) and len(x.targets) == 1 and isinstance(x.targets[0].target, cst.Name)):
        return None
    acc, v = x.targets[0].target.value, x.value
    if isinstance(v, cst.BinaryOperation) and isinstance(v.operator, cst.Add):
        for a, b in ((v.left, v.right), (v.right, v.left)):
            if isinstance(a, cst.Name) and a.value == acc and (r := _reduction(b, acc, code)) and r[0] == "tl.sum":
                return acc, *r
    if isinstance(v, cst.Call) and call_name(v) in ("tl.maximum", "tl.minimum") and len(v.args) == 2:
        a, b = v.args[0].value, v.args[1].value
        for p, q in ((a, b), (b, a)):
            if (
                isinstance(p, cst.Name)
                and p.value == acc
                and (r := _reduction(q, acc, code))
                and _COMBINE[r[0]] == call_name(v)
            ):
                return acc, *r
    if isinstance(v, cst.Call) and call_name(v) in ("tl.max", "tl.min") and len(v.args) <= 2:
        # ``s = tl.max(tl.maximum(E, s))``: the running value widens the block before it is reduced, which is
        # ``tl.maximum(s, tl.max(E))`` (max and min are idempotent: a value counted in every lane counts once)
        inner, pair = v.args[0].value, "tl.maximum" if call_name(v) == "tl.max" else "tl.minimum"
        if (isinstance(inner, cst.Call) and call_name(inner) == pair and len(inner.args) == 2
                and not any(a.keyword or a.star for a in inner.args)):
            a, b = inner.args[0].value, inner.args[1].value
            for p, q in ((a, b), (b, a)):
                if isinstance(p, cst.Name) and p.value == acc and (r := _reduction(v.with_changes(
                        args=[v.args[0].with_changes(value=q), *v.args[1:]]), acc, code)):
                    return acc, *r
    return None


def _init_kind(t: Target, loop: cst.For, acc: str, sig: dict[str, Any]) -> tuple[str | None, str]:
    """('float' | 'int' | None, why) from the accumulator's last assignment before the loop: a literal, or a scalar
    kernel parameter whose recorded launch signature is i32 (``sig``: parameter -> Triton type)."""
    order = {id(n): i for i, n in enumerate(walk(t.kernel.node))}
    prior = [n for n in walk(t.kernel.node) if isinstance(n, cst.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0].target, cst.Name) and n.targets[0].target.value == acc
             and order[id(n)] < order[id(loop)]]
    if not prior:
        return None, f"`{acc}` has no value before the loop"
    text = t.tree.code(prior[-1].value).replace(" ", "").replace("'", '"')
    if text in ('float("-inf")', 'float("inf")', '-float("inf")', 'float("+inf")'):
        return "float", ""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = None
    if isinstance(value, float):
        return "float", ""
    if isinstance(value, int) and not isinstance(value, bool):
        return "int", ""
    if text in t.kernel.params and sig.get(text) in ("i32", "fp32"):
        return ("int" if sig[text] == "i32" else "float"), ""
    why = f"recorded as {sig[text]}" if text in sig else "no launch recorded"
    return None, f"`{acc}` starts as `{text}`, not a literal or an i32/fp32 parameter ({why}): its dtype is unknown"


def loop_reductions(t: Target) -> tuple[list[_Site], list[str]]:
    """The accumulating reductions inside loops of ``t``'s kernel that per-lane accumulators can replace, and the
    reasons any other loop reduction cannot be replaced."""
    code, k = t.tree.code, t.kernel.node
    sites: list[_Site] = []
    bad: list[str] = []
    static = set(t.kernel.constexprs) | module_names(t.tree.module)
    for loop in (n for n in walk(k) if isinstance(n, cst.For)):
        body = loop_statements(list(loop.body.body), static)
        for s in body:
            m = _match(s, code)
            if m is None:
                if any(isinstance(n, cst.Call) and call_name(n) in _COMBINE for n in walk(s)) and isinstance(
                    s, cst.SimpleStatementLine
                ):
                    bad.append(
                        f"`{code(s)}`: not `s += tl.sum(E)` / `s = tl.maximum(s, tl.max(E))` / `tl.minimum` form"
                    )
                continue
            acc, fn, value = m
            assert isinstance(s, cst.SimpleStatementLine)  # _match matches statement lines only
            others = [n for o in body if o is not s for n in walk(o) if isinstance(n, cst.Name) and n.value == acc]
            if others:
                bad.append(
                    f"`{acc}` is also read or written elsewhere in its loop (a running value other code depends on)"
                )
                continue
            sites.append(_Site(s, loop, acc, fn, value))
    if not sites and not bad:
        bad.append("no tl.sum / tl.max / tl.min accumulates into a scalar inside a for loop")
    return sites, bad


def _block(t: Target) -> tuple[str | None, list[str]]:
    code = t.tree.code
    ranges = [n for n in walk(t.kernel.node) if isinstance(n, cst.Call) and call_name(n) == "tl.arange"]
    ends = sorted({code(end) for r in ranges if (end := arg_value(r, "end", 1)) is not None})
    if any(code(start) != "0" for r in ranges if (start := arg_value(r, "start", 0)) is not None):
        return None, ["a block range does not start at 0"]
    if len(ends) != 1:
        return None, [
            f"block ranges of {len(ends)} sizes ({', '.join(ends) or 'none'}): the accumulator's shape is ambiguous"
        ]
    if any(isinstance(n, cst.Subscript) and "None" in code(n) for n in walk(t.kernel.node)):
        return None, ["2-D tiles ([:, None]): only one-dimensional chunks are accumulated per lane"]
    return ends[0], []


class LaneAccumulators:
    """Block reductions inside a column loop -> per-lane accumulators, reduced once after the loop."""

    kind = "lane_accumulators"
    card = "looped-row-reduction"

    def _plan(self, t: Target, ctx: RecipeContext) -> tuple[list[tuple[_Site, str]], str | None, list[str]]:
        bad: list[str] = []
        if t.facts.dots:
            bad.append("the kernel has tl.dot (dot accumulators are already per-lane tiles)")
        block, why = _block(t)
        bad += why
        sites, refused = loop_reductions(t)
        typed = []
        sig = launch_record(t, ctx).get("signature") or {}
        for s in sites:
            kind, why_init = _init_kind(t, s.loop, s.acc, sig)
            if kind is None:
                refused.append(why_init)
            else:
                typed.append((s, kind))
        if not typed:
            bad += refused or ["no loop reduction has a literal initial value"]
        lanes = (launch_record(t, ctx).get("constexprs") or {}).get(block or "")
        if isinstance(lanes, int) and lanes * max(1, len(typed)) > _MAX_LANES:
            bad.append(f"{len(typed)} accumulator(s) of {lanes} lanes exceed {_MAX_LANES} per program (registers)")
        return typed, block, bad

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        return self._plan(t, ctx)[2]

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        typed, block, _ = self._plan(t, ctx)
        tree, done = t.tree, []
        for s, kind in typed:
            lanes = fresh(t, f"{s.acc}_lanes")
            init = (_FLOAT_INIT if kind == "float" else _INT_INIT)[s.fn]
            dtype = "tl.float32" if kind == "float" else "tl.int32"
            start = (
                f"tl.zeros([{block}], dtype={dtype})"
                if s.fn == "tl.sum"
                else f"tl.full([{block}], {init}, dtype={dtype})"
            )
            e = tree.code(s.value)
            combine = _COMBINE[s.fn]
            step = f"{lanes} += {e}" if combine is None else f"{lanes} = {combine}({lanes}, {e})"
            final = (f"{s.acc} += tl.sum({lanes}, axis=0)" if combine is None
                     else f"{s.acc} = {combine}({s.acc}, {s.fn}({lanes}, axis=0))")
            tree.insert_before(s.loop, f"{lanes} = {start}\n")
            new = cst.ensure_type(cst.parse_statement(step + "\n"), cst.SimpleStatementLine)
            tree.replace(s.stmt.body[0], new.body[0])
            tree.insert_after(s.loop, f"{final}\n")
            done.append(f"{s.acc} ({s.fn})")
        return (f"{t.kernel.name}: {len(done)} per-chunk block reduction(s) -> per-lane [{block}] accumulators reduced "
                f"once after the loop: {', '.join(done)}")
