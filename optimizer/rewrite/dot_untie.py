"""Untie a dot kernel's shared tile constexpr: one ``BLOCK`` sizing M, N and K becomes ``BLOCK_M/N/K``.

A first translation often writes a matmul with one square tile::

    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)     # M
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)     # N
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)          # M x N
    for k0 in range(0, K, BLOCK):                             # K
        ks = k0 + tl.arange(0, BLOCK)                         # K
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], ...)
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], ...)
        acc += tl.dot(a, b)
    # host: kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](..., BLOCK=32)

No tile search can change M without changing K. ``untie_tiles`` gives every use of the shared constexpr its role
and the launch all three (``BLOCK_M=32, BLOCK_N=32, BLOCK_K=32``): the same kernel, now searchable by
``dot_tile_search`` (which calls this first when its tiles are tied).

Roles come from the dot's operands: the names indexing ``a``'s rows (``x[:, None]``) are M, its columns K; ``b``'s
rows K, its columns N (followed through the loads' pointer definitions). A use of the constexpr gets the role of
the name it defines (``rows = ... BLOCK ...`` -> BLOCK_M), K inside a loop header (``range(0, K, BLOCK)``) or a
pointer advance in the loop, M and N as the two dimensions of ``tl.zeros((BLOCK, BLOCK))``. Any other use is
refused with its line, as are positional launch arguments and a constexpr whose roles cannot be told apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import libcst as cst

from optimizer.rewrite.context import RecipeContext, RewriteResult
from optimizer.rewrite.engine import prepared_first
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.tree import CstKernel, Tree, arg_value, call_name, walk

__all__ = ["untie_tiles", "untied_first"]

_ROLE_NAMES = {"M": "BLOCK_M", "N": "BLOCK_N", "K": "BLOCK_K"}


def _defs(k: CstKernel) -> dict[str, list[cst.Assign]]:
    out: dict[str, list[cst.Assign]] = {}
    for n in walk(k.node.body):
        if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
            out.setdefault(n.targets[0].target.value, []).append(n)
    return out


def _axis(sub: cst.Subscript) -> int | None:
    """0 for ``x[:, None]``, 1 for ``x[None, :]``."""
    els = [e.slice for e in sub.slice]
    if len(els) != 2 or not all(isinstance(e, cst.Index) or isinstance(e, cst.Slice) for e in els):
        return None
    def kind(e: cst.BaseSlice) -> str:
        if isinstance(e, cst.Slice):
            return "slice"
        assert isinstance(e, cst.Index)  # libcst's other kind of subscript element
        v = e.value
        return "none" if isinstance(v, cst.Name) and v.value == "None" else "?"
    kinds = [kind(e) for e in els]
    return {("slice", "none"): 0, ("none", "slice"): 1}.get((kinds[0], kinds[1]))


def _indexed(expr: cst.CSTNode, defs: dict[str, list[cst.Assign]], depth: int = 0) -> dict[str, int]:
    """Names indexed as rows (0) or columns (1) in ``expr``, following single definitions of other names."""
    out: dict[str, int] = {}
    for n in walk(expr):
        if isinstance(n, cst.Subscript) and isinstance(n.value, cst.Name) and (ax := _axis(n)) is not None:
            out.setdefault(n.value.value, ax)
        elif isinstance(n, cst.Name) and depth < 4 and len(defs.get(n.value, [])) == 1:
            for name, ax in _indexed(defs[n.value][0].value, defs, depth + 1).items():
                out.setdefault(name, ax)
    return out


def _load_of(name: cst.BaseExpression, defs: dict[str, list[cst.Assign]]) -> cst.Call | None:
    node: cst.CSTNode | None = name
    for _ in range(3):
        if isinstance(node, cst.Name) and len(defs.get(node.value, [])) == 1:
            node = defs[node.value][0].value
        loads = [m for m in walk(node) if isinstance(m, cst.Call) and call_name(m) == "tl.load"] if node else []
        if loads:
            return loads[0]
    return None


def _roles(k: CstKernel, dot: cst.Call, defs: dict[str, list[cst.Assign]]) -> dict[str, str]:
    """Name -> role (M, N, K) of the names that index the dot's operand loads."""
    if len(dot.args) < 2:
        raise NotApplicable("tl.dot without two operands")
    out: dict[str, str] = {}
    for operand, by_axis in ((dot.args[0].value, ("M", "K")), (dot.args[1].value, ("K", "N"))):
        load = _load_of(operand, defs)
        ptr = arg_value(load, "pointer", 0) if load is not None else None
        if ptr is None:
            raise NotApplicable(f"dot operand `{cst.Module([]).code_for_node(operand)}` is not a tl.load of a 2-D tile")
        for name, ax in _indexed(ptr, defs).items():
            role = by_axis[ax]
            if out.get(name, role) != role:
                raise NotApplicable(f"`{name}` indexes both {out[name]} and {role}")
            out[name] = role
    return out


def _enclosing(k: CstKernel, target: cst.Name) -> list[cst.CSTNode]:
    """The chain of nodes from the kernel body down to ``target`` (outermost first)."""
    path: list[cst.CSTNode] = []

    def visit(node: cst.CSTNode, trail: list[cst.CSTNode]) -> bool:
        if node is target:
            path.extend(trail)
            return True
        return any(visit(c, [*trail, node]) for c in node.children)

    visit(k.node.body, [])
    return path


