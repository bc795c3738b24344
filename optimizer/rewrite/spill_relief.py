"""``chunked_row_reduction``: an oversized whole-row block -> a loop over chunks that fit
(card ``register-spill-relief``).

Domain: L3 reported ``register_spill``, or the decided cause is ``register_spills`` (``RecipeContext.evidence``;
never applied without one), and the kernel is
straight-line code that loads one whole row as a single block (``cols = tl.arange(0, BLOCK)``, loads masked by
``cols < n``), computes elementwise, and reduces the block only through ``tl.sum`` / ``tl.max`` / ``tl.min`` to
scalars; no block value is stored or used after the reductions. Before::

    cols = tl.arange(0, BLOCK)                      # BLOCK = next_power_of_2(n_cols): 32768 lanes spill
    x = tl.load(X + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(OUT + row, tl.sqrt(tl.sum(x * x, axis=0)))

After::

    acc_0 = tl.zeros([CHUNK], dtype=tl.float32)
    for chunk_start in range(0, n_cols, CHUNK):
        cols = chunk_start + tl.arange(0, CHUNK)
        x = tl.load(X + row * stride + cols, mask=cols < n_cols, other=0.0)
        acc_0 += x * x
    tl.store(OUT + row, tl.sqrt(tl.sum(acc_0, axis=0)))

Masked lanes already contribute the reduction's neutral element in the original (its BLOCK exceeds n by a
varying amount), so they do in every chunk. A reduction may read another one's result only as a log-sum-exp pair
(``m = tl.max(x)`` then ``tl.sum(exp(x - m))``, ``lse_pairs``): a running max per lane and its partial sums
rescaled online; any other such read is a second pass, refused here (``chunked_row_passes`` takes it). A
reduction nested in another's input is refused too (its per-chunk value would stand for the row's). ``CHUNK`` is a
new constexpr (variants 1024, 2048, 4096, 512).
"""

from __future__ import annotations

import textwrap
from typing import Any

import libcst as cst

from optimizer.kernel.flow import names as _names
from optimizer.kernel.flow import rank_of
from optimizer.rewrite.common import call_arg, fresh, launch_arg
from optimizer.rewrite.context import RecipeContext, RewriteResult
from optimizer.rewrite.engine import Target, parse_tree, targets
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.lse_pairs import LsePair, find_pairs
from optimizer.rewrite.tree import arg_value, body_of, call_name, walk

__all__ = ["ChunkedRowReduction", "apply_register_spill_relief"]

_NEUTRAL = {"tl.sum": ("tl.zeros([{c}], dtype=tl.float32)", "{a} += {e}"),
            "tl.max": ("tl.full([{c}], float(\"-inf\"), dtype=tl.float32)", "{a} = tl.maximum({a}, {e})"),
            "tl.min": ("tl.full([{c}], float(\"inf\"), dtype=tl.float32)", "{a} = tl.minimum({a}, {e})")}


