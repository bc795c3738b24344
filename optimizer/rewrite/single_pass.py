"""``single_pass_fusion``: several passes over the same data -> one pass (card ``single-pass-fusion``).

Two fusions, tried in order; a refusal lists the reason of each:

1. **Welford** (this module): a mean pass followed by a squared-deviation pass over the same chunks::

       acc = tl.zeros([BLOCK], dtype=tl.float32)
       for off in range(0, N, BLOCK):
           cols = off + tl.arange(0, BLOCK)
           x = tl.load(X + cols, mask=cols < N, other=0.0)
           acc += x
       mean = tl.sum(acc, axis=0) / N
       acc2 = tl.zeros([BLOCK], dtype=tl.float32)
       for off in range(0, N, BLOCK):
           cols = off + tl.arange(0, BLOCK)
           x = tl.load(X + cols, mask=cols < N, other=0.0)
           d = tl.where(cols < N, x - mean, 0.0)
           acc2 += d * d

   becomes one pass in which every lane keeps a Welford state (count, mean, M2) updated per chunk; after the loop
   the lanes merge with Chan's formula written as sums (``acc = count * mean_lane`` keeps ``tl.sum(acc)`` the row
   sum; ``acc2 = M2_lane + count * (mean_lane - mean)^2`` makes ``tl.sum(acc2)`` the row's M2), so the statements
   after the loops are unchanged and the row is read once for its statistics. Preconditions: both loops have the
   same header and identical statements up to the load; the first ends in ``acc += x`` (or ``acc += <load expr>``
   when the second loop names that expression, ``x = <load expr>``); between them only
   ``mean = ... tl.sum(acc ...) ...`` and ``acc2``'s initialisation; the second ends in ``acc2 += d * d`` with
   ``d = tl.where(mask, x - mean, 0.0)`` or ``d = x - mean`` (then the load must be unmasked, or masked lanes
   would add mean^2); ``acc`` read nowhere else.
2. **Online max/sum** (``optimizer.rewrite.online_lse``): a max pass followed by a sum-of-exp pass (softmax,
   logsumexp, cross-entropy) -> one pass with a running max per lane and a rescaled sum.

Keeping a whole row in registers when BLOCK covers the row is the card ``fused-softmax-row-in-registers``.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.kernel.flow import names as _names
from optimizer.rewrite.common import fresh
from optimizer.rewrite.context import RecipeContext, RewriteResult
from optimizer.rewrite.engine import Target, applier
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.online_lse import OnlineLogsumexp
from optimizer.rewrite.tree import arg_value, body_of, call_name, walk

__all__ = ["Welford", "apply_single_pass_fusion"]


def _simple(s: cst.CSTNode) -> cst.BaseSmallStatement | None:
    return s.body[0] if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 else None


def _accumulate(s: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    """``a += e`` or ``a = a + e`` -> (a, e)."""
    x = _simple(s)
    if isinstance(x, cst.AugAssign) and isinstance(x.operator, cst.AddAssign) and isinstance(x.target, cst.Name):
        return x.target.value, x.value
    if (isinstance(x, cst.Assign) and len(x.targets) == 1 and isinstance(x.targets[0].target, cst.Name)
            and isinstance(x.value, cst.BinaryOperation) and isinstance(x.value.operator, cst.Add)
            and isinstance(x.value.left, cst.Name) and x.value.left.value == x.targets[0].target.value):
        return x.value.left.value, x.value.right
    return None


def _assigned(s: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    x = _simple(s)
    if isinstance(x, cst.Assign) and len(x.targets) == 1 and isinstance(x.targets[0].target, cst.Name):
        return x.targets[0].target.value, x.value
    return None


def _is_deviation(t: Target, e: cst.CSTNode, x: str, mean: str) -> bool:
    return (isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Subtract)
            and t.tree.code(e.left) == x and t.tree.code(e.right) == mean)


def _match(t: Target) -> dict[str, Any]:
    """The two-pass mean/variance pattern of the target kernel, or NotApplicable with the reason."""
    top = body_of(t.kernel.node)
    code = t.tree.code
    reason = "no loop ending in `acc += x` followed by a squared-deviation loop over the same chunks"
    for i, loop1 in enumerate(top):
        if not isinstance(loop1, cst.For) or not loop1.body.body:
            continue
        acc_x = _accumulate(loop1.body.body[-1])
        if acc_x is None:
            continue
        acc, inline = acc_x[0], None
        prefix = list(loop1.body.body[:-1])
        j = next((k for k in range(i + 1, len(top)) if isinstance(top[k], cst.For)), None)
        loop2 = cst.ensure_type(top[j], cst.For) if j is not None else None  # j: the next loop
        body2 = body_of(loop2) if loop2 is not None else []
        if isinstance(acc_x[1], cst.Name):
            x = acc_x[1].value
        else:  # `acc += tl.load(...)...`: the second loop names the same expression (`x = tl.load(...)...`)
            if not any(isinstance(n, cst.Call) and call_name(n) == "tl.load" for n in walk(acc_x[1])):
                continue  # not a sum of loaded values (e.g. the squared-deviation loop itself)
            named = _assigned(body2[len(prefix)]) if len(body2) > len(prefix) else None
            if named is None or code(named[1]) != code(acc_x[1]):
                reason = f"{acc} accumulates an expression that the second loop does not name the same way"
                continue
            x, inline = named[0], code(acc_x[1])
        xdef = (x, acc_x[1]) if inline else next((a for s in prefix if (a := _assigned(s)) and a[0] == x), None)
        load = (
            next((n for n in walk(xdef[1]) if isinstance(n, cst.Call) and call_name(n) == "tl.load"), None)
            if xdef
            else None
        )
        if load is None:
            reason = f"{x} (accumulated into {acc}) is not loaded in the first loop"
            continue
        if loop2 is None or j is None:
            reason = f"the sum loop into {acc} is not followed by a second loop"
            continue
        between = top[i + 1:j]
        if (code(loop1.target), code(loop1.iter)) != (code(loop2.target), code(loop2.iter)):
            reason = "the two loops iterate differently"
            continue
        if [code(s) for s in body2[:len(prefix)]] != [code(s) for s in prefix]:
            reason = "the second loop does not load the chunk the same way as the first"
            continue
        if inline:
            prefix = [*prefix, body2[len(prefix)]]
        mean_def = next(((s, a[0]) for s in between if (a := _assigned(s)) and any(
            isinstance(n, cst.Call) and call_name(n) == "tl.sum" and (summed := arg_value(n, "input", 0)) is not None
            and code(summed) == acc
            for n in walk(a[1]))), None)
        if mean_def is None:
            reason = f"no `mean = tl.sum({acc}, ...) / n` between the loops"
            continue
        mean_stmt, mean = mean_def
        tail = body2[len(prefix):]
        last = _accumulate(tail[-1]) if tail else None
        if last is None:
            reason = "the second loop does not end in an accumulation"
            continue
        acc2, term = last
        dev: cst.CSTNode | None = None
        if (
            isinstance(term, cst.BinaryOperation)
            and isinstance(term.operator, cst.Multiply)
            and code(term.left) == code(term.right)
        ):
            dev = term.left
        masked_where = False
        if isinstance(dev, cst.Name) and len(tail) == 2 and (a := _assigned(tail[0])) and a[0] == dev.value:
            dev = a[1]
            if isinstance(dev, cst.Call) and call_name(dev) == "tl.where" and len(dev.args) == 3:
                masked_where = code(dev.args[2].value) in ("0", "0.0", "0.")
                dev = dev.args[1].value if masked_where else None
        elif len(tail) != 1:
            dev = None
        if dev is None or not _is_deviation(t, dev, x, mean):
            reason = f"the second loop does not accumulate (x - {mean})^2 into {acc2}"
            continue
        load_mask = arg_value(load, "mask", 1)
        if load_mask is not None and not masked_where:
            reason = (
                f"the load is masked but ({x} - {mean})^2 is not: masked lanes add {mean}^2 (no Welford equivalent)"
            )
            continue
        init_def = next(((s, a[1]) for s in top[:i] if (a := _assigned(s)) and a[0] == acc
                         and isinstance(a[1], cst.Call) and call_name(a[1]) in ("tl.zeros", "tl.full")), None)
        if init_def is None:
            reason = f"{acc} is not initialised with tl.zeros before the first loop"
            continue
        init, zeros = init_def
        others = [s for s in between if s is not mean_stmt and not ((a := _assigned(s)) and a[0] == acc2)]
        later = (top[j + 1:] if acc2 != acc else []) + others  # one name reused for both sums: later reads are acc2's
        if others or any(acc in _names(s) for s in later) or mean in {n for s in prefix for n in _names(s)}:
            reason = f"{acc} or {acc2} is used beyond the statistics, or other statements sit between the loops"
            continue
        return {"loop1": loop1, "loop2": loop2, "acc": acc, "acc2": acc2, "x": x, "mean": mean, "init": init,
                "zeros": zeros, "mask": code(load_mask) if load_mask is not None else None, "inline": inline}
    raise NotApplicable(reason)


class Welford:
    """Mean pass + squared-deviation pass -> one pass with per-lane Welford state merged by Chan's formula."""

    kind = "single_pass_fusion"
    card = "single-pass-fusion"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        try:
            _match(t)
        except NotApplicable as exc:
            return [str(exc)]
        return []

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"fusion": "welford"}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        m = _match(t)
        tree = t.tree
        cnt, mw, m2, ok, dl = (
            fresh(t, n) for n in ("welford_count", "welford_mean", "welford_m2", "welford_ok", "welford_delta")
        )
        zeros = tree.code(m["zeros"])
        x, mean = m["x"], m["mean"]
        tree.insert_after(m["init"], f"{cnt} = {zeros}\n{mw} = {zeros}\n{m2} = {zeros}\n")
        ok_expr = f"({m['mask']}).to(tl.float32)" if m["mask"] else "1.0"
        tree.remove(m["loop1"].body.body[-1])
        named = f"{x} = {m['inline']}\n" if m["inline"] else ""  # `acc += tl.load(...)` gets its value a name
        tree.insert_before(m["loop1"].body.body[-1],
                           f"{named}{ok} = {ok_expr}\n{cnt} += {ok}\n{dl} = {x} - {mw}\n"
                           f"{mw} += {ok} * {dl} / tl.maximum({cnt}, 1.0)\n{m2} += {ok} * {dl} * ({x} - {mw})\n")
        tree.insert_after(m["loop1"], f"{m['acc']} = {cnt} * {mw}  # per-lane sums: tl.sum gives the row sum\n")
        tree.remove(m["loop2"])
        tree.insert_before(
            m["loop2"], f"{m['acc2']} = {m2} + {cnt} * ({mw} - {mean}) * ({mw} - {mean})  # Chan merge\n"
        )
        return (f"{t.kernel.name}: mean pass and squared-deviation pass fused into one Welford pass ({cnt}, {mw}, {m2} "
                f"per lane, merged with Chan's formula); the statistics read the row once instead of twice")


_WELFORD = applier(Welford())
_ONLINE = applier(OnlineLogsumexp())


def apply_single_pass_fusion(params: dict[str, Any], ctx: RecipeContext) -> RewriteResult:
    """Welford for mean/variance, else the online max/sum of ``online_logsumexp``; refusals name both reasons."""
    reasons = []
    for name, fn in (("welford", _WELFORD), ("online max/sum", _ONLINE)):
        try:
            res = fn(params, ctx)
        except NotApplicable as exc:
            reasons.append(f"{name}: {exc}")
            continue
        return RewriteResult(
            "single_pass_fusion", res.source, res.diff, res.description, {**res.applied, "fusion": name}
        )
    raise NotApplicable("; ".join(reasons))