def _pointers(k: CstKernel) -> set[str]:
    """Names loaded from directly (``tl.load(a_ptrs, ...)``): the pointer tiles a K loop advances."""
    return {p.value for n in walk(k.node.body) if isinstance(n, cst.Call) and call_name(n) == "tl.load"
            and isinstance(p := arg_value(n, "pointer", 0), cst.Name)}


def _role_of_use(k: CstKernel, use: cst.Name, roles: dict[str, str]) -> str | None:
    trail = _enclosing(k, use)
    for i, node in enumerate(reversed(trail)):
        if isinstance(node, cst.Assign) and isinstance(node.targets[0].target, cst.Name):
            return roles.get(node.targets[0].target.value)
        if isinstance(node, cst.Call) and call_name(node) in ("tl.zeros", "tl.full") and node.args:
            shape = node.args[0].value
            if isinstance(shape, (cst.Tuple, cst.List)) and len(shape.elements) == 2:
                for j, el in enumerate(shape.elements):
                    if el.value is use:
                        return ("M", "N")[j]
        if (isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name) and node.target.value in _pointers(k)
                and any(isinstance(p, (cst.For, cst.While)) for p in trail)):
            return "K"  # a pointer advance inside the K loop
        if isinstance(node, cst.For):
            inner = list(reversed(trail))[i - 1] if i else None
            if inner is node.iter or any(m is use for m in walk(node.iter)):
                return "K"
    return None


def untie_tiles(source: str) -> tuple[str, str]:
    """(new source, description) with the first tied dot kernel's tiles untied; ``NotApplicable`` otherwise."""
    tree = Tree(source)
    reasons = []
    for k in tree.kernels.values():
        dots = [n for n in walk(k.node.body) if isinstance(n, cst.Call) and call_name(n) == "tl.dot"]
        if not dots:
            continue
        try:
            return _untie(tree, k, dots[0])
        except NotApplicable as exc:
            reasons.append(f"{k.name}: {exc}")
    raise NotApplicable("; ".join(reasons) or "no tl.dot kernel")


def _untie(tree: Tree, k: CstKernel, dot: cst.Call) -> tuple[str, str]:
    defs = _defs(k)
    roles = _roles(k, dot, defs)
    shared: dict[str, set[str]] = {}
    for name, role in roles.items():
        for a in defs.get(name, []):
            for m in walk(a.value):
                if isinstance(m, cst.Call) and call_name(m) == "tl.arange":
                    end = arg_value(m, "end", 1)
                    if isinstance(end, cst.Name) and end.value in k.constexprs:
                        shared.setdefault(end.value, set()).add(role)
    tied = [c for c, rs in shared.items() if len(rs) > 1]
    if not tied:
        raise NotApplicable("no constexpr sizes more than one of the dot's M, N, K tiles")
    block = tied[0]
    used = {n.value for n in walk(tree.module) if isinstance(n, cst.Name)} | set(k.params)
    names = {r: (_ROLE_NAMES[r] if _ROLE_NAMES[r] not in used else f"{_ROLE_NAMES[r]}_T") for r in ("M", "N", "K")}
    uses = [n for n in walk(k.node.body) if isinstance(n, cst.Name) and n.value == block]
    for u in uses:
        use_role = _role_of_use(k, u, roles)
        if use_role is None:
            stmt = tree.statement_of(k.node, u)
            raise NotApplicable(f"cannot tell which tile `{tree.code(stmt) if stmt else block}` sizes")
        tree.replace(u, names[use_role])
    sites = tree.launches_of(k.name)
    if not sites:
        raise NotApplicable(f"{k.name} is not launched")
    for s in sites:
        kw = s.keyword(block)
        if kw is None:
            raise NotApplicable(f"{block} is passed positionally (or not at all) at a launch of {k.name}")
        value = tree.code(kw.value)

        def swap(c: cst.CSTNode, value: str = value) -> cst.CSTNode:
            assert isinstance(c, cst.Call)
            args: list[cst.Arg] = []
            for a in c.args:
                if a.keyword is not None and a.keyword.value == block:
                    new = cst.ensure_type(cst.parse_expression(
                        f"f({', '.join(f'{names[r]}={value}' for r in ('M', 'N', 'K'))})"), cst.Call).args
                    args += [*new[:-1], new[-1].with_changes(comma=a.comma)]
                else:
                    args.append(a)
            return c.with_changes(args=args)
        tree.edit(s.call, swap)

    def params(f: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(f, cst.FunctionDef)
        out: list[cst.Param] = []
        for p in f.params.params:
            if p.name.value == block:
                sep = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                out += [p.with_changes(name=cst.Name(names[r]), comma=sep) for r in ("M", "N", "K")]
                out[-1] = out[-1].with_changes(comma=p.comma)
            else:
                out.append(p)
        return f.with_changes(params=f.params.with_changes(params=out))
    tree.edit(k.node, params)
    return tree.render(), (f"{k.name}: the shared tile {block} untied into {names['M']}, {names['N']}, {names['K']} "
                           f"({len(uses)} uses by role; launches pass the old value to all three)")


def untied_first(fn: Callable[[dict[str, Any], RecipeContext], RewriteResult]
                 ) -> Callable[[dict[str, Any], RecipeContext], RewriteResult]:
    """Wrap the ``dot_tile_search`` applier: when its tiles are tied to one constexpr, untie them first and search
    on the untied kernel (one rewrite, one diff against the candidate as given)."""
    return prepared_first(fn, "not three distinct constexpr aranges", untie_tiles,
                          "untying a shared tile constexpr failed: ")
