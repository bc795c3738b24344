"""The analysis behind ``kernel_chain_fusion``: one window of consecutive launches, what it forwards, what it refuses.

``Chain`` takes a window of launches over one grid (``KernelChainFusion`` finds them) and checks its kernels
and launches (each kernel launched from one place, not autotuned, no early return, the same launch options,
nothing in between touching what they pass), pairs every buffer one kernel stores with the later kernels' loads at
the same per-program address (``Forward``; anything else is refused with its reason), decides which stores and
allocations are scratch, and names the fused kernel's parameters and renamed locals. ``kernel_chain_emit`` writes
the source from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import cast

import libcst as cst

from optimizer.kernel.analyze import kernel_facts
from optimizer.kernel.flow import ATOMICS, NEW_ALLOC, is_allocation, var_names
from optimizer.kernel.model import KernelFacts
from optimizer.rewrite.tree import CstKernel, CstLaunch, Tree, arg_value, body_of, call_name, walk
from optimizer.rewrite.tree import expand_defs as _expand
from optimizer.rewrite.tree import node_code as _code
from optimizer.rewrite.tree import skip_ids as _skip_ids

__all__ = ["Access", "Chain", "Forward", "block_of", "bound_in", "grid_text", "launch_stmt", "norm_text", "var_names"]

_TL_DTYPES = {"float32": "tl.float32", "float": "tl.float32", "float16": "tl.float16", "half": "tl.float16",
              "bfloat16": "tl.bfloat16", "float64": "tl.float64", "double": "tl.float64", "int32": "tl.int32",
              "int": "tl.int32", "int64": "tl.int64", "long": "tl.int64", "int16": "tl.int16", "int8": "tl.int8",
              "uint8": "tl.uint8", "bool": "tl.int1"}
_MEMORY = {"tl.load", "tl.store"} | ATOMICS


def norm_text(text: str) -> str:
    """``text`` without whitespace (expressions compared as text)."""
    return re.sub(r"\s+", "", text)


def _slug(text: str) -> str:
    return re.sub(r"\W+", "_", text).strip("_") or "buf"


# ------------------------------------------------------------------------------------------------ name analysis
def bound_in(node: cst.CSTNode) -> set[str]:
    """Names assigned anywhere in ``node`` (assignments, augmented assignments, loop targets)."""
    out: set[str] = set()
    for n in walk(node):
        if isinstance(n, cst.Assign):
            for t in n.targets:
                out |= var_names(t.target)
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign)):
            out |= var_names(n.target)
        elif isinstance(n, cst.For):
            out |= var_names(n.target)
    return out


def _top_bound(stmt: cst.BaseStatement) -> set[str]:
    """Names a top-level simple statement binds (compound statements bind inside their block)."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return bound_in(stmt)
    return set()


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
        return body_of(self.kernel.node)


@dataclass
class Access:
    """One ``tl.load`` / ``tl.store`` / atomic of a chain kernel on a host buffer."""

    k: int  # index in the chain
    call: cst.Call
    op: str
    buffer: str  # host text of the base parameter
    param: str
    address: str | None  # canonical address text (None: not comparable)
    mask: str | None
    top: cst.SimpleStatementLine | None  # the top-level statement holding it when it is not inside a loop / branch
    pointer: cst.BaseExpression  # the call's pointer argument (an access without one refuses the chain)


@dataclass
class Forward:
    """A buffer one kernel stores and later kernels load at the same per-program address: kept in a register."""

    buffer: str
    writer: int
    store: Access
    loads: list[Access]
    drop_store: bool
    cast: str | None = None  # dtype text to cast the forwarded value to
    name: str = ""  # the forwarded variable (fused namespace)
    temp: bool = False  # bind the value to ``name`` at the store


def _single_defs(k: CstKernel) -> dict[str, cst.BaseExpression]:
    """Locals assigned exactly once in the kernel, by a top-level ``v = e`` statement."""
    counts: dict[str, int] = {}
    for n in walk(k.node.body):
        if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For)):
            names = {x for t in n.targets for x in var_names(t.target)} if isinstance(n, cst.Assign) else bound_in(n)
            for name in names:
                counts[name] = counts.get(name, 0) + 1
    out: dict[str, cst.BaseExpression] = {}
    for s in k.node.body.body:
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
        def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
            if id(original_node) in skip or original_node.value not in kern.host:
                return updated_node
            return cst.Name(f"HOST_{abs(hash(norm_text(kern.host[original_node.value])))}")

    # _Host replaces names by expressions only, so the visited expression stays one
    return norm_text(_code(cast(cst.BaseExpression, x.visit(_Host()))))


