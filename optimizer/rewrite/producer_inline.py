"""``producer_inline``: a flat element-wise kernel whose output only feeds the next kernel is recomputed inside it.

Card ``elementwise-chain-fusion``. A first translation often writes an element-wise step to a scratch tensor and
launches the real kernel on it (naive masked cumsum: ``apply_mask_kernel`` writes ``x * mask`` to ``masked``,
``cumsum_kernel`` scans ``masked``). The scratch costs a full write and a full read. Since the producer computes
``buf[i] = f(in_1[i], ..., in_k[i], i)``, every load of ``buf`` at any index ``E`` in the consumer can load the
inputs at ``E`` and apply ``f`` instead. Before::

    apply_mask_kernel[(triton.cdiv(M * N, 256),)](x, mask, masked, M * N, BLOCK=256)
    cumsum_kernel[(M,)](masked, y, N, BLOCK=128)
    # consumer: x = tl.load(x_ptr + row * n_cols + cols, mask=m, other=0.0)      (x_ptr is `masked`)

After::

    cumsum_kernel[(M,)](masked, y, N, BLOCK=128, x_ptr_pi=x, m_ptr_pi=mask)
    # consumer: x = tl.where(m, (tl.where(tl.load(m_ptr_pi + (row * n_cols + cols), mask=m, other=0) != 0,
    #                                     tl.load(x_ptr_pi + (row * n_cols + cols), mask=m, other=0.0), 0.0)
    #                           ).to(x_ptr.dtype.element_ty), 0.0)

Domain, each refused with its reason: the producer is straight-line code (single assignments and one
``tl.store``; no loops, branches, reductions, atomics or dots) over one program axis, every load and the store
addressed exactly ``param + idx`` with ``idx = tl.program_id(0) * B + tl.arange(0, B)``, and its stored value
uses neither its own bound mask nor the program id otherwise; it is launched from one place, and the very next
statement launches the consumer with the scratch buffer; the host names the buffer nowhere else but in its
allocation (so nothing else reads it, and the buffer stays only as the dtype reference of the cast); the
consumer reads the buffer only through ``tl.load(buf + E, ...)``. The buffer keeps its allocation (no traffic)
and the consumer's parameter, so the recomputed value is cast to the buffer's element type exactly as the
store did.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import libcst as cst

from optimizer.rewrite.common import (
    defaulted_positional_reasons,
    fresh,
    launch_arg,
    launch_statement,
    single_site_reasons,
)
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import CstKernel, CstLaunch, arg_value, call_name, expand_defs, walk
from optimizer.rewrite.tree import node_code as _code

__all__ = ["ProducerInline"]


@dataclass
class _Plan:
    consumer: CstKernel
    c_site: CstLaunch
    buf_param: str  # the consumer's parameter bound to the scratch buffer
    value: cst.BaseExpression  # the producer's stored value, names expanded
    idx: str
    out_param: str
    inputs: dict[str, str] = field(default_factory=dict)  # producer pointer param -> host argument text
    scalars: dict[str, str] = field(default_factory=dict)  # producer scalar param -> host argument text
    others: dict[str, str] = field(default_factory=dict)  # producer pointer param -> its loads' other= text
    #: the consumer's loads of the buffer, each with the E of its address ``buf + E``
    loads: list[tuple[cst.Call, cst.BaseExpression]] = field(default_factory=list)
    #: id of each load in ``value`` -> the producer pointer parameter it reads (its address is ``param + idx``)
    load_params: dict[int, str] = field(default_factory=dict)


def _terms(e: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Add) and not e.lpar:
        return _terms(e.left) + _terms(e.right)
    return [e]


def _ptr_parts(ptr: cst.BaseExpression | None, base_names: set[str]) -> tuple[str, cst.BaseExpression] | None:
    """``base + E`` (``base`` one of ``base_names`` among the terms of a sum, once) -> (base, E)."""
    if ptr is None:
        return None
    terms = _terms(ptr)
    bases = [(i, t.value) for i, t in enumerate(terms) if isinstance(t, cst.Name) and t.value in base_names]
    if len(terms) < 2 or len(bases) != 1:
        return None
    rest = [_code(t) for i, t in enumerate(terms) if i != bases[0][0]]
    return bases[0][1], cst.parse_expression(" + ".join(rest))


class ProducerInline:
    """A flat element-wise producer whose scratch output only feeds the next launch -> recomputed in the consumer."""

    kind = "producer_inline"
    card = "elementwise-chain-fusion"

    def _plan(self, t: Target, ctx: RecipeContext) -> tuple[_Plan | None, list[str]]:
        out = single_site_reasons(t)
        f, k = t.facts, t.kernel
        if f.loops or f.reductions or f.dots or f.atomics or f.branches or f.early_returns:
            out.append("not straight-line element-wise code (loops, branches, reductions, atomics or dots)")
        axes = {_code(arg_value(c, "axis", 0) or cst.Integer("0")) for c in walk(k.node.body)
                if isinstance(c, cst.Call) and call_name(c) == "tl.program_id"}
        if axes != {"0"}:
            out.append(f"needs exactly one program axis, axis 0 (has {sorted(axes) or 'none'})")
        if out:
            return None, out
        defs: dict[str, cst.BaseExpression] = {}
        stores: list[cst.Call] = []
        for s in k.node.body.body:
            small = s.body if isinstance(s, cst.SimpleStatementLine) else None
            if small is None or len(small) != 1:
                return None, [f"`{_code(s)[:60]}` is not a single simple statement"]
            st = small[0]
            if isinstance(st, cst.Assign) and len(st.targets) == 1 and isinstance(st.targets[0].target, cst.Name):
                name = st.targets[0].target.value
                if name in defs:
                    return None, [f"`{name}` is assigned twice"]
                defs[name] = st.value
            elif isinstance(st, cst.Expr) and isinstance(st.value, cst.Call) and call_name(st.value) == "tl.store":
                stores.append(st.value)
            else:
                return None, [f"`{_code(st)[:60]}` is neither an assignment nor the store"]
        if len(stores) != 1:
            return None, [f"{len(stores)} stores (one is needed)"]
        idx = next((n for n, v in defs.items() if any(call_name(c) == "tl.arange" for c in walk(v))
                    and (any(call_name(c) == "tl.program_id" for c in walk(v)) or any(
                        isinstance(m, cst.Name) and m.value in f.pid.values() for m in walk(v)))), None)
        if idx is None:
            return None, ["no block index `idx = tl.program_id(0) * B + tl.arange(0, B)`"]
        ptrs = set(k.params)
        store = stores[0]
        sp = _ptr_parts(arg_value(store, "pointer", 0), ptrs)
        if sp is None or not (isinstance(sp[1], cst.Name) and sp[1].value == idx):
            return None, [f"the store is not addressed `param + {idx}`"]
        out_param = sp[0]
        value = arg_value(store, "value", 1)
        assert value is not None
        bound = {n for n, v in defs.items() if n != idx and idx in {m.value for m in walk(v) if isinstance(m, cst.Name)}
                 and not any(call_name(c) == "tl.load" for c in walk(v))}  # the mask and other index-only names
        pid_vars = set(f.pid.values())
        keep = {n: v for n, v in defs.items() if n not in bound and n != idx and n not in pid_vars}
        expanded = expand_defs(value, keep)
        in_loads = {id(m) for c in walk(expanded) if isinstance(c, cst.Call) and call_name(c) == "tl.load"
                    for m in walk(c)}
        names = {m.value for m in walk(expanded) if isinstance(m, cst.Name) and id(m) not in in_loads}
        if names & (bound | pid_vars):
            own = sorted(names & (bound | pid_vars))
            return None, [f"the stored value uses the producer's own mask or program id ({own})"]
        if any(call_name(c) in ("tl.arange", "tl.program_id") for c in walk(expanded)):
            return None, ["the stored value uses tl.arange / tl.program_id directly"]
        plan_inputs, others, load_params = {}, {}, {}
        for c in walk(expanded):
            if isinstance(c, cst.Call) and call_name(c) == "tl.load":
                lp = _ptr_parts(arg_value(c, "pointer", 0), ptrs)
                if lp is None or not (isinstance(lp[1], cst.Name) and lp[1].value == idx):
                    return None, [f"`{_code(c)[:60]}` is not a load at `param + {idx}`"]
                o = arg_value(c, "other", 2)
                others[lp[0]] = _code(o) if o is not None else "0"
                plan_inputs[lp[0]] = ""
                load_params[id(c)] = lp[0]
        site = t.sites[0]
        host = {p: _code(a) for p in k.params if (a := site.arg_for(k, p)) is not None}
        buf = host.get(out_param)
        if not buf or not buf.isidentifier():
            return None, [f"the producer's output `{out_param}` is not a host name"]
        consumer, reasons = self._consumer(t, site, buf)
        if consumer is None:
            return None, reasons
        c_kernel, c_site, c_param, loads = consumer
        for p in plan_inputs:
            plan_inputs[p] = host.get(p, "")
            if not plan_inputs[p]:
                return None, [f"the producer's input `{p}` is not passed at its launch"]
        scalars = {n: host[n] for n in names if n in k.params and n not in plan_inputs and n != out_param and n in host}
        if any(n in k.constexprs for n in scalars):
            return None, ["the stored value uses a constexpr of the producer"]
        return _Plan(c_kernel, c_site, c_param, expanded, idx, out_param, plan_inputs, scalars, others, loads,
                     load_params), []

    def _consumer(self, t: Target, site: CstLaunch, buf: str) -> tuple[Any, list[str]]:
        tree, fn = t.tree, site.function
        if fn is None or site.statement is None:
            return None, ["the producer is not launched from a function"]
        body = next((b for b in (n for n in walk(fn) if isinstance(n, cst.IndentedBlock))
                     if any(s is site.statement for s in b.body)), None)
        if body is None:
            return None, ["cannot find the launch's block"]
        stmts = list(body.body)
        i = next(j for j, s in enumerate(stmts) if s is site.statement)
        nxt = stmts[i + 1] if i + 1 < len(stmts) else None
        c_site = next((s for s in tree.launches if s.statement is nxt), None) if nxt is not None else None
        if nxt is None or c_site is None or c_site.kernel == t.kernel.name:
            return None, ["the next statement does not launch another kernel"]
        ck = tree.kernels[c_site.kernel]
        if len(tree.launches_of(ck.name)) != 1 or ck.autotuned or ck.heuristics:
            return None, [f"{ck.name} is launched elsewhere too, or autotuned"]
        if why := defaulted_positional_reasons(ck.node, [c_site.call]):
            return None, [f"{ck.name}: {why[0]}"]
        c_params = [p for p in ck.params if (a := c_site.arg_for(ck, p)) is not None and _code(a) == buf]
        if len(c_params) != 1:
            return None, [f"{ck.name} does not take `{buf}` as exactly one argument"]
        allowed = {id(n) for n in walk(site.statement)} | {id(n) for n in walk(nxt)}
        allocs = [a for a in tree.assignments(fn, buf)]
        allowed |= {id(n) for a in allocs for n in walk(a)}
        stray = [n for n in walk(fn) if isinstance(n, cst.Name) and n.value == buf and id(n) not in allowed]
        if stray or len(allocs) != 1:
            return None, [f"the host uses `{buf}` beyond its allocation and the two launches (it is not scratch)"]
        cp = c_params[0]
        loads, uses = [], [n for n in walk(ck.node.body) if isinstance(n, cst.Name) and n.value == cp]
        for c in walk(ck.node.body):
            if (isinstance(c, cst.Call) and call_name(c) == "tl.load"
                    and (parts := _ptr_parts(arg_value(c, "pointer", 0), {cp})) is not None):
                loads.append((c, parts[1]))
        if len(loads) != len(uses) or not loads:
            return None, [f"{ck.name} uses `{cp}` other than as `tl.load({cp} + E, ...)`"]
        return (ck, c_site, cp, loads), []

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        return self._plan(t, ctx)[1]

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        plan, _ = self._plan(t, ctx)
        assert plan is not None
        return [{"consumer": plan.consumer.name}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        plan, _ = self._plan(t, ctx)
        assert plan is not None
        tree, ck = t.tree, plan.consumer
        new_names = {p: fresh(t, f"{p}_pi") for p in [*plan.inputs, *plan.scalars]}
        for c, e in plan.loads:
            mask = arg_value(c, "mask", 1)
            other = arg_value(c, "other", 2)
            e_text, m_text = f"({_code(e)})", (_code(mask) if mask is not None else None)
            value = self._instantiate(plan, new_names, e_text, m_text)
            cast = f"({value}).to({plan.buf_param}.dtype.element_ty)"
            tree.replace(c, f"tl.where({m_text}, {cast}, {_code(other)})" if m_text and other is not None else cast)
        tree.add_params(ck.node, list(new_names.values()))
        for p, host in {**plan.inputs, **plan.scalars}.items():
            tree.add_keyword(plan.c_site.call, new_names[p], host)
        tree.remove(launch_statement(t.sites[0]))  # _consumer: the launch has its own statement line
        buf = _code(launch_arg(t, plan.out_param))  # _plan: the launch passes the output (the scratch buffer's name)
        return (f"{t.kernel.name} (element-wise, writes scratch `{buf}`) "
                f"recomputed inside {ck.name} at its {len(plan.loads)} load(s) of it; the producer launch and the "
                f"scratch round trip are gone (inputs {sorted(plan.inputs)} loaded at the consumer's index)")

    @staticmethod
    def _instantiate(plan: _Plan, names: dict[str, str], e: str, mask: str | None) -> str:
        idx = plan.idx

        class _At(cst.CSTTransformer):
            def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
                if call_name(original_node) != "tl.load":
                    return updated_node
                base = plan.load_params[id(original_node)]  # every load in the value: _plan matched `param + idx`
                m = f", mask={mask}, other={plan.others.get(base, '0')}" if mask else ""
                return cst.parse_expression(f"tl.load({names[base]} + {e}{m})")

            def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
                if updated_node.value == idx:
                    return cst.parse_expression(e)
                if updated_node.value == plan.out_param:
                    return cst.Name(plan.buf_param)
                if updated_node.value in plan.scalars:
                    return cst.Name(names[updated_node.value])
                return updated_node

            def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
                return updated_node.with_changes(attr=original_node.attr)

        # _At's leaves give expressions only, so the visited expression stays one
        return _code(cast(cst.BaseExpression, plan.value.visit(_At())))
