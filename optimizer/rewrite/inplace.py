"""``inplace_output``: a clone written in place -> a fresh output, and a fresh output copied back -> in place.

Card ``inplace-fresh-output``. Two directions, whichever the launcher shows:

**fresh** (the problem wants a new tensor; the launcher clones an input and the kernel rewrites the clone)::

    y = x.clone()                                    y = torch.empty_like(x, memory_format=torch.contiguous_format)
    k[grid](y, n, BLOCK=1024)               ->       k[grid](x.contiguous(), n, BLOCK=1024, y_ptr_out=y)

and in the kernel every ``tl.store(y_ptr + E, ...)`` becomes ``tl.store(y_ptr_out + E, ...)`` (a new pointer
parameter): the kernel reads ``x`` and writes ``y``, which saves the clone's full read + write pass. ``x`` is
passed through ``.contiguous()`` (a no-op for a contiguous input) and ``y`` is contiguous, so the two have the
same layout, as the clone had. Exact only when the kernel writes every element of ``y`` (``empty_like`` holds
garbage where a clone held ``x``), so coverage must follow from the launch, in one of two forms:

- flat: ``offs = pid * BLOCK + tl.arange(0, BLOCK)``, address ``p + offs``, mask ``offs < n``; the launch passes
  ``n = <x or y>.numel()`` and the grid is ``(triton.cdiv(n, BLOCK),)`` with the same BLOCK;
- rows: address ``p + row * stride + cols``, ``row = tl.program_id(0)``, ``cols = tl.arange(0, BLOCK)``, mask
  ``cols < n_cols``; the launcher unpacks ``R, C = <x or y>.shape`` (2-D), the grid is ``(R,)``, ``n_cols`` is
  ``C``, ``BLOCK`` is ``triton.next_power_of_2(C)`` and the stride is ``C`` or ``y.stride(0)``.

**inplace** (the problem declares an in-place output, ``INPLACE_OUTPUTS``; the launcher allocates a fresh buffer
and copies it back)::

    out = torch.empty_like(x)
    k[grid](x, out, n, BLOCK=1024)          ->       k[grid](x, x, n, BLOCK=1024)
    x.copy_(out)

the buffer, its allocation and the ``copy_`` pass go; the kernel is unchanged.

Both directions change whether the kernel's reads see its own writes, so both need the same kernel form (each
refused with its reason): every load of the input pointer and every store of the output pointer has the same
offset expression and the same mask (a program reads exactly what it writes, and different programs write
different elements), all loads come before the first store, none sits in a loop, and nothing else (atomics,
other offsets) touches those pointers; one tuple-grid launch site. The host pattern must be exact: the clone (or
buffer) assigned once, used before the launch only for its size, shape or strides, passed once to the launch;
for ``fresh``, no launch argument reads the input's strides (the input is made contiguous).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.kernel.flow import ATOMICS
from optimizer.rewrite.common import fresh, launch_arg, single_site_reasons
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import arg_value, body_of, call_name, walk
from optimizer.rewrite.tree import node_code as _code

__all__ = ["InplaceOutput"]

_META = ("numel", "shape", "stride", "size", "dim", "dtype", "device")


def _norm(text: str) -> str:
    return "".join(text.split())


def _terms(e: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Add) and not e.lpar:
        return _terms(e.left) + _terms(e.right)
    return [e]


class _Kernel:
    def __init__(self, t: Target) -> None:
        self.t = t
        self.defs: dict[str, list[cst.BaseExpression | cst.AugAssign]] = {}  # a value, or an update of the name
        for n in walk(t.kernel.node.body):
            if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
                self.defs.setdefault(n.targets[0].target.value, []).append(n.value)
            elif isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name):
                self.defs.setdefault(n.target.value, []).append(n)
        self.order = {id(n): i for i, n in enumerate(walk(t.kernel.node))}

    def one(self, name: str) -> cst.BaseExpression | None:
        d = self.defs.get(name, [])
        return d[0] if len(d) == 1 and isinstance(d[0], cst.BaseExpression) else None

    def terms(self, ptr: cst.BaseExpression | None) -> list[cst.BaseExpression] | None:
        """``p + E`` (following names bound once to sums, ``ptrs = row_ptr + cols``) -> [p, *E terms]."""
        if ptr is None:
            return None
        out = _terms(ptr)
        for _ in range(4):  # the base term may itself be a name bound to a sum (row_ptr = y_ptr + row * stride)
            e = out[0]
            d = self.one(e.value) if isinstance(e, cst.Name) and e.value not in self.t.kernel.params else None
            is_sum = isinstance(d, cst.BinaryOperation) and isinstance(d.operator, cst.Add)
            if d is None or not (isinstance(d, cst.Name) or is_sum):
                break
            out = _terms(d) + out[1:]
        if not (isinstance(out[0], cst.Name) and out[0].value in self.t.kernel.params):
            return None
        return out

    def split(self, ptr: cst.BaseExpression | None) -> tuple[str, str] | None:
        """(p, normalized E) of ``p + E``; None if the base is not a parameter."""
        terms = self.terms(ptr)
        if terms is None:
            return None
        base = cst.ensure_type(terms[0], cst.Name)  # terms() gives a parameter's name first
        return base.value, "+".join(sorted(_norm(_code(x)) for x in terms[1:]))


def _rmw_reasons(t: Target, kn: _Kernel, p_in: str, p_out: str) -> tuple[list[str], str | None, str | None]:
    """Reasons the kernel is not read-then-write at one offset (p_in loads, p_out stores); the offset and mask."""
    out: list[str] = []
    loads, stores = [], []
    for a in t.facts.accesses:
        s = kn.split(arg_value(a.node, "pointer", 0))
        if s is None:
            if any(isinstance(m, cst.Name) and m.value in (p_in, p_out) for m in walk(a.node)):
                out.append(f"{a.op}({a.pointer}) reaches {p_in}/{p_out} through an expression that is not p + offset")
            continue
        base = s[0]
        if base not in (p_in, p_out):
            continue
        if a.op in ATOMICS:
            out.append(f"{a.op} on {base}")
        elif a.op == "tl.load" and base == p_in:
            loads.append((a, s[1]))
        elif a.op == "tl.store" and base == p_out:
            stores.append((a, s[1]))
        else:
            out.append(f"{a.op} on {base} (the {'input' if base == p_in else 'output'} pointer)")
    if not stores:
        out.append(f"no tl.store to {p_out}")
    if not loads:
        out.append(f"no tl.load of {p_in}")
    if out:
        return out, None, None
    offsets = {e for _, e in loads + stores}
    def mask_text(a: Any) -> str:  # a mask name bound once (mask = offs < n) counts as its expression
        m = arg_value(a.node, "mask", 1 if a.op == "tl.load" else 2)
        d = kn.one(m.value) if isinstance(m, cst.Name) else None
        return _norm(_code(d if d is not None else m)) if m is not None else ""

    masks = {mask_text(a) for a, _ in loads + stores}
    if len(offsets) != 1:
        out.append(f"the loads of {p_in} and stores to {p_out} use different offsets ({', '.join(sorted(offsets))}): "
                   "a program would read elements that another writes")
    if len(masks) != 1:
        out.append(f"the loads of {p_in} and stores to {p_out} use different masks")
    if any(a.in_loop for a, _ in loads + stores):
        out.append("a load or store of the in-place tensor sits in a loop (reads after writes are not ruled out)")
    first_store = min(kn.order[id(a.node)] for a, _ in stores)
    if any(kn.order[id(a.node)] > first_store for a, _ in loads):
        out.append(f"{p_in} is loaded after the first store to {p_out}")
    return out, next(iter(offsets)), next(iter(masks))


def _assign_of(t: Target, name: str) -> cst.Assign | None:
    a = t.tree.assignments(t.sites[0].function, name)
    return a[0] if len(a) == 1 else None


def _statement_index(fn: cst.FunctionDef, node: cst.CSTNode) -> int:
    body = body_of(fn)
    return next((i for i, s in enumerate(body) if any(m is node for m in walk(s))), -1)


def _uses(fn: cst.FunctionDef, name: str) -> list[cst.Name]:
    return [n for n in walk(fn.body) if isinstance(n, cst.Name) and n.value == name]


def _meta_only(fn: cst.FunctionDef, name: str, inside: cst.CSTNode | None = None) -> bool:
    """Every use of ``name`` (in ``inside``, default the function) reads only metadata: ``name.numel()``, ``.shape``."""
    scope = inside if inside is not None else fn.body
    attrs = {id(n.value) for n in walk(scope) if isinstance(n, cst.Attribute) and n.attr.value in _META}
    return all(id(n) in attrs for n in walk(scope) if isinstance(n, cst.Name) and n.value == name)


class InplaceOutput:
    """A cloned input written in place -> a fresh output (or a fresh output copied back -> in place)."""

    kind = "inplace_output"
    card = "inplace-fresh-output"

    # ---------------------------------------------------------------------------------------------- detection
    def _fresh(self, t: Target) -> dict[str, Any] | list[str]:
        """The clone-then-write-in-place form: the pointer parameter, the clone, its source; or the reasons."""
        site, k = t.sites[0], t.kernel
        fn = site.function
        if fn is None:
            return ["the launch is not inside a function"]
        for p in k.params:
            if p in k.constexprs:
                continue
            arg = site.arg_for(k, p)
            if not isinstance(arg, cst.Name):
                continue
            a = _assign_of(t, arg.value)
            v = a.value if a is not None else None
            src = None
            if (isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value == "clone"
                    and not v.args):
                src = v.func.value
            elif isinstance(v, cst.Call) and call_name(v) == "torch.clone" and len(v.args) == 1:
                src = v.args[0].value
            if src is not None:
                return {"param": p, "buf": arg.value, "assign": a, "src": src}
        return ["no kernel argument is a name bound to <tensor>.clone() (the fresh-output form)"]

    def _inplace(self, t: Target) -> dict[str, Any] | list[str]:
        """The fresh-buffer-copied-back form: ``out = torch.empty_like(x)``, ``k(x, out)``, ``x.copy_(out)``."""
        site, k = t.sites[0], t.kernel
        fn = site.function
        if fn is None:
            return ["the launch is not inside a function"]
        for n in walk(fn.body):
            if not (isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "copy_"
                    and len(n.args) == 1 and isinstance(n.args[0].value, cst.Name)):
                continue
            buf, dst = n.args[0].value.value, _code(n.func.value)
            a = _assign_of(t, buf)
            if a is None or not (isinstance(a.value, cst.Call) and call_name(a.value) == "torch.empty_like"
                                 and a.value.args and _norm(_code(a.value.args[0].value)) == _norm(dst)):
                continue
            p_out = next((p for p in k.params if isinstance(out_arg := site.arg_for(k, p), cst.Name)
                          and out_arg.value == buf), None)
            p_in = next((p for p in k.params
                         if (x := site.arg_for(k, p)) is not None and _norm(_code(x)) == _norm(dst)), None)
            if p_out is None or p_in is None:
                continue
            return {"in": p_in, "out": p_out, "buf": buf, "dst": dst, "assign": a, "copy": n}
        return ["no <buffer> = torch.empty_like(x) passed to the kernel beside x and copied back by x.copy_(<buffer>) "
                "(the in-place form)"]

    def _coverage(self, t: Target, fn: cst.FunctionDef, kn: _Kernel, p: str, buf: str, src: str, offset: str,
                  mask: str) -> list[str]:
        """Reasons the launch (in ``fn``) is not shown to write every element of the fresh output."""
        site, k = t.sites[0], t.kernel
        tensors = {_norm(src), buf}
        elems = t.launches[0].grid_elements or []

        def host(param: str) -> str | None:
            a = site.arg_for(k, param)
            if a is None:
                return None
            if isinstance(a, cst.Name) and (d := _assign_of(t, a.value)) is not None:
                return _norm(_code(d.value))
            return _norm(_code(a))

        def bound(name: str) -> cst.BaseExpression | None:
            return kn.one(name)

        # flat: offs = pid * BLOCK + tl.arange(0, BLOCK); mask offs < n
        d = bound(offset) if offset.isidentifier() else None
        if d is not None:
            terms = _terms(d)
            ar = [x for x in terms if isinstance(x, cst.Call) and call_name(x) == "tl.arange"]
            rest = [x for x in terms if x not in ar]
            blk = arg_value(ar[0], "end", 1) if len(ar) == 1 else None
            if (isinstance(blk, cst.Name) and len(rest) == 1 and isinstance(rest[0], cst.BinaryOperation)
                    and isinstance(rest[0].operator, cst.Multiply) and _norm(_code(rest[0].right)) == blk.value
                    and self._is_pid0(kn, rest[0].left) and mask.startswith(f"{offset}<")):
                n = mask.split("<", 1)[1]
                nh, bh = host(n) if n in k.params else None, host(blk.value)
                if nh is None or not any(nh == f"{x}.numel()" for x in tensors):
                    return [f"the launch does not pass {n} as the numel of {buf} "
                            "(coverage of the fresh output unproven)"]
                if bh is None:  # a defaulted block the launch leaves out, or a global: the grid's divisor is unread
                    return [f"the launch does not pass {blk.value} (coverage of the fresh output unproven)"]
                g = _norm(elems[0]) if len(elems) == 1 else ""
                arg_n = _norm(_code(launch_arg(t, n)))  # passed: host(n) read it
                arg_b = _norm(_code(launch_arg(t, blk.value)))  # passed: host(blk) read it
                if g not in {f"triton.cdiv({a},{b})" for a in (arg_n, nh) for b in (arg_b, bh)}:
                    return [f"grid {elems} is not (triton.cdiv(n, BLOCK),) over the numel: coverage unproven"]
                return []
            return ["the offset is not pid * BLOCK + tl.arange(0, BLOCK) with mask offs < n (flat form)"]
        # rows: row * stride + cols, cols = tl.arange(0, BLOCK), mask cols < n_cols
        parts = offset.split("+")
        cols = [x for x in parts if x.isidentifier()]
        prod = [x for x in parts if "*" in x]
        if len(parts) != 2 or len(cols) != 1 or len(prod) != 1:
            return [f"offset {offset} is neither the flat form (offs) nor the row form (row * stride + cols)"]
        c = bound(cols[0])
        row, stride = prod[0].split("*", 1)
        start = arg_value(c, "start", 0) if isinstance(c, cst.Call) else None
        end_node = arg_value(c, "end", 1) if isinstance(c, cst.Call) else None
        if not (isinstance(c, cst.Call) and call_name(c) == "tl.arange" and isinstance(start, cst.Integer)
                and start.value == "0" and end_node is not None):
            return [f"{cols[0]} is not tl.arange(0, BLOCK)"]
        end = _code(end_node)
        if not self._is_pid0(kn, cst.parse_expression(row)) or "*" in stride:
            return [f"row {row} is not tl.program_id(0) (row form)"]
        if not mask.startswith(f"{cols[0]}<") or mask.split("<", 1)[1] not in k.params:
            return [f"mask {mask} is not {cols[0]} < n_cols"]
        ncols = mask.split("<", 1)[1]
        shape = [tg for a in walk(fn) if isinstance(a, cst.Assign) and len(a.targets) == 1
                 and isinstance(tg := a.targets[0].target, cst.Tuple) and len(tg.elements) == 2
                 and isinstance(a.value, cst.Attribute) and a.value.attr.value == "shape"
                 and _norm(_code(a.value.value)) in tensors]
        if len(shape) != 1:
            return [f"the launcher does not unpack R, C = {src}.shape (2-D rows, coverage unproven)"]
        r, cc = (_code(e.value) for e in shape[0].elements)
        nc = _norm(_code(a_nc)) if (a_nc := site.arg_for(k, ncols)) is not None else None
        out = []
        if [_norm(e) for e in elems] != [r]:
            out.append(f"grid {elems} is not ({r},), one program per row")
        if nc != cc:
            out.append(f"{ncols} is not passed {cc}")
        if host(end) != f"triton.next_power_of_2({cc})":
            out.append(f"{end} is not triton.next_power_of_2({cc}) (a row might not be covered)")
        if stride not in k.params or host(stride) not in {cc, f"{buf}.stride(0)", f"{_norm(src)}.stride(0)"}:
            out.append(f"the row stride {stride} is not {cc} or {buf}.stride(0)")
        return out

    @staticmethod
    def _is_pid0(kn: _Kernel, e: cst.BaseExpression) -> bool:
        if isinstance(e, cst.Call) and call_name(e) == "tl.program_id":
            return _code(arg_value(e, "axis", 0) or cst.Integer("0")) == "0"
        if isinstance(e, cst.Name):
            d = kn.one(e.value)
            return d is not None and InplaceOutput._is_pid0(kn, d)
        return False

    def _plan(self, t: Target) -> dict[str, Any] | list[str]:
        out = single_site_reasons(t)
        if out:
            return out
        kn = _Kernel(t)
        fn = t.sites[0].function
        f = self._fresh(t)
        if isinstance(f, dict):
            assert fn is not None  # _fresh refuses a launch outside a function
            p, buf = f["param"], f["buf"]
            reasons, offset, mask = _rmw_reasons(t, kn, p, p)
            if p in t.facts.rebound_params:
                reasons.append(f"{p} is rebound in the kernel")
            site_at = _statement_index(fn, t.sites[0].call)
            between = [s for s in body_of(fn)[_statement_index(fn, f["assign"]) + 1:site_at]]
            if any(not _meta_only(fn, buf, s) for s in between):
                reasons.append(f"{buf} is used between the clone and the launch (not only its size or strides)")
            whole = [a for a in t.sites[0].call.args if isinstance(a.value, cst.Name) and a.value.value == buf]
            if len(whole) != 1:
                reasons.append(f"{buf} is passed to the launch {len(whole)} times")
            src = _norm(_code(f["src"]))
            if any(isinstance(n, cst.Attribute) and n.attr.value in ("stride", "is_contiguous")
                   and _norm(_code(n.value)) == src for n in walk(t.sites[0].call)):
                reasons.append(f"a launch argument reads {src}'s strides (the input is made contiguous)")
            if not reasons:
                assert offset is not None and mask is not None  # _rmw_reasons gives both when it finds no reason
                reasons += self._coverage(t, fn, kn, p, buf, src, offset, mask)
            return {"mode": "fresh", **f, "kernel": kn} if not reasons else [f"fresh-output form: {r}" for r in reasons]
        g = self._inplace(t)
        if isinstance(g, dict):
            assert fn is not None  # _inplace refuses a launch outside a function
            reasons, _, _ = _rmw_reasons(t, kn, g["in"], g["out"])
            uses = _uses(fn, g["buf"])
            copy_stmt = t.tree.statement_of(fn, g["copy"])
            whole = [a for a in t.sites[0].call.args if isinstance(a.value, cst.Name) and a.value.value == g["buf"]]
            known = {id(g["assign"].targets[0].target), id(g["copy"].args[0].value), *(id(a.value) for a in whole)}
            meta = {id(n.value) for n in walk(fn) if isinstance(n, cst.Attribute) and n.attr.value in _META}
            if any(id(u) not in known and id(u) not in meta for u in uses):
                reasons.append(f"{g['buf']} is used other than by the launch, its size and the copy back")
            if not isinstance(copy_stmt, cst.SimpleStatementLine) or len(copy_stmt.body) != 1:
                reasons.append("the copy back is not a statement of its own")
            elif _statement_index(fn, copy_stmt) < _statement_index(fn, t.sites[0].call):
                reasons.append("the copy back comes before the launch")
            if len(whole) != 1:
                reasons.append(f"{g['buf']} is passed to the launch {len(whole)} times")
            if reasons:
                return [f"in-place form: {r}" for r in reasons]
            return {"mode": "inplace", **g, "copy_stmt": copy_stmt}
        return [*f, *g]

    # ---------------------------------------------------------------------------------------------- protocol
    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        plan = self._plan(t)
        return plan if isinstance(plan, list) else []

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        plan = self._plan(t)
        assert isinstance(plan, dict)
        return [{"mode": plan["mode"]}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        plan = self._plan(t)
        assert isinstance(plan, dict)
        tree, k, site = t.tree, t.kernel, t.sites[0]
        if plan["mode"] == "fresh":
            p, buf, src = plan["param"], plan["buf"], _code(plan["src"])
            new = fresh(t, f"{p}_out")
            tree.replace(plan["assign"].value, f"torch.empty_like({src}, memory_format=torch.contiguous_format)")
            tree.replace(launch_arg(t, p), f"{src}.contiguous()")  # _fresh: the launch passes the clone for p
            tree.add_keyword(site.call, new, buf)
            tree.add_params(k.node, [new])
            kn: _Kernel = plan["kernel"]
            for a in t.facts.accesses:
                ptr = arg_value(a.node, "pointer", 0)
                if a.op != "tl.store" or (split := kn.split(ptr)) is None or split[0] != p:
                    continue
                terms = kn.terms(ptr)
                assert ptr is not None and terms is not None  # split() found them
                rest = terms[1:]
                tree.replace(ptr, " + ".join([new, *(_code(x) for x in rest)]))
            return (f"{k.name}: {buf} = {src}.clone() written in place -> {buf} = torch.empty_like({src}); the kernel "
                    f"reads {src} through {p} and stores to {new} (saves the clone's read + write pass)")
        dst, buf = plan["dst"], plan["buf"]
        fn = site.function
        assert fn is not None  # the in-place plan's launch is inside a function (_inplace)
        for u in _uses(fn, buf):
            if u is not plan["assign"].targets[0].target and u is not plan["copy"].args[0].value:
                tree.replace(u, dst)
        tree.remove(t.tree.enclosing_statement(fn, plan["assign"]))  # _assign_of found it in fn
        tree.remove(plan["copy_stmt"])
        return (f"{k.name}: fresh {buf} = torch.empty_like({dst}) copied back by {dst}.copy_({buf}) -> the kernel "
                f"writes {dst} in place (saves the buffer and the copy's read + write pass)")
