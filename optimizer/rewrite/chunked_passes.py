"""``chunked_row_passes``: a spilling whole-row block that is reduced, then written -> chunk loops, one per pass
(card ``register-spill-relief``, where ``chunked_row_reduction`` cannot keep one pass).

A row kernel that loads its whole row as one block (``BLOCK = next_power_of_2(n)``: 131072 lanes at a 128k
vocabulary, 256 fp32 values a thread over 16 warps) spills. When the block is only reduced to scalars, per-lane
accumulators keep one pass (``chunked_row_reduction``). When a reduction reads the result of an earlier one (a max,
then a sum of ``exp(x - max)``) or the block is written after its reductions (a softmax, a cross-entropy writing
its log-probabilities), one pass cannot hold it; this transform makes the passes explicit, each a loop over
``CHUNK``-wide pieces of the row that recomputes what it needs from the loads::

    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * n + cols, mask=cols < n, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, 0)
    tl.store(Y + row * n + cols, tl.exp(x) / tl.sum(tl.exp(x), 0), mask=cols < n)

becomes a copy of the kernel, ``<name>_chunked``::

    acc0 = tl.full([CHUNK], float("-inf"), tl.float32)
    for chunk_start in range(0, n, CHUNK):
        cols = chunk_start + tl.arange(0, CHUNK)
        x_c = tl.load(X + row * n + cols, mask=cols < n, other=-float("inf")).to(tl.float32)
        acc0 = tl.maximum(acc0, tl.where(cols < n, x_c, float("-inf")))
    red0 = tl.max(acc0, axis=0)
    ...  # a sum pass reading red0, then the write pass

launched by the host when the row is longer than ``LIMIT`` (the original kernel below it, so rows that fit keep
their one load)::

    if n_cols > 32768:
        k_chunked[grid](x, y, n_cols, CHUNK=4096)
    else:
        k[grid](x, y, n_cols)

Each reduction (``tl.sum`` / ``tl.max`` / ``tl.min`` of the block to a scalar, innermost first) gets a pass with a
per-lane fp32 accumulator (lanes past ``n`` contribute the neutral element); block statements with side effects
(stores) run in the next pass, or a last one; scalar statements keep their place between the passes. Every pass
re-reads the row (from L2 for the rows in flight), trading bandwidth for registers: the recipe is for the spilling
kernel, and the host keeps shorter rows on the original.

Domain: L3 reported ``register_spill`` or the decided cause is ``register_spills`` (never applied without one); the
kernel has one top-level ``cols = tl.arange(0, BLOCK)`` (BLOCK a constexpr, no offset: a program owns its row)
bounded by exactly one ``cols < n`` (``n`` a parameter the launch passes); block values are element-wise in the lane
(no 2-D tiles, subscripts, second ``tl.arange``, dots, scans, sorts, reshapes, atomics, other reductions or
reductions over another axis); every block load and store is masked; block statements are single assignments to a
name (``n op= v`` taken as ``n = n op (v)``) or expression statements; no scalar statement rebinds a name a block
statement reads; at least one reduction; one launch site that is a statement of its own, passing ``n`` by keyword or
at a position before any ``*args`` (the host edit only reads ``n`` and appends ``CHUNK=`` by keyword, so ``*args`` /
``**kwargs`` pass through unchanged; a ``*args`` long enough to reach ``CHUNK``'s slot fails loudly as a duplicate
argument). Statements before ``cols`` may be compound (they run once, before the passes: an early return on a
per-row flag); after it, the only compound statement is an ``if`` / ``elif`` chain on compile-time values
(constexprs, globals) whose arms assign or augment names, taken as ``n = (v) if (test) else n`` per assignment so
every pass recomputes the arm the compiler keeps (``chunked_ifs``). Refused otherwise, with each reason.

Points: ``LIMIT`` 32768 with ``CHUNK`` 4096, 2048, 8192, then ``LIMIT`` 16384 with ``CHUNK`` 4096
(``{"values": [CHUNK...], "limits": [LIMIT...]}`` gives their product).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from optimizer.kernel.derived import module_names
from optimizer.kernel.flow import var_names
from optimizer.rewrite.chunked_ifs import compile_time_branches, plain_update
from optimizer.rewrite.common import fresh, launch_arg, launch_statement
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import arg_value, body_of, call_name, skip_ids, walk

__all__ = ["ChunkedRowPasses"]

#: reduction -> (accumulator init, per-lane update, the masked lanes' neutral value)
_REDUCE = {"tl.sum": ("tl.zeros([{c}], dtype=tl.float32)", "{a} + {e}", "0.0"),
           "tl.max": ('tl.full([{c}], float("-inf"), tl.float32)', "tl.maximum({a}, {e})", 'float("-inf")'),
           "tl.min": ('tl.full([{c}], float("inf"), tl.float32)', "tl.minimum({a}, {e})", 'float("inf")')}
#: calls that mix lanes or write through a block other than a masked store: outside the domain
_LANE_MIXING = frozenset({
    "tl.dot", "tl.reshape", "tl.view", "tl.trans", "tl.permute", "tl.sort", "tl.flip", "tl.cumsum", "tl.cumprod",
    "tl.associative_scan", "tl.reduce", "tl.argmax", "tl.argmin", "tl.gather", "tl.histogram", "tl.join", "tl.split",
    "tl.interleave", "tl.broadcast_to", "tl.expand_dims", "tl.xor_sum", "tl.arange", "tl.atomic_add", "tl.atomic_max",
    "tl.atomic_min", "tl.atomic_xchg", "tl.atomic_cas", "tl.atomic_and", "tl.atomic_or", "tl.atomic_xor",
    "tl.make_block_ptr", "tl.advance", "tl.make_tensor_descriptor", "tl.cat"})
_POINTS = [(32768, 4096), (32768, 2048), (32768, 8192), (16384, 4096)]


@dataclass
class _Stmt:
    node: cst.SimpleStatementLine
    block: bool  # reads the row block outside a reduction (runs inside the passes)
    target: str | None  # the assigned name (None: an expression statement)
    reductions: list[cst.Call] = field(default_factory=list)  # innermost first
    effect: bool = False  # an expression statement (a store): runs once


@dataclass
class _Plan:
    cols: cst.SimpleStatementLine
    colsname: str
    bound: str
    stmts: list[_Stmt]


def _reductions(node: cst.CSTNode, blk: set[str], skip: set[int]) -> list[cst.Call]:
    """Calls reducing a block to a scalar inside ``node``, innermost first (post-order)."""
    out: list[cst.Call] = []

    def visit(n: cst.CSTNode) -> None:
        for child in n.children:
            visit(child)
        if isinstance(n, cst.Call) and call_name(n) in _REDUCE:
            arg = arg_value(n, "input", 0)
            if arg is not None and {x.value for x in walk(arg) if isinstance(x, cst.Name) and id(x) not in skip} & blk:
                out.append(n)

    visit(node)
    return out


def _outside(node: cst.CSTNode, reductions: list[cst.Call], skip: set[int]) -> set[str]:
    inner = {id(m) for r in reductions for m in walk(r)}
    return {n.value for n in walk(node) if isinstance(n, cst.Name) and id(n) not in inner and id(n) not in skip}


def _plan(t: Target) -> tuple[_Plan | None, list[str]]:
    k, code = t.kernel.node, t.tree.code
    top = body_of(k)
    cols_i = next((i for i, s in enumerate(top) if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
                   and isinstance(s.body[0], cst.Assign) and call_name(s.body[0].value) == "tl.arange"), None)
    if cols_i is None:
        return None, ["no top-level `cols = tl.arange(0, BLOCK)` (a program owning its whole row)"]
    # before the row block, any statement runs once, as in the original (an early return on a per-row flag); after
    # it, ifs on compile-time values become conditional assignments, other compound statements are refused
    static = set(t.kernel.constexprs) | module_names(t.tree.module)
    bad: list[str] = []
    cols_line = cst.ensure_type(top[cols_i], cst.SimpleStatementLine)  # what cols_i was found by
    body: list[cst.SimpleStatementLine] = []
    for s in top[cols_i + 1:]:
        picked = [plain_update(s)] if isinstance(s, cst.SimpleStatementLine) else (
            compile_time_branches(s, static) if isinstance(s, cst.If) else
            f"a {type(s).__name__.lower()} statement after the row block (only ifs on compile-time values are "
            "recomputed per pass)")
        if isinstance(picked, str):
            bad.append(picked)
        else:
            body += picked
    if bad:
        return None, bad
    a = cols_line.body[0]
    assert isinstance(a, cst.Assign)
    ar = a.value
    assert isinstance(ar, cst.Call)
    block = arg_value(ar, "end", 1)
    if (len(a.targets) != 1 or not isinstance(a.targets[0].target, cst.Name)
            or code(arg_value(ar, "start", 0) or ar) != "0" or not isinstance(block, cst.Name)
            or block.value not in t.kernel.constexprs):
        return None, ["the block range is not `cols = tl.arange(0, BLOCK)` with a constexpr BLOCK"]
    cols = a.targets[0].target.value
    bounds = {code(m.comparisons[0].comparator) for s in body for m in walk(s)
              if isinstance(m, cst.Comparison) and len(m.comparisons) == 1 and code(m.left) == cols
              and isinstance(m.comparisons[0].operator, cst.LessThan)}
    if len(bounds) != 1 or next(iter(bounds)) not in t.kernel.params:
        bad.append(f"the row block is not bounded by exactly one `{cols} < n` with n a kernel parameter")
    if any(cols in var_names(s) for s in top[:cols_i]):
        bad.append(f"`{cols}` is read before it is defined")
    blk = {cols}
    stmts: list[_Stmt] = []
    block_reads: set[str] = set()
    for s in body:
        if len(s.body) != 1:
            bad.append(f"`{code(s)}`: several statements on one line")
            continue
        small = s.body[0]
        skip = skip_ids(s)
        if any(isinstance(n, cst.Subscript) for n in walk(s)):
            bad.append(f"`{code(s)}` subscripts a value (only one-dimensional lane-wise blocks are chunked)")
        mixing = [call_name(n) for n in walk(s) if isinstance(n, cst.Call) and call_name(n) in _LANE_MIXING]
        if mixing:
            bad.append(f"`{code(s)}` calls {mixing[0]} (it mixes lanes or writes outside a masked store)")
        reds = _reductions(s, blk, skip)
        for r in reds:
            extra = [x for x in r.args if x.keyword is not None and x.keyword.value not in ("input", "axis")]
            axis = arg_value(r, "axis", 1)
            if extra or len([x for x in r.args if x.keyword is None]) > 2 or (
                    axis is not None and code(axis) not in ("0", "None", "-1")):
                bad.append(f"`{code(r)}` is not a plain reduction of the row to a scalar")
        read = small.value if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)) else small
        outside = _outside(read or small, reds, skip)  # an assignment's target is not read
        is_block = bool(outside & blk)
        scalar_reads = outside - blk  # names read as scalars (a block name read here is pass-local, renamed)
        methods = [n for n in walk(s) if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
                   and not call_name(n).startswith(("tl.", "triton.language."))
                   and n.func.attr.value in ("sum", "max", "min", "reshape", "broadcast_to", "permute", "trans")]
        if is_block and methods:
            bad.append(f"`{code(s)}` reduces or reshapes through a method call")
        if is_block:
            for n in walk(s):
                if isinstance(n, cst.Call) and call_name(n) in ("tl.load", "tl.store") and \
                        arg_value(n, "mask", 2 if call_name(n) == "tl.store" else 1) is None:
                    bad.append(f"`{code(n)}` is not masked (a chunk past the row must not touch memory)")
        target: str | None = None
        if isinstance(small, cst.Assign):
            if len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Name):
                bad.append(f"`{code(s)}` assigns several names")
                continue
            target = small.targets[0].target.value
            if is_block:
                blk.add(target)
            else:
                blk.discard(target)
                if target in block_reads:
                    bad.append(f"`{code(s)}` rebinds {target}, which a block statement reads (a later pass would "
                               "see the new value)")
        elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
            tname = small.target.value if isinstance(small.target, cst.Name) else None
            if is_block or tname in blk:
                bad.append(f"`{code(s)}` updates a block in place (only single assignments are recomputed)")
            elif tname in block_reads:
                bad.append(f"`{code(s)}` rebinds {tname}, which a block statement reads")
        elif not isinstance(small, cst.Expr):
            bad.append(f"`{code(s)}`: a {type(small).__name__} statement")
        if is_block:
            block_reads |= scalar_reads
        stmts.append(_Stmt(s, is_block, target, reds, effect=is_block and isinstance(small, cst.Expr)))
    if not any(st.reductions for st in stmts):
        bad.append("no tl.sum / tl.max / tl.min reduces the row block")
    return (_Plan(cols_line, cols, next(iter(bounds), "?"), stmts) if not bad else None), bad


class _Render(cst.CSTTransformer):
    """A statement's text inside a pass: reductions -> their scalars, block names -> their pass-local versions."""

    def __init__(self, reds: dict[int, str], rename: dict[str, str], skip: set[int]) -> None:
        self.reds, self.rename, self.skip = reds, rename, skip

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:  # noqa: N802
        return cst.Name(self.reds[id(original_node)]) if id(original_node) in self.reds else updated_node

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:  # noqa: N802
        if id(original_node) in self.skip or original_node.value not in self.rename:
            return updated_node
        return cst.Name(self.rename[original_node.value])


