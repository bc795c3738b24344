"""``kernel_chain_fusion``: consecutive launches over the same grid -> one kernel (card ``kernel-chain-fusion``).

A first translation often splits one row-wise op into kernels that pass per-program values through global
buffers (naive softmax: ``row_max_kernel`` stores ``m`` at ``max_ptr + row``, ``row_sum_exp_kernel`` and
``normalize_kernel`` load it back at ``max_ptr + row``). Each kernel runs one program per row over the same grid,
so program ``p`` of a later kernel reads only what program ``p`` of an earlier one wrote: the launches fuse into
one kernel whose body is the bodies in order, and the value stays in a register. Before::

    row_max_kernel[(M,)](x, row_max, N, BLOCK=128)
    row_sum_exp_kernel[(M,)](x, row_max, row_sum, N, BLOCK=128)
    normalize_kernel[(M,)](x, row_max, row_sum, y, N, BLOCK=128)

After::

    fused_row_max_row_sum_exp_normalize_kernel[(M,)](x, N, y, BLOCK=128)   # row_max / row_sum allocations gone

    # kernel: row = tl.program_id(0); <max loop> ; <sum-of-exp loop using m> ; <normalize loop using m, s>

The result is one kernel with several passes over the row, which the one-kernel transforms take next
(``single_pass_fusion`` fuses the max and sum-of-exp loops into one online pass).

Domain, each refused with its reason:

- consecutive launch statements (``k[grid](...)``) of one block of one host function, with textually identical
  grids; the statements between them neither rebind nor mention anything the earlier launches pass (allocations
  of new buffers excepted); each kernel launched from this one place only, not autotuned / no heuristics, no
  ``return``, no parameter defaults, no ``*args``, and the same launch options (``num_warps``, ...);
- every buffer (a host argument, by its text) that one kernel of the chain writes is touched by the other kernels
  only as a *forwardable* read: a ``tl.load`` in a later kernel, in a top-level statement (not inside a loop or
  branch), at the same per-program address as the write -- the addresses are compared after substituting the
  kernels' single-assignment locals, the program id and the host text of every parameter, so ``max_ptr + row``
  with ``row = tl.program_id(0)`` matches in both kernels, and so does an element-wise block ``h_ptr + offs`` with
  ``offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)`` and the same BLOCK. The write is one top-level
  ``tl.store`` whose address depends on the program id; the read's mask is the write's (or the write is
  unmasked). Refused: a read at another location (another row, a scan carry, a second pass over every partial,
  which needs a grid-wide barrier), a read before the write, two writers, atomics on a shared buffer, writes or
  reads inside loops, and host arguments that may alias a written buffer (``T`` and ``T[1:]``).

The program-id mapping matters only through those addresses: kernels that share no written buffer may map
program ids differently (each program runs every body for its own id, as the separate launches did).

Rewrite: one ``@triton.jit`` kernel (it replaces the first kernel; the others are removed when nothing else names
them) whose parameters are the union of the kernels' (one parameter per distinct host argument, renamed where
names clash), whose body is the bodies in order (``v = tl.program_id(a)`` once; a name first bound inside a loop
of a later kernel that an earlier kernel binds at the top level is renamed, since Triton would carry it around the
loop); each forwarded load becomes the stored value (``tl.where(mask, value, other)`` when the load has
``other=``), bound to a fresh name at the store when the stored expression is not a name left unchanged until
the read. A store is dropped when the host does not name the buffer outside its allocation and the chain (or names
it only as the template of another allocation, ``torch.empty_like(buf)``): scratch. The allocation is the ``buf =
torch.empty/zeros/..._like(...)`` that runs before the chain, in its block or in a block around it (a chain inside
a host loop over scratch allocated once before the loop: each iteration reads only what it just wrote, so nothing
crosses iterations); its parameter goes when nothing else reads it, and its allocation with it when no remaining
allocation takes it as a template. A value bound for a buffer of known dtype other than float32 (an explicit
``dtype=``, or followed through ``torch.empty_like``) is cast to it (``.to(tl.bfloat16)``); of unknown dtype
(``torch.empty_like`` of an argument), to the buffer's element type (``.to(p.dtype.element_ty)``, the parameter
kept); for a float32 buffer it is forwarded as it is (the round trip would only have widened it). One launch at the
last launch's place, the earlier launch statements removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from optimizer.recipes.base import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.facts import ATOMICS, TORCH_ALLOC, KernelFacts, kernel_facts
from optimizer.rewrite.tree import CstKernel, CstLaunch, Tree, arg_value, call_name, walk
from optimizer.rewrite.tree import expand_defs as _expand
from optimizer.rewrite.tree import node_code as _code
from optimizer.rewrite.tree import skip_ids as _skip_ids

__all__ = ["KernelChainFusion"]

_TL_DTYPES = {"float32": "tl.float32", "float": "tl.float32", "float16": "tl.float16", "half": "tl.float16",
              "bfloat16": "tl.bfloat16", "float64": "tl.float64", "double": "tl.float64", "int32": "tl.int32",
              "int": "tl.int32", "int64": "tl.int64", "long": "tl.int64", "int16": "tl.int16", "int8": "tl.int8",
              "uint8": "tl.uint8", "bool": "tl.int1"}
_MEMORY = {"tl.load", "tl.store"} | ATOMICS


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text)


# ------------------------------------------------------------------------------------------------ name analysis
def _var_names(node: cst.CSTNode) -> set[str]:
    skip = _skip_ids(node)
    return {n.value for n in walk(node) if isinstance(n, cst.Name) and id(n) not in skip}


def _bound_in(node: cst.CSTNode) -> set[str]:
    """Names assigned anywhere in ``node`` (assignments, augmented assignments, loop targets)."""
    out: set[str] = set()
    for n in walk(node):
        if isinstance(n, cst.Assign):
            for t in n.targets:
                out |= _var_names(t.target)
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign)):
            out |= _var_names(n.target)
        elif isinstance(n, cst.For):
            out |= _var_names(n.target)
    return out


def _top_bound(stmt: cst.BaseStatement) -> set[str]:
    """Names a top-level simple statement binds (compound statements bind inside their block)."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return _bound_in(stmt)
    return set()


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

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        updated_node = super().on_leave(original_node, updated_node)  # type: ignore[assignment]
        fn = self.exprs.get(id(original_node)) or self.stmts.get(id(original_node))
        return fn(updated_node) if fn is not None else updated_node