def _plan(t: Target) -> tuple[dict[str, Any] | None, list[str]]:
    k, code = t.kernel.node, t.tree.code
    top = body_of(k)
    bad = [f"a {type(s).__name__.lower()} statement (the kernel must be straight-line code)"
           for s in top if not isinstance(s, cst.SimpleStatementLine) and not _constexpr_if(s, t.kernel.constexprs)]
    if bad:
        return None, bad
    if any("None" in code(n) for n in walk(k.body) if isinstance(n, cst.Subscript)):
        bad.append("2-D tiles ([:, None]): only one-dimensional row blocks are chunked")
    cols_stmt = next((s for s in top if isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Assign)
                      and _block_range(s.body[0].value) is not None), None)
    if cols_stmt is None:
        return None, [*bad, "no top-level `cols = tl.arange(0, BLOCK)` (or `cols = pid * BLOCK + tl.arange(0, BLOCK)`)"]
    cols_assign = cols_stmt.body[0]
    block_range = _block_range(cols_assign.value) if isinstance(cols_assign, cst.Assign) else None
    assert isinstance(cols_assign, cst.Assign) and block_range is not None  # what cols_stmt was found by
    ar, offset = block_range
    if offset is not None and any(call_name(n) == "tl.arange" or isinstance(n, cst.Subscript) for n in walk(offset)):
        bad.append(f"the block range's offset `{code(offset)}` is not a scalar")
    start, block = arg_value(ar, "start", 0), arg_value(ar, "end", 1)
    cols = code(cols_assign.targets[0].target)
    if (
        start is None
        or code(start) != "0"
        or not isinstance(block, cst.Name)
        or block.value not in t.kernel.constexprs
    ):
        bad.append("the block range is not tl.arange(0, BLOCK) with a constexpr BLOCK")
    bounds = {code(m.comparisons[0].comparator) for m in walk(k.body)
              if isinstance(m, cst.Comparison) and len(m.comparisons) == 1 and code(m.left) == cols
              and isinstance(m.comparisons[0].operator, cst.LessThan)}
    if len(bounds) != 1:
        bad.append(f"the row block is not bounded by exactly one `{cols} < n` comparison")
    i0 = top.index(cols_stmt)
    loop: list[cst.BaseStatement] = []
    after: list[cst.BaseStatement] = []
    reductions = []
    for s in top[i0 + 1:]:
        calls = [n for n in walk(s) if isinstance(n, cst.Call) and call_name(n) in _NEUTRAL]
        unread = [n for n in calls if arg_value(n, "input", 0) is None]
        bad += [f"`{code(n)}` passes its input through *args (the per-lane accumulator reads it)" for n in unread]
        red = [n for n in calls if (x := arg_value(n, "input", 0)) is not None and rank_of(k, x) >= 1]
        if isinstance(s, cst.If):  # an `if` over constexprs (compiled away): elementwise work of the loop, or after it
            if red:
                bad.append(f"`if {code(s.test)}:` holds a reduction (only top-level reductions are split per lane)")
            (after if after else loop).append(s)
            continue
        other_red = [
            n
            for n in walk(s)
            if isinstance(n, cst.Call)
            and call_name(n)
            in (
                "tl.argmax",
                "tl.argmin",
                "tl.reduce",
                "tl.cumsum",
                "tl.cumprod",
                "tl.associative_scan",
                "tl.sort",
                "tl.xor_sum",
            )
        ]
        if other_red:
            bad.append(f"{call_name(other_red[0])} is not a sum/max/min that per-lane accumulators can split")
        if red:
            reductions += red
            after.append(s)
        elif after or (isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Expr)):
            # (s is a statement line here: compound statements were refused, constexpr ifs taken above)
            after.append(s)
        else:
            loop.append(s)
    if not reductions:
        bad.append("no tl.sum / tl.max / tl.min reduces the row block")
    loop_names = {n for s in loop for a in walk(s) if isinstance(a, cst.Assign)
                  for tg in a.targets for n in _names(tg.target)} | {cols}
    for s in after:
        inner = {id(m) for r in reductions for m in walk(r)}
        outside = {n.value for n in walk(s) if isinstance(n, cst.Name) and id(n) not in inner}
        if outside & loop_names:
            bad.append(f"`{code(s)}` uses the row block outside a reduction (a stored or kept block cannot be chunked)")
    after_names = {n for s in after for a in walk(s) if isinstance(a, cst.Assign) for tg in a.targets
                   for n in _names(tg.target)}
    pairs = find_pairs(t, reductions, after, loop_names, after_names)
    paired = {id(x.call): p.m for p in pairs for x in p.sums}
    red_ids = {id(r) for r in reductions}
    for r in reductions:
        nested = [n for n in walk(arg_value(r, "input", 0) or r) if id(n) in red_ids and n is not r]
        if nested:
            bad.append(f"{call_name(r)} reduces `{code(nested[0])}` inside its input (a per-chunk value there would "
                       "stand for the row's)")
        used = {n.value for n in walk(arg_value(r, "input", 0) or r) if isinstance(n, cst.Name)}
        if id(r) in paired:
            used -= {paired[id(r)]}  # the log-sum-exp pair: carried by online accumulators
        if used & after_names:
            bad.append(
                f"{call_name(r)}({code(arg_value(r, 'input', 0) or r)}) reads {', '.join(sorted(used & after_names))}, "
                "a result of the reductions (a second pass: per-lane accumulators cannot split it)"
            )
        axis = arg_value(r, "axis", 1)
        if axis is not None and code(axis) not in ("0", "None"):
            bad.append(f"{call_name(r)} over axis {code(axis)}")
    return (
        {
            "cols": cols_stmt,
            "block": block.value if isinstance(block, cst.Name) else "?",
            "bound": next(iter(bounds), "?"),
            "loop": loop,
            "reductions": reductions,
            "colsname": cols,
            "offset": offset,
            "pairs": pairs,
        }
        if not bad
        else None
    ), bad


