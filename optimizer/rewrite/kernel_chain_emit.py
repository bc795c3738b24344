"""The source rewrite of an analysed ``kernel_chain_fusion`` chain (``kernel_chain_analysis.Chain``).

The fused kernel replaces the first one: the bodies in order with their locals renamed, a repeated
``v = tl.program_id(a)`` dropped, forwarded loads replaced by the stored value and scratch stores dropped; one
launch at the last launch's place; allocations of dropped buffers removed when nothing else names them.
"""

from __future__ import annotations

import re
from typing import Any, cast

import libcst as cst

from optimizer.rewrite.kernel_chain_analysis import Access, Chain, Forward, bound_in, norm_text, var_names
from optimizer.rewrite.tree import Tree, arg_value, call_name, is_docstring, leading_lines, suite_statements, walk
from optimizer.rewrite.tree import node_code as _code
from optimizer.rewrite.tree import skip_ids as _skip_ids

__all__ = ["rewrite_chain"]


def rewrite_chain(tree: Tree, c: Chain) -> str:
    """Edit ``tree`` into the fused kernel and its one launch; return the description."""
    body: list[cst.BaseStatement] = []
    pid_seen: dict[str, str] = {}  # fused pid variable -> axis text
    for ki, kern in enumerate(c.kernels):
        exprs: dict[int, Any] = {}
        stmts: dict[int, Any] = {}
        for fw in c.forwards:
            if fw.writer == ki:
                stmts[id(fw.store.top)] = _store_edit(fw)
            for a in fw.loads:
                if a.k != ki:
                    continue
                if c.self_copy(a, fw.name) and fw.cast is None:
                    stmts[id(a.top)] = lambda _n: cst.RemovalSentinel.REMOVE
                else:
                    exprs[id(a.call)] = _load_edit(fw, a)
        for s in kern.body:
            pid = _pid_stmt(s)
            if pid is None:
                continue
            var, axis = kern.rename.get(pid[0], pid[0]), pid[1]
            if ki > 0 and pid_seen.get(var) == axis and not _rebound_elsewhere(c, var):
                stmts[id(s)] = lambda _n: cst.RemovalSentinel.REMOVE
            else:
                pid_seen.setdefault(var, axis)
        rw = _Rewriter(kern.rename, _skip_ids(kern.kernel.node), exprs, stmts)
        # the rewriter edits statements and expressions inside the body, never the body itself: it stays a suite
        new_body = cast(cst.BaseSuite, kern.kernel.node.body.visit(rw))
        part = [s for s in suite_statements(new_body) if not is_docstring(s)]
        if part:
            note = cst.EmptyLine(comment=cst.Comment(f"# from {kern.name}"))
            part[0] = part[0].with_changes(leading_lines=[*leading_lines(part[0]), note])
        body += part
    used = set().union(*(var_names(s) for s in body)) if body else set()
    params = [p for p in c.params if p[0] in used]
    params.sort(key=lambda p: p[3])  # positional first, keyword ones after (their relative order kept)
    first = c.kernels[0]
    names = [k.name for k in c.kernels]
    fused_name = _fresh_module(tree, "fused_" + "_".join(re.sub(r"_?kernel$", "", n) for n in names) + "_kernel")
    sig = ", ".join(f"{n}: tl.constexpr" if const else n for n, _h, const, _kw in params)
    header = cst.ensure_type(cst.parse_statement(f"def {fused_name}({sig}):\n    pass\n"), cst.FunctionDef)
    fused = first.kernel.node.with_changes(name=header.name, params=header.params,
                                           body=first.kernel.node.body.with_changes(body=body))
    tree.edit(first.kernel.node, lambda _n: fused)
    for kern in c.kernels[1:]:
        refs = [n for n in walk(tree.module) if isinstance(n, cst.Name) and n.value == kern.name]
        if len(refs) <= 2:  # its definition and its launch
            tree.remove(kern.kernel.node)
    # host: one launch at the last launch's place
    args = [h for _n, h, _c, kw in params if not kw] + [f"{n}={h}" for n, h, _c, kw in params if kw]
    args += [f"{n}={v}" for n, v in c.options]
    grid = tree.code(c.kernels[0].launch.call.func)[len(c.kernels[0].name):]
    tree.replace(c.kernels[-1].launch.call, f"{fused_name}{grid}({', '.join(args)})")
    for kern in c.kernels[:-1]:
        tree.remove(c.block[c.window[c.kernels.index(kern)]])
    passed = {norm_text(h) for _n, h, _c, _kw in params}
    # allocations of dropped buffers go when nothing else names them (a template of another dropped one aside)
    removable = {fw.buffer for fw in c.forwards if fw.drop_store and fw.buffer not in passed}
    while True:
        blocked = {b for b in removable
                   if any(c.template_uses(b).get(id(n)) not in removable for n in c.mentions(b))}
        if not blocked:
            break
        removable -= blocked
    dropped_allocs = []
    for fw in c.forwards:
        alloc = c.allocation(fw.buffer) if fw.buffer in removable else None
        if alloc is not None:
            tree.remove(alloc)
            dropped_allocs.append(fw.buffer)
    kept = [fw.buffer for fw in c.forwards if not fw.drop_store]
    stores_only = [fw.buffer for fw in c.forwards if fw.drop_store and fw.buffer not in dropped_allocs]
    desc = (f"{' + '.join(names)}: {len(names)} launches over the grid `{grid[1:-1]}` -> one {fused_name}; "
            + (f"forwarded in registers: {', '.join(fw.buffer for fw in c.forwards)}" if c.forwards
               else "no buffer forwarded")
            + (f" (allocation dropped: {', '.join(dropped_allocs)})" if dropped_allocs else "")
            + (f"; stores dropped, allocation kept (its dtype or shape is read): {', '.join(stores_only)}"
               if stores_only else "")
            + (f"; stores kept (the host reads them): {', '.join(kept)}" if kept else ""))
    return desc