# ------------------------------------------------------------------------------------------------ the plan
@dataclass
class _Kernel:
    launch: CstLaunch
    kernel: CstKernel
    facts: KernelFacts
    host: dict[str, str]  # parameter -> host argument text
    keyword: dict[str, bool]  # parameter passed by keyword
    defs: dict[str, cst.BaseExpression] = field(default_factory=dict)  # single top-level assignments
    rename: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.kernel.name

    @property
    def body(self) -> list[cst.BaseStatement]:
        return list(self.kernel.node.body.body)  # type: ignore[attr-defined]


@dataclass
class _Access:
    k: int  # index in the chain
    call: cst.Call
    op: str
    buffer: str  # host text of the base parameter
    param: str
    address: str | None  # canonical address text (None: not comparable)
    mask: str | None
    top: cst.BaseStatement | None  # the top-level statement holding it when it is not inside a loop / branch


@dataclass
class _Forward:
    buffer: str
    writer: int
    store: _Access
    loads: list[_Access]
    drop_store: bool
    cast: str | None = None  # dtype text to cast the forwarded value to
    name: str = ""  # the forwarded variable (fused namespace)
    temp: bool = False  # bind the value to ``name`` at the store


def _single_defs(k: CstKernel) -> dict[str, cst.BaseExpression]:
    """Locals assigned exactly once in the kernel, by a top-level ``v = e`` statement."""
    counts: dict[str, int] = {}
    for n in walk(k.node.body):
        if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For)):
            names = {x for t in n.targets for x in _var_names(t.target)} if isinstance(n, cst.Assign) else _bound_in(n)
            for name in names:
                counts[name] = counts.get(name, 0) + 1
    out: dict[str, cst.BaseExpression] = {}
    for s in k.node.body.body:  # type: ignore[attr-defined]
        if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Assign):
            a = s.body[0]
            if len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name):
                name = a.targets[0].target.value
                if counts.get(name) == 1 and name not in k.params:
                    out[name] = a.value
    return out