class _Reject(Exception):
    pass


def block_of(fn: cst.FunctionDef, stmt: cst.CSTNode) -> list[cst.BaseStatement] | None:
    """The statements of the block of ``fn`` that holds ``stmt`` (None: not a statement of a block)."""
    for n in walk(fn):
        body = getattr(n, "body", None)
        if isinstance(n, cst.IndentedBlock) and isinstance(body, (list, tuple)) and any(s is stmt for s in body):
            return list(body)
    return None


def launch_stmt(tree: Tree, stmt: cst.BaseStatement) -> CstLaunch | None:
    """The launch that ``stmt`` is, when it is a launch statement of its own (``k[grid](...)``)."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)):
        return None
    return next((s for s in tree.launches if s.call is stmt.body[0].value), None)


def grid_text(site: CstLaunch) -> str:
    """The launch's grid subscript as text without whitespace, compared between launches."""
    return norm_text(_code(site.call.func)[len(site.kernel):])  # "[(M,)]"


class Chain:
    """The analysis of one window of consecutive launches; ``reasons`` empty means it fuses."""

    def __init__(self, tree: Tree, fn: cst.FunctionDef, block: list[cst.BaseStatement], window: list[int]) -> None:
        self.tree, self.fn, self.block, self.window = tree, fn, block, window
        self.reasons: list[str] = []
        self.kernels: list[_Kernel] = []
        self.forwards: list[Forward] = []
        self.params: list[tuple[str, str, bool, bool]] = []  # (fused name, host text, constexpr, keyword)
        self.options: list[tuple[str, str]] = []
        try:
            self._analyse()
        except _Reject as exc:
            self.reasons.append(str(exc))

    # ---------------------------------------------------------------- checks
    def _analyse(self) -> None:
        tree = self.tree
        found = [launch_stmt(tree, self.block[i]) for i in self.window]
        sites = [s for s in found if s is not None]
        assert len(sites) == len(found)
        names = [s.kernel for s in sites]
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
            opts.append(sorted((a.keyword.value, norm_text(tree.code(a.value))) for a in s.call.args
                               if a.keyword is not None and a.keyword.value not in k.params))
            kern = _Kernel(s, k, f, host, kw)
            kern.defs = _single_defs(k)
            self.kernels.append(kern)
        if any(o != opts[0] for o in opts):
            raise _Reject(f"the launches pass different launch options ({'; '.join(str(dict(o)) for o in opts)})")
        self.options = [(n, self.tree.code(a.value)) for a in sites[0].call.args
                        if a.keyword is not None and (n := a.keyword.value) not in self.kernels[0].kernel.params]
        self._between()
        self._buffers()
        self._names()
        self._forwarding()

    def _between(self) -> None:
        """Statements between the launches must not touch what the earlier launches pass."""
        used: set[str] = set()
        for pos, i in enumerate(self.window):
            used |= var_names(self.block[i])
            if pos + 1 == len(self.window):
                break
            for s in self.block[i + 1:self.window[pos + 1]]:
                alloc = (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
                         and isinstance(s.body[0], cst.Assign) and is_allocation(s.body[0].value))
                touched = bound_in(s) if alloc else var_names(s)
                if touched & used:
                    raise _Reject(f"`{self.tree.code(s).splitlines()[0]}` between the launches touches "
                                  f"{', '.join(sorted(touched & used))}, which an earlier launch passes")

    def _accesses(self, ki: int) -> list[Access]:
        kern = self.kernels[ki]
        top_of: dict[int, cst.SimpleStatementLine] = {}
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
            out.append(Access(ki, n, op, norm_text(kern.host[bases[0]]), bases[0], _canon(ptr, kern),
                               _canon(mask, kern) if mask is not None else None, top_of.get(id(n)), ptr))
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
            if st.top is None or not (len(st.top.body) == 1 and isinstance(st.top.body[0], cst.Expr)
                                      and st.top.body[0].value is st.call):
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
                    here, there = (self.tree.code(x.pointer) for x in (a, st))
                    raise _Reject(f"{rname} reads {buf} at `{here}`, not where {wname} wrote it (`{there}`): "
                                  "another program's value")
                if st.mask is not None and a.mask != st.mask:
                    raise _Reject(f"{rname} reads {buf} under a mask other than the one {wname} stored it with")
                loads.append(a)
            self.forwards.append(Forward(buf, wi, st, loads, drop_store=self._unused_after(buf)))

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

    def allocation(self, buf: str) -> cst.SimpleStatementLine | None:
        """The ``buf = torch.empty/zeros/..._like(...)`` that runs before the chain (None: none found)."""
        for s in self._preceding():
            if (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Assign)
                    and len(s.body[0].targets) == 1 and isinstance(s.body[0].targets[0].target, cst.Name)
                    and s.body[0].targets[0].target.value == buf and is_allocation(s.body[0].value)):
                return s
        return None

    def mentions(self, buf: str) -> list[cst.Name]:
        """Host mentions of ``buf`` outside the chain's launches and its own allocation."""
        alloc = self.allocation(buf)
        inside = {id(n) for i in self.window for n in walk(self.block[i])} | (
            {id(n) for n in walk(alloc)} if alloc is not None else set())
        return [n for n in walk(self.fn.body) if isinstance(n, cst.Name) and n.value == buf and id(n) not in inside]

    def template_uses(self, buf: str) -> dict[int, str]:
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
        if not re.fullmatch(r"[A-Za-z_]\w*", buf) or self.allocation(buf) is None:
            return False
        templates = self.template_uses(buf)
        return all(id(n) in templates for n in self.mentions(buf))

    def _dtype(self, buf: str, depth: int = 0) -> str | None:
        alloc = self.allocation(buf) if re.fullmatch(r"[A-Za-z_]\w*", buf) else None
        if alloc is None or depth > 8:
            return None
        text = self.tree.code(alloc)
        m = re.search(r"dtype\s*=\s*torch\.(\w+)", text)
        if m:
            return _TL_DTYPES.get(m.group(1))
        assign = alloc.body[0]
        assert isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call)  # allocation(): buf = <call>
        call = assign.value
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in NEW_ALLOC:
            return None  # ``x.new_empty(n)``: the dtype of x, unknown here (the store casts to its pointer's type)
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
            own = var_names(k.node.body) | set(k.params)
            bound = bound_in(k.node.body)
            free = own - bound - set(k.params)
            for p in k.params:
                host, const = norm_text(kern.host[p]), p in k.constexprs
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
            out |= var_names(k.node.body) - bound_in(k.node.body) - set(k.params)
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

    def _rebinds_after(self, fw: Forward, value: cst.BaseExpression) -> bool:
        """Is the stored name rebound between the store and the last forwarded read (self-copies excepted)?"""
        if not isinstance(value, cst.Name):
            return True
        wk = self.kernels[fw.writer]
        target = wk.rename.get(value.value, value.value)
        last = max(a.k for a in fw.loads)
        copies = {id(a.top) for a in fw.loads if self.self_copy(a, target)}
        for ki in range(fw.writer, last + 1):
            kern = self.kernels[ki]
            stmts = kern.body
            if ki == fw.writer:
                stmts = stmts[[id(s) for s in stmts].index(id(fw.store.top)) + 1:]
            for s in stmts:
                if id(s) in copies:
                    continue
                if target in {kern.rename.get(n, n) for n in bound_in(s)}:
                    return True
        return False

    def self_copy(self, a: Access, name: str) -> bool:
        """``name = tl.load(<forwarded>)`` with no mask-dependent ``other``: the statement can go."""
        s = a.top
        if s is None or len(s.body) != 1 or not isinstance(s.body[0], cst.Assign):
            return False
        asg = s.body[0]
        kern = self.kernels[a.k]
        return (asg.value is a.call and len(asg.targets) == 1 and isinstance(asg.targets[0].target, cst.Name)
                and kern.rename.get(asg.targets[0].target.value, asg.targets[0].target.value) == name
                and arg_value(a.call, "other", 2) is None)