class _Rewriter(cst.CSTTransformer):
    """Renames variables and applies node edits keyed by the identity of original nodes."""

    def __init__(self, rename: dict[str, str], skip: set[int], exprs: dict[int, Any] | None = None,
                 stmts: dict[int, Any] | None = None) -> None:
        self.rename, self.skip = rename, skip
        self.exprs, self.stmts = exprs or {}, stmts or {}

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        if id(original_node) not in self.skip and original_node.value in self.rename:
            return updated_node.with_changes(value=self.rename[original_node.value])
        return updated_node

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):
        new = super().on_leave(original_node, updated_node)
        fn = self.exprs.get(id(original_node)) or self.stmts.get(id(original_node))
        return fn(new) if fn is not None else new


def _fresh_module(tree: Tree, base: str) -> str:
    used = {n.value for n in walk(tree.module) if isinstance(n, cst.Name)}
    name, i = base, 2
    while name in used:
        name, i = f"{base}{i}", i + 1
    return name


def _pid_stmt(s: cst.CSTNode) -> tuple[str, str] | None:
    if (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Assign)
            and len(s.body[0].targets) == 1 and isinstance(s.body[0].targets[0].target, cst.Name)
            and isinstance(s.body[0].value, cst.Call) and call_name(s.body[0].value) == "tl.program_id"):
        ax = arg_value(s.body[0].value, "axis", 0)
        return s.body[0].targets[0].target.value, _code(ax) if ax is not None else "?"
    return None


def _rebound_elsewhere(c: Chain, var: str) -> bool:
    for kern in c.kernels:
        for s in kern.body:
            if _pid_stmt(s) is not None:
                continue
            if var in {kern.rename.get(n, n) for n in bound_in(s)}:
                return True
    return False


def _value_arg(call: cst.Call) -> int | None:
    for i, a in enumerate(call.args):
        if (a.keyword is not None and a.keyword.value == "value") or (a.keyword is None and i == 1):
            return i
    return None


def _store_edit(fw: Forward):
    def fn(line: cst.CSTNode) -> cst.CSTNode | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
        assert isinstance(line, cst.SimpleStatementLine)
        store = line.body[0]
        call = store.value if isinstance(store, cst.Expr) else None
        assert isinstance(call, cst.Call)  # a forwarded store is a call statement of its own (Chain checks)
        i = _value_arg(call)
        assert i is not None
        value = _code(call.args[i].value)
        bind = cst.parse_statement(f"{fw.name} = {value}\n") if fw.temp else None
        if fw.drop_store:
            if bind is None:
                return cst.RemovalSentinel.REMOVE
            return bind.with_changes(leading_lines=line.leading_lines)
        if bind is None:
            return line
        args = list(call.args)
        args[i] = args[i].with_changes(value=cst.Name(fw.name))
        kept = line.with_changes(body=[line.body[0].with_changes(value=call.with_changes(args=args))], leading_lines=[])
        return cst.FlattenSentinel([bind.with_changes(leading_lines=line.leading_lines), kept])
    return fn


def _load_edit(fw: Forward, a: Access):
    def fn(call: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(call, cst.Call)
        v = fw.name if fw.cast is None else f"{fw.name}.to({fw.cast})"
        mask, other = arg_value(call, "mask", 1), arg_value(call, "other", 2)
        if mask is not None and other is not None:
            return cst.parse_expression(f"tl.where({_code(mask)}, {v}, {_code(other)})")
        return cst.parse_expression(v)
    return fn