def _terms(e: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Add):
        return _terms(e.left) + _terms(e.right)
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Subtract):
        return _terms(e.left)
    return [e]


def _canon(e: cst.BaseExpression, kern: _Kernel) -> str:
    """Address text with locals expanded and every parameter replaced by its host argument."""
    x = _expand(e, kern.defs)
    skip = _skip_ids(x)

    class _Host(cst.CSTTransformer):
        def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:  # type: ignore[override]
            if id(original_node) in skip or original_node.value not in kern.host:
                return updated_node
            return cst.Name(f"HOST_{abs(hash(_norm(kern.host[original_node.value])))}")

    return _norm(_code(x.visit(_Host())))


class _Reject(Exception):
    pass


def _block_of(fn: cst.FunctionDef, stmt: cst.CSTNode) -> list[cst.BaseStatement] | None:
    for n in walk(fn):
        body = getattr(n, "body", None)
        if isinstance(n, cst.IndentedBlock) and isinstance(body, (list, tuple)) and any(s is stmt for s in body):
            return list(body)
    return None


def _launch_stmt(tree: Tree, stmt: cst.BaseStatement) -> CstLaunch | None:
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)):
        return None
    return next((s for s in tree.launches if s.call is stmt.body[0].value), None)


def _grid_text(site: CstLaunch) -> str:
    return _norm(_code(site.call.func)[len(site.kernel):])  # "[(M,)]"