def _text(node: cst.CSTNode, reds: dict[int, str], rename: dict[str, str]) -> str:
    out = node.visit(_Render(reds, rename, skip_ids(node)))
    assert isinstance(out, cst.CSTNode)
    return cst.Module([]).code_for_node(out).strip()


def _chunked_body(t: Target, plan: _Plan, chunk: str) -> str:
    """The copy's body after the statements before ``cols``: the passes and the scalar statements between them."""
    used = {n.value for n in walk(t.tree.module) if isinstance(n, cst.Name)} | set(t.kernel.params)

    def new(base: str) -> str:
        name, i = base, 2
        while name in used:
            name, i = f"{base}{i}", i + 1
        used.add(name)
        return name

    start, cols, bound = new("chunk_start"), plan.colsname, plan.bound
    reds: dict[int, str] = {}  # reduction call -> its scalar
    defs: list[tuple[str, set[str], str]] = []  # (pass-local name, names it reads, its assignment text)
    current: dict[str, str] = {}  # block name -> its latest pass-local version
    pending: list[str] = []  # statements with effects waiting for a pass
    out: list[str] = []

    def emit(extra: list[str], need: set[str], head: list[str]) -> None:
        keep: list[str] = []
        for name, reads, txt in reversed(defs):  # only the definitions the pass needs, in order
            if name in need:
                keep.append(txt)
                need |= reads
        out.extend(head)
        out.append(f"for {start} in range(0, {bound}, {chunk}):")
        out.append(f"    {cols} = {start} + tl.arange(0, {chunk})")
        out.extend(f"    {x}" for x in [*reversed(keep), *extra])

    def flush() -> None:
        if pending:
            need = set().union(*(r for _, r in pending_reads))
            emit(list(pending), need, [])
            pending.clear()
            pending_reads.clear()

    pending_reads: list[tuple[str, set[str]]] = []
    for st in plan.stmts:
        for r in st.reductions:  # innermost first: each reads the scalars of the ones before
            fn = call_name(r)
            init, upd, neutral = _REDUCE[fn]
            acc, res = new("acc"), new("red")
            inp = arg_value(r, "input", 0)
            assert inp is not None
            e = _text(inp, reds, current)
            need = {current[n] for n in var_names(inp) if n in current}
            upd_text = upd.format(a=acc, e=f"tl.where({cols} < {bound}, {e}, {neutral})")
            emit([*pending, f"{acc} = {upd_text}"], need | {n for _, rs in pending_reads for n in rs},
                 [f"{acc} = {init.format(c=chunk)}"])
            pending.clear()
            pending_reads.clear()
            out.append(f"{res} = {fn}({acc}, axis=0)")
            reds[id(r)] = res
        small = st.node.body[0]
        if not st.block:
            flush()  # a scalar statement after a store sees the stored row (a barrier, a load of what was written)
            out.append(_text(st.node, reds, {}))
            if st.target is not None:
                current.pop(st.target, None)  # a scalar again from here
            continue
        reads = {current[n] for n in var_names(small) if n in current}
        if st.effect:
            pending.append(_text(st.node, reds, current))
            pending_reads.append(("", reads))
            continue
        assert isinstance(small, cst.Assign) and st.target is not None
        local = new(f"{st.target}_c")
        txt = f"{local} = {_text(small.value, reds, current)}"
        current[st.target] = local
        defs.append((local, reads, txt))
    flush()
    return "\n".join(out) + "\n"