def _block_range(value: cst.BaseExpression) -> tuple[cst.Call, cst.BaseExpression | None] | None:
    """``tl.arange(0, B)`` -> (the arange, None); ``X + tl.arange(0, B)`` (a program's piece of the row) -> (the
    arange, X); else None."""
    if isinstance(value, cst.Call) and call_name(value) == "tl.arange":
        return value, None
    if (
        isinstance(value, cst.BinaryOperation)
        and isinstance(value.operator, cst.Add)
        and isinstance(value.right, cst.Call)
        and call_name(value.right) == "tl.arange"
    ):
        return value.right, value.left
    return None


def _constexpr_if(s: cst.CSTNode, constexprs: list[str]) -> bool:
    """An ``if`` whose test reads constexprs only (compiled away) and whose branches are plain assignments."""
    if not isinstance(s, cst.If):
        return False
    test = {n.value for n in walk(s.test) if isinstance(n, cst.Name)} - {"not", "and", "or", "None", "True", "False"}
    branches = [s.body] + ([s.orelse.body] if isinstance(s.orelse, cst.Else) else [])
    plain = all(
        isinstance(st, cst.SimpleStatementLine) and all(isinstance(x, (cst.Assign, cst.AugAssign)) for x in st.body)
        for b in branches
        for st in b.body
    )
    return bool(test) and test <= set(constexprs) and plain and not isinstance(s.orelse, cst.If)


def _online(t: Target, p: LsePair, chunk: str, inits: list[str], updates: list[str]) -> None:
    """A log-sum-exp pair's accumulators (``lse_pairs``): a running max per lane and, per sum of its exp, a partial
    sum rescaled whenever that max grows; the reductions after the loop merge the lanes at the row max."""
    acc_m = fresh(t, f"acc_{len(inits)}")
    new, ref = fresh(t, f"{acc_m}_new"), fresh(t, f"{acc_m}_ref")
    inits.append(f"{acc_m} = {_NEUTRAL['tl.max'][0].format(c=chunk)}\n")
    updates += [f"{new} = tl.maximum({acc_m}, {p.x})\n", f"{ref} = tl.where({new} == float(\"-inf\"), 0.0, {new})\n"]
    t.tree.replace(p.max_call, f"tl.max({acc_m}, axis=0)")
    for x in p.sums:
        acc_s = fresh(t, f"acc_{len(inits)}")

        def e(d: str, c: str | None = x.scale, f: str = x.exp) -> str:
            return f"{f}(({d}) * ({c}))" if c is not None else f"{f}({d})"

        inits.append(f"{acc_s} = {_NEUTRAL['tl.sum'][0].format(c=chunk)}\n")
        term = e(f"{x.exp_input} - {ref}")
        term = f"tl.where({x.mask}, {term}, 0.0)" if x.mask is not None else term
        updates.append(f"{acc_s} = {acc_s} * {e(f'{acc_m} - {ref}')} + {term}\n")
        t.tree.replace(x.call, f"tl.sum({acc_s} * {e(f'{acc_m} - {p.m}')}, axis=0)")
    updates.append(f"{acc_m} = {new}\n")