class _Chain:
    """The analysis of one window of consecutive launches; ``reasons`` empty means it fuses."""

    def __init__(self, tree: Tree, fn: cst.FunctionDef, block: list[cst.BaseStatement], window: list[int]) -> None:
        self.tree, self.fn, self.block, self.window = tree, fn, block, window
        self.reasons: list[str] = []
        self.kernels: list[_Kernel] = []
        self.forwards: list[_Forward] = []
        self.params: list[tuple[str, str, bool, bool]] = []  # (fused name, host text, constexpr, keyword)
        self.options: list[tuple[str, str]] = []
        try:
            self._analyse()
        except _Reject as exc:
            self.reasons.append(str(exc))

    # ---------------------------------------------------------------- checks
    def _analyse(self) -> None:
        tree = self.tree
        sites = [_launch_stmt(tree, self.block[i]) for i in self.window]
        assert all(s is not None for s in sites)
        names = [s.kernel for s in sites]  # type: ignore[union-attr]
        if len(set(names)) != len(names):
            raise _Reject(f"a kernel is launched twice in the chain ({', '.join(names)})")
        opts: list[list[tuple[str, str]]] = []
        for s in sites:
            assert s is not None
            k = tree.kernels[s.kernel]
            if len(tree.launches_of(k.name)) != 1:
                raise _Reject(f"{k.name} is launched from {len(tree.launches_of(k.name))} places")
            if k.autotuned or k.heuristics:
                raise _Reject(f"{k.name} is autotuned / has heuristics (its meta-parameters are not the launch's)")
            f = kernel_facts(tree, k)
            if f.early_returns:
                raise _Reject(f"{k.name} returns early (the next body would be skipped)")
            ps = k.node.params
            if any(p.default is not None for p in ps.params) or isinstance(ps.star_arg, cst.Param) \
                    or ps.star_kwarg is not None or ps.kwonly_params:
                raise _Reject(f"{k.name} has parameter defaults, *args or keyword-only parameters")
            if any(a.star for a in s.call.args):
                raise _Reject(f"the launch of {k.name} passes *args / **kwargs")
            host, kw = {}, {}
            for p in k.params:
                a = s.arg_for(k, p)
                if a is None:
                    raise _Reject(f"the launch of {k.name} does not pass {p}")
                host[p] = tree.code(a)
                kw[p] = any(x.keyword is not None and x.keyword.value == p for x in s.call.args)
            opts.append(sorted((a.keyword.value, _norm(tree.code(a.value))) for a in s.call.args
                               if a.keyword is not None and a.keyword.value not in k.params))
            kern = _Kernel(s, k, f, host, kw)
            kern.defs = _single_defs(k)
            self.kernels.append(kern)
        if any(o != opts[0] for o in opts):
            raise _Reject(f"the launches pass different launch options ({'; '.join(str(dict(o)) for o in opts)})")
        self.options = [(n, self.tree.code(a.value)) for a in sites[0].call.args  # type: ignore[union-attr]
                        if a.keyword is not None and (n := a.keyword.value) not in self.kernels[0].kernel.params]
        self._between()
        self._buffers()
        self._names()
        self._forwarding()

    def _between(self) -> None:
        """Statements between the launches must not touch what the earlier launches pass."""
        used: set[str] = set()
        for pos, i in enumerate(self.window):
            used |= _var_names(self.block[i])
            if pos + 1 == len(self.window):
                break
            for s in self.block[i + 1:self.window[pos + 1]]:
                alloc = (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
                         and isinstance(s.body[0], cst.Assign) and isinstance(s.body[0].value, cst.Call)
                         and call_name(s.body[0].value) in TORCH_ALLOC)
                touched = _bound_in(s) if alloc else _var_names(s)
                if touched & used:
                    raise _Reject(f"`{self.tree.code(s).splitlines()[0]}` between the launches touches "
                                  f"{', '.join(sorted(touched & used))}, which an earlier launch passes")

    def _accesses(self, ki: int) -> list[_Access]:
        kern = self.kernels[ki]
        top_of: dict[int, cst.BaseStatement] = {}
        for s in kern.body:
            if isinstance(s, cst.SimpleStatementLine):
                for n in walk(s):
                    top_of[id(n)] = s
        out = []
        for n in walk(kern.kernel.node.body):
            if not (isinstance(n, cst.Call) and call_name(n) in _MEMORY):
                continue
            op = call_name(n)
            ptr = arg_value(n, "pointer", 0)
            if ptr is None:
                raise _Reject(f"{kern.name}: {op} without a pointer argument")
            bases = [t.value for t in _terms(_expand(ptr, kern.defs))
                     if isinstance(t, cst.Name) and t.value in kern.host]
            if len(bases) != 1:
                raise _Reject(f"{kern.name}: cannot tell which buffer `{self.tree.code(ptr)}` addresses")
            mask = arg_value(n, "mask", 1 if op == "tl.load" else 2)
            out.append(_Access(ki, n, op, _norm(kern.host[bases[0]]), bases[0], _canon(ptr, kern),
                               _canon(mask, kern) if mask is not None else None, top_of.get(id(n))))
        return out

    def _buffers(self) -> None:
        acc = [a for i in range(len(self.kernels)) for a in self._accesses(i)]
        written = {a.buffer for a in acc if a.op != "tl.load"}
        for w in sorted(written):  # host texts that may name the same memory: T and T[1:], T.view(-1)
            root = re.match(r"[A-Za-z_][A-Za-z_0-9.]*", w)
            others = {a.buffer for a in acc
                      if a.buffer != w and root and re.match(rf"{re.escape(root.group(0))}\b", a.buffer)}
            if others:
                raise _Reject(f"{w} is written and {', '.join(sorted(others))} may alias it")
        for buf in sorted(written):
            mine = [a for a in acc if a.buffer == buf]
            if len({a.k for a in mine}) < 2:
                continue  # touched by one kernel only: its own business
            writers = sorted({a.k for a in mine if a.op != "tl.load"})
            if len(writers) > 1:
                raise _Reject(f"{buf} is written by {' and '.join(self.kernels[i].name for i in writers)}")
            wi = writers[0]
            wname = self.kernels[wi].name
            own = [a for a in mine if a.k == wi]
            if len(own) != 1 or own[0].op != "tl.store":
                raise _Reject(f"{wname} accesses {buf} more than once or atomically; only one plain store can be "
                              "forwarded")
            st = own[0]
            if st.top is None or not (len(st.top.body) == 1 and isinstance(st.top.body[0], cst.Expr)  # type: ignore[attr-defined]
                                      and st.top.body[0].value is st.call):  # type: ignore[attr-defined]
                raise _Reject(f"{wname} stores {buf} inside a loop or branch (the value cannot be forwarded)")
            if st.address is None or "tl.program_id" not in st.address:
                raise _Reject(f"{wname} stores {buf} at an address that does not depend on the program id "
                              "(every program writes it: a cross-program value)")
            loads = []
            for a in mine:
                if a.k == wi:
                    continue
                rname = self.kernels[a.k].name
                if a.k < wi:
                    raise _Reject(f"{rname} reads {buf} before {wname} writes it")
                if a.op != "tl.load":
                    raise _Reject(f"{rname} writes {buf} too")
                if a.top is None:
                    raise _Reject(f"{rname} reads {buf} inside a loop or branch (a per-iteration location)")
                if a.address != st.address:
                    here, there = (self.tree.code(arg_value(x.call, "pointer", 0)) for x in (a, st))  # type: ignore[arg-type]
                    raise _Reject(f"{rname} reads {buf} at `{here}`, not where {wname} wrote it (`{there}`): "
                                  "another program's value")
                if st.mask is not None and a.mask != st.mask:
                    raise _Reject(f"{rname} reads {buf} under a mask other than the one {wname} stored it with")
                loads.append(a)
            self.forwards.append(_Forward(buf, wi, st, loads, drop_store=self._unused_after(buf)))

    def _preceding(self) -> list[cst.BaseStatement]:
        """Statements that run before the chain: those before it in its block, then, for each loop or branch around
        that block (innermost first), those before it in the enclosing block (scratch allocated outside a loop)."""
        first = self.block[self.window[0]]
        out = list(self.block[:self.window[0]])
        outer: list[list[cst.BaseStatement]] = []
        for n in walk(self.fn):
            body = getattr(n, "body", None)
            if isinstance(n, cst.IndentedBlock) and isinstance(body, (list, tuple)):
                i = next((i for i, s in enumerate(body) if s is not first and any(m is first for m in walk(s))), None)
                if i is not None:
                    outer.append(list(body[:i]))
        return out + [s for before in reversed(outer) for s in before]

    def _allocation(self, buf: str) -> cst.SimpleStatementLine | None:
        for s in self._preceding():
            if (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Assign)
                    and len(s.body[0].targets) == 1 and isinstance(s.body[0].targets[0].target, cst.Name)
                    and s.body[0].targets[0].target.value == buf and isinstance(s.body[0].value, cst.Call)
                    and call_name(s.body[0].value) in TORCH_ALLOC):
                return s
        return None

    def _mentions(self, buf: str) -> list[cst.Name]:
        """Host mentions of ``buf`` outside the chain's launches and its own allocation."""
        alloc = self._allocation(buf)
        inside = {id(n) for i in self.window for n in walk(self.block[i])} | (
            {id(n) for n in walk(alloc)} if alloc is not None else set())
        return [n for n in walk(self.fn.body) if isinstance(n, cst.Name) and n.value == buf and id(n) not in inside]

    def _template_uses(self, buf: str) -> dict[int, str]:
        """Mentions of ``buf`` as the template of another allocation (``t2 = torch.empty_like(buf)``): metadata only,
        by id of the Name -> the allocated name."""
        out = {}
        for s in self._preceding():
            if (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Assign)
                    and isinstance(s.body[0].value, cst.Call) and call_name(s.body[0].value).endswith("_like")
                    and len(s.body[0].targets) == 1 and isinstance(s.body[0].targets[0].target, cst.Name)):
                first = arg_value(s.body[0].value, "input", 0)
                if isinstance(first, cst.Name) and first.value == buf:
                    out[id(first)] = s.body[0].targets[0].target.value
        return out

    def _unused_after(self, buf: str) -> bool:
        """The host reads ``buf`` nowhere but in the chain's launches (its allocation, and other allocations that only
        take its shape and dtype, aside): nothing needs its contents after the chain."""
        if not re.fullmatch(r"[A-Za-z_]\w*", buf) or self._allocation(buf) is None:
            return False
        templates = self._template_uses(buf)
        return all(id(n) in templates for n in self._mentions(buf))

    def _dtype(self, buf: str, depth: int = 0) -> str | None:
        alloc = self._allocation(buf) if re.fullmatch(r"[A-Za-z_]\w*", buf) else None
        if alloc is None or depth > 8:
            return None
        text = self.tree.code(alloc)
        m = re.search(r"dtype\s*=\s*torch\.(\w+)", text)
        if m:
            return _TL_DTYPES.get(m.group(1))
        call = alloc.body[0].value  # type: ignore[attr-defined]
        if not call_name(call).endswith("_like"):
            return "tl.float32"
        first = arg_value(call, "input", 0)
        return self._dtype(first.value, depth + 1) if isinstance(first, cst.Name) else None

    # ---------------------------------------------------------------- names
    def _names(self) -> None:
        module_names = {n.value for n in walk(self.tree.module) if isinstance(n, cst.Name)}
        taken = set(module_names)

        def fresh(base: str) -> str:
            name, i = base, 2
            while name in taken:
                name, i = f"{base}_{i}", i + 1
            taken.add(name)
            return name

        bound_before: set[str] = set()  # fused-namespace names bound by earlier kernels
        top_before: set[str] = set()
        fused: dict[str, tuple[str, bool]] = {}  # fused name -> (host text, constexpr)
        for ki, kern in enumerate(self.kernels):
            k = kern.kernel
            own = _var_names(k.node.body) | set(k.params)
            bound = _bound_in(k.node.body)
            free = own - bound - set(k.params)
            for p in k.params:
                host, const = _norm(kern.host[p]), p in k.constexprs
                share = next((f for f, v in fused.items() if v == (host, const) and f not in bound_before
                              and (f == p or f not in own)), None)
                if share is not None and not (p in bound and share != p):
                    kern.rename[p] = share
                    continue
                used = p in fused or p in bound_before or p in self._later_free(ki)
                name = fresh(f"{p}_{ki + 1}") if used else p
                taken.add(name)
                kern.rename[p] = name
                fused[name] = (host, const)
                self.params.append((name, kern.host[p], const, kern.keyword[p]))
            if clash := free & (bound_before | set(fused)):
                raise _Reject(f"{k.name} reads {', '.join(sorted(clash))}, which an earlier kernel binds or the fused "
                              "kernel takes as a parameter")
            top = set().union(*(_top_bound(s) for s in kern.body)) - set(k.params)
            for name in sorted((bound - top - set(k.params)) & top_before):
                kern.rename[name] = fresh(f"{name}_{ki + 1}")  # first bound in a loop here, at the top level before
            for name in sorted((bound - set(k.params)) & set(fused)):
                if name not in kern.rename:
                    kern.rename[name] = fresh(f"{name}_{ki + 1}")  # a local that would shadow a fused parameter
            bound_before |= {kern.rename.get(n, n) for n in bound}
            top_before |= {kern.rename.get(n, n) for n in top}

    def _later_free(self, ki: int) -> set[str]:
        out: set[str] = set()
        for kern in self.kernels[ki + 1:]:
            k = kern.kernel
            out |= _var_names(k.node.body) - _bound_in(k.node.body) - set(k.params)
        return out

    def _forwarding(self) -> None:
        taken = {n.value for n in walk(self.tree.module) if isinstance(n, cst.Name)} | {p[0] for p in self.params}
        for fw in self.forwards:
            wk = self.kernels[fw.writer]
            value = arg_value(fw.store.call, "value", 1)
            if value is None:
                raise _Reject(f"{wk.name}: tl.store of {fw.buffer} without a value")
            dt = self._dtype(fw.buffer)
            vtext = self.tree.code(value)
            base = wk.rename.get(fw.store.param, fw.store.param)
            if dt is None:
                fw.cast = None if re.search(rf"\.to\(\s*{re.escape(fw.store.param)}\.dtype\.element_ty\s*\)$", vtext) \
                    else f"{base}.dtype.element_ty"
            elif dt != "tl.float32" and not isinstance(value, (cst.Integer, cst.Float)):
                fw.cast = dt
            after = self._rebinds_after(fw, value)
            if isinstance(value, cst.Name) and not after:
                fw.name = wk.rename.get(value.value, value.value)
            else:
                base_name, i = f"{_slug(fw.buffer)}_fwd", 2
                name = base_name
                while name in taken:
                    name, i = f"{base_name}{i}", i + 1
                taken.add(name)
                fw.name, fw.temp = name, True

    def _rebinds_after(self, fw: _Forward, value: cst.BaseExpression) -> bool:
        """Is the stored name rebound between the store and the last forwarded read (self-copies excepted)?"""
        if not isinstance(value, cst.Name):
            return True
        wk = self.kernels[fw.writer]
        target = wk.rename.get(value.value, value.value)
        last = max(a.k for a in fw.loads)
        copies = {id(a.top) for a in fw.loads if self._self_copy(a, target)}
        for ki in range(fw.writer, last + 1):
            kern = self.kernels[ki]
            stmts = kern.body
            if ki == fw.writer:
                stmts = stmts[[id(s) for s in stmts].index(id(fw.store.top)) + 1:]
            for s in stmts:
                if id(s) in copies:
                    continue
                if target in {kern.rename.get(n, n) for n in _bound_in(s)}:
                    return True
        return False

    def _self_copy(self, a: _Access, name: str) -> bool:
        """``name = tl.load(<forwarded>)`` with no mask-dependent ``other``: the statement can go."""
        s = a.top
        if s is None or len(s.body) != 1 or not isinstance(s.body[0], cst.Assign):  # type: ignore[attr-defined]
            return False
        asg = s.body[0]  # type: ignore[attr-defined]
        kern = self.kernels[a.k]
        return (asg.value is a.call and len(asg.targets) == 1 and isinstance(asg.targets[0].target, cst.Name)
                and kern.rename.get(asg.targets[0].target.value, asg.targets[0].target.value) == name
                and arg_value(a.call, "other", 2) is None)