class ChunkedRowPasses:
    """A spilling whole-row block reduced in dependent passes or written after them -> one chunk loop per pass."""

    kind = "chunked_row_passes"
    card = "register-spill-relief"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        out = ([] if {"ir:register_spill", "cause:register_spills"} & set(ctx.evidence)
               else ["no register_spill evidence from L3 (never chunk a kernel that does not spill)"])
        if len(t.sites) != 1 or t.sites[0].statement is None:
            return [*out, f"launched from {len(t.sites)} places (the host dispatch needs one launch statement)"]
        plan, bad = _plan(t)
        if plan is not None and t.sites[0].arg_for(t.kernel, plan.bound) is None:
            bad = [f"the launch does not pass {plan.bound} by keyword or before any *args (the host dispatch reads "
                   "the row length)"]
        if "CHUNK" in t.kernel.params:
            bad.append("the kernel already has a CHUNK parameter")
        return out + bad

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        chunks, limits = params.get("values"), params.get("limits")
        pts = [(int(lim), int(c)) for lim in (limits or [32768]) for c in chunks] if chunks else _POINTS
        return [{"LIMIT": lim, "CHUNK": c} for lim, c in pts]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        plan, _ = _plan(t)
        assert plan is not None
        tree, k = t.tree, t.kernel
        new_name = fresh(t, f"{k.name}_chunked")
        chunk = "CHUNK"
        body = _chunked_body(t, plan, chunk)
        top = body_of(k.node)
        pre = "".join(tree.module.code_for_node(s) for s in top[:top.index(plan.cols)])
        header = tree.module.code_for_node(k.node.with_changes(body=cst.IndentedBlock(body=[
            cst.SimpleStatementLine([cst.Pass()])]))).replace(f"def {k.name}(", f"def {new_name}(", 1)
        sub = cst.parse_module(header.replace("    pass\n", ""
                                              + "".join(f"    {x}\n" for x in pre.strip("\n").split("\n") if pre)
                                              + "".join(f"    {x}\n" for x in body.rstrip("\n").split("\n"))))
        fdef = next(n for n in sub.body if isinstance(n, cst.FunctionDef))
        params = list(fdef.params.params)
        first_default = next((i for i, p in enumerate(params) if p.default is not None), len(params))
        extra = cst.ensure_type(cst.parse_statement(f"def _f({chunk}: tl.constexpr):\n    pass\n"),
                                cst.FunctionDef).params.params[0]
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        if first_default == len(params) and params:
            params[-1] = params[-1].with_changes(comma=comma)
            params.append(extra)
        else:
            params.insert(first_default, extra.with_changes(comma=comma))
        fdef = fdef.with_changes(params=fdef.params.with_changes(params=params),
                                 leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
        tree.insert_after(k.node, cst.Module([]).code_for_node(fdef))
        site = t.sites[0]
        n_arg = tree.code(launch_arg(t, plan.bound))  # preconditions: the launch passes it
        call_text = tree.code(site.call)
        fast = cst.ensure_type(cst.parse_expression(call_text), cst.Call)
        fast = fast.with_changes(func=fast.func.with_changes(value=cst.Name(new_name)))
        args = list(fast.args)
        if args:
            args[-1] = args[-1].with_changes(comma=comma)
        kw = cst.ensure_type(cst.parse_expression(f"f({chunk}={int(point['CHUNK'])})"), cst.Call).args[0]
        fast = fast.with_changes(args=[*args, kw])
        limit = int(point["LIMIT"])
        stmt = launch_statement(site)  # preconditions: the launch has one
        tree.insert_before(stmt, (f"if {n_arg} > {limit}:\n    {cst.Module([]).code_for_node(fast)}\n"
                                  f"else:\n    {call_text}\n"))
        tree.remove(stmt)
        passes = body.count(f"for {body.split('for ', 1)[1].split(' ', 1)[0]} in range(")
        return (f"{k.name}: the {plan.colsname} row block (register spills) -> {new_name}, {passes} loop(s) over "
                f"{point['CHUNK']}-wide chunks (one per reduction pass, the stores in the last), launched when "
                f"{n_arg} > {limit}; the original kernel below")