class ChunkedRowReduction:
    """A spilling whole-row block reduced to scalars -> a loop over CHUNK-wide pieces with per-lane accumulators."""

    kind = "chunked_row_reduction"
    card = "register-spill-relief"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        out = (
            []
            if {"ir:register_spill", "cause:register_spills"} & set(ctx.evidence)
            else ["no register_spill evidence from L3 (never chunk a kernel that does not spill)"]
        )
        if len(t.sites) != 1:
            out.append(f"launched from {len(t.sites)} places")
            return out
        plan, bad = _plan(t)
        if plan is not None and plan["offset"] is not None and t.sites[0].arg_for(t.kernel, plan["block"]) is None:
            bad = [f"the launch does not pass {plan['block']} (each program's chunks must stay within its piece)"]
        return out + bad

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"CHUNK": int(v)} for v in (params.get("values") or [1024, 2048, 4096, 512])]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        plan, _ = _plan(t)
        assert plan is not None
        tree, k = t.tree, t.kernel
        chunk = fresh(t, "CHUNK") if "CHUNK" in k.params else "CHUNK"
        start = fresh(t, "chunk_start")
        inits: list[str] = []
        updates: list[str] = []
        pairs: list[LsePair] = plan["pairs"]
        paired = {id(r) for p in pairs for r in [p.max_call, *(x.call for x in p.sums)]}
        for p in pairs:
            _online(t, p, chunk, inits, updates)
        for r in (r for r in plan["reductions"] if id(r) not in paired):
            acc = fresh(t, f"acc_{len(inits)}")
            init, upd = _NEUTRAL[call_name(r)]
            inits.append(f"{acc} = {init.format(c=chunk)}\n")
            updates.append(upd.format(a=acc, e=tree.code(call_arg(r, "input", 0))) + "\n")  # _plan: passed
            tree.replace(r, f"{call_name(r)}({acc}, axis=0)")
        body = "".join(textwrap.indent(tree.module.code_for_node(s), "    ") for s in plan["loop"])
        tree.remove(plan["cols"])
        # a program's piece of the row (`pid * B + tl.arange(0, B)`): the chunks walk that piece, the mask bounds it
        off = plan["offset"]
        stop, base = (plan["block"], f"{tree.code(off)} + ") if off is not None else (plan["bound"], "")
        tree.insert_before(plan["cols"], "".join(inits) + f"for {start} in range(0, {stop}, {chunk}):\n"
                           f"    {plan['colsname']} = {base}{start} + tl.arange(0, {chunk})\n"
                           + body
                           + "".join(f"    {u}" for u in updates))
        for s in plan["loop"]:
            tree.remove(s)
        tree.add_params(k.node, [f"{chunk}: tl.constexpr"])
        width = str(point["CHUNK"])
        if off is not None:  # a chunk never wider than the program's piece, or it would reach into the next one
            width = f"min({width}, {tree.code(launch_arg(t, plan['block']))})"  # preconditions: passed
        tree.add_keyword(t.sites[0].call, chunk, width)
        online = (f" ({', '.join(p.m for p in pairs)}: a running max with its sum(s) of exp rescaled online)"
                  if pairs else "")
        return (f"{k.name}: the {plan['block']}-wide row block (register spills) -> a loop over {point['CHUNK']}-wide "
                f"chunks with {len(inits)} per-lane accumulator(s){online}, reduced after the loop")


def apply_register_spill_relief(params: dict[str, Any], ctx: RecipeContext) -> RewriteResult:
    """The card's recipe: the chunk loop where its domain holds, else one chunk loop per pass (``chunked_passes``:
    dependent reductions, or the block written after them), else a launch search that never lowers num_warps.

    ``params``: ``values`` (CHUNK sizes) and ``search`` (``launch_params`` space, e.g. num_warps and BLOCK_SIZE).
    Without register_spill evidence only the launch search runs, as before this transform existed.
    """
    from optimizer.rewrite.registry import APPLIERS  # the registry holds this composite: imported on use

    try:
        res = APPLIERS["chunked_row_reduction"]({"values": params.get("values")}, ctx)
        return RewriteResult("register_spill_relief", res.source, res.diff, res.description, res.applied)
    except NotApplicable as exc:
        chunk_reason = str(exc)
    try:  # reductions in dependent passes, or the block written after them: one chunk loop per pass
        from optimizer.rewrite.chunked_passes import ChunkedRowPasses
        from optimizer.rewrite.engine import applier

        res = applier(ChunkedRowPasses())({}, ctx)
        return RewriteResult("register_spill_relief", res.source, res.diff, res.description, res.applied)
    except NotApplicable as exc:
        chunk_reason += f"; chunk passes: {exc}"
    search = {n: list(v) for n, v in (params.get("search") or {}).items()}
    if "num_warps" in search:
        tree = parse_tree(ctx)
        ts = targets(tree, ctx)
        meta = ts[0].launches[0].meta if ts and ts[0].launches else {}
        current = int(meta["num_warps"]) if meta.get("num_warps", "").isdigit() else 4
        search["num_warps"] = [w for w in search["num_warps"] if w >= current] or [current]  # never fewer warps
    if not search:
        raise NotApplicable(f"chunk loop: {chunk_reason}; no launch search given")
    try:
        res = APPLIERS["launch_params"]({"search": search}, ctx)
    except NotApplicable as exc:
        raise NotApplicable(f"chunk loop: {chunk_reason}; launch search: {exc}") from None
    return RewriteResult(  # ``via`` says that a launch knob, not a structural transform, made this point
        "register_spill_relief",
        res.source,
        res.diff,
        f"{res.description} (chunk loop not applicable: {chunk_reason[:200]})",
        {**res.applied, "via": "launch_params"},
    )