def _slug(text: str) -> str:
    return re.sub(r"\W+", "_", text).strip("_") or "buf"


# ------------------------------------------------------------------------------------------------ the transform
def _chains(t: Target) -> tuple[list[str], list[_Chain]]:
    """Candidate windows around the target's launch, longest first, and the reasons when there is none."""
    if len(t.sites) != 1:
        return [f"launched from {len(t.sites)} places (a chain needs each kernel launched once)"], []
    site = t.sites[0]
    if site.function is None or site.statement is None:
        return ["not launched from a function"], []
    block = _block_of(site.function, site.statement)
    if block is None:
        return ["the launch statement is not in a block"], []
    idx = [i for i, s in enumerate(block) if _launch_stmt(t.tree, s) is not None]
    me = next((i for i in idx if block[i] is site.statement), None)
    if me is None:
        return ["the launch is not a statement of its own (`kernel[grid](...)`)"], []
    grid = _grid_text(site)
    pos = idx.index(me)
    lo = hi = pos
    reasons = []
    while lo > 0 and _grid_text(_launch_stmt(t.tree, block[idx[lo - 1]])) == grid:  # type: ignore[arg-type]
        lo -= 1
    while hi + 1 < len(idx) and _grid_text(_launch_stmt(t.tree, block[idx[hi + 1]])) == grid:  # type: ignore[arg-type]
        hi += 1
    for j in (lo - 1, hi + 1):
        if 0 <= j < len(idx):
            other = _launch_stmt(t.tree, block[idx[j]])
            assert other is not None
            reasons.append(f"{other.kernel}{_grid_text(other)} and {t.kernel.name}{grid} launch different grids")
    if hi == lo:
        return reasons or ["no other launch in the same block"], []
    run = idx[lo:hi + 1]
    me_pos = run.index(me)
    windows = [run[s:s + n] for n in range(len(run), 1, -1) for s in range(0, len(run) - n + 1) if s <= me_pos < s + n]
    chains = []
    for w in windows:
        c = _Chain(t.tree, site.function, block, w)
        if not c.reasons:
            chains.append(c)
        elif w is windows[0]:
            reasons = [f"{'+'.join(k.name for k in c.kernels) or 'the chain'}: {r}" for r in c.reasons] + reasons
    return reasons, chains


class KernelChainFusion:
    """Consecutive launches over one grid whose kernels pass per-program values through buffers -> one kernel."""

    kind = "kernel_chain_fusion"
    card = "kernel-chain-fusion"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        reasons, chains = _chains(t)
        return [] if chains else reasons

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"kernels": [k.name for k in c.kernels]} for c in _chains(t)[1]][:1]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        chain = next(c for c in _chains(t)[1] if [k.name for k in c.kernels] == point["kernels"])
        return _rewrite(t.tree, chain)


def _rewrite(tree: Tree, c: _Chain) -> str:
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
                if c._self_copy(a, fw.name) and fw.cast is None:
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
        new_body = kern.kernel.node.body.visit(rw)
        part = [s for s in new_body.body if not _docstring(s)]  # type: ignore[attr-defined]
        if part:
            note = cst.EmptyLine(comment=cst.Comment(f"# from {kern.name}"))
            part[0] = part[0].with_changes(leading_lines=[*part[0].leading_lines, note])
        body += part
    used = set().union(*(_var_names(s) for s in body)) if body else set()
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
    passed = {_norm(h) for _n, h, _c, _kw in params}
    # allocations of dropped buffers go when nothing else names them (a template of another dropped one aside)
    removable = {fw.buffer for fw in c.forwards if fw.drop_store and fw.buffer not in passed}
    while True:
        blocked = {b for b in removable
                   if any(c._template_uses(b).get(id(n)) not in removable for n in c._mentions(b))}
        if not blocked:
            break
        removable -= blocked
    dropped_allocs = []
    for fw in c.forwards:
        alloc = c._allocation(fw.buffer) if fw.buffer in removable else None
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


def _fresh_module(tree: Tree, base: str) -> str:
    used = {n.value for n in walk(tree.module) if isinstance(n, cst.Name)}
    name, i = base, 2
    while name in used:
        name, i = f"{base}{i}", i + 1
    return name


def _docstring(s: cst.CSTNode) -> bool:
    return (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Expr)
            and isinstance(s.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _pid_stmt(s: cst.CSTNode) -> tuple[str, str] | None:
    if (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Assign)
            and len(s.body[0].targets) == 1 and isinstance(s.body[0].targets[0].target, cst.Name)
            and isinstance(s.body[0].value, cst.Call) and call_name(s.body[0].value) == "tl.program_id"):
        ax = arg_value(s.body[0].value, "axis", 0)
        return s.body[0].targets[0].target.value, _code(ax) if ax is not None else "?"
    return None


def _rebound_elsewhere(c: _Chain, var: str) -> bool:
    for kern in c.kernels:
        for s in kern.body:
            if _pid_stmt(s) is not None:
                continue
            if var in {kern.rename.get(n, n) for n in _bound_in(s)}:
                return True
    return False


def _value_arg(call: cst.Call) -> int | None:
    for i, a in enumerate(call.args):
        if (a.keyword is not None and a.keyword.value == "value") or (a.keyword is None and i == 1):
            return i
    return None


def _store_edit(fw: _Forward):
    def fn(line: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(line, cst.SimpleStatementLine)
        call = line.body[0].value  # type: ignore[attr-defined]
        i = _value_arg(call)
        assert i is not None
        value = _code(call.args[i].value)
        bind = cst.parse_statement(f"{fw.name} = {value}\n") if fw.temp else None
        if fw.drop_store:
            if bind is None:
                return cst.RemovalSentinel.REMOVE  # type: ignore[return-value]
            return bind.with_changes(leading_lines=line.leading_lines)
        if bind is None:
            return line
        args = list(call.args)
        args[i] = args[i].with_changes(value=cst.Name(fw.name))
        kept = line.with_changes(body=[line.body[0].with_changes(value=call.with_changes(args=args))], leading_lines=[])
        return cst.FlattenSentinel([bind.with_changes(leading_lines=line.leading_lines), kept])
    return fn


def _load_edit(fw: _Forward, a: _Access):
    def fn(call: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(call, cst.Call)
        v = fw.name if fw.cast is None else f"{fw.name}.to({fw.cast})"
        mask, other = arg_value(call, "mask", 1), arg_value(call, "other", 2)
        if mask is not None and other is not None:
            return cst.parse_expression(f"tl.where({_code(mask)}, {v}, {_code(other)})")
        return cst.parse_expression(v)
    return fn

