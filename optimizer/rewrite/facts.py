"""A small model of kernel facts, read off the syntax tree: what a structural transform's preconditions look at.

Per kernel: the program-id mapping (which variable holds which axis), block ranges (``tl.arange`` and whether
its size is a constexpr), memory accesses (loads, stores, atomics) with pointer and mask text and whether the
address depends on the program id, loops and the pointers advanced inside them, reductions, dots (input
precision, the constexprs that size their tiles), and div/mod on program-id-derived values. Per launch: the grid
expression, the meta-parameters passed, and the buffers the launching function allocates with torch.

The dependence on the program id is a forward data-flow over assignments (loops visited twice so that a value
carried around a loop is seen); it is conservative in the direction the transforms need (a value computed
from anything that depends on a program id depends on it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from optimizer.rewrite.tree import (
    CstKernel,
    CstLaunch,
    Tree,
    arg_value,
    call_name,
    kids,
    walk,
)

__all__ = ["Access", "Dot", "KernelFacts", "LaunchFacts", "Loop", "ModuleFacts", "bound_values", "kernel_facts",
           "module_facts", "pointer_bases"]

REDUCTIONS = {"tl.max", "tl.min", "tl.sum", "tl.argmax", "tl.argmin", "tl.xor_sum", "tl.reduce", "tl.cumsum",
              "tl.cumprod", "tl.associative_scan", "tl.sort"}
ATOMICS = {"tl.atomic_add", "tl.atomic_max", "tl.atomic_min", "tl.atomic_xchg", "tl.atomic_cas", "tl.atomic_and",
           "tl.atomic_or", "tl.atomic_xor"}
TORCH_ALLOC = {"torch.empty", "torch.zeros", "torch.ones", "torch.full", "torch.empty_like", "torch.zeros_like",
               "torch.ones_like", "torch.full_like", "torch.empty_strided"}


@dataclass
class Access:
    op: str  # tl.load, tl.store, tl.atomic_add, ...
    pointer: str
    mask: str | None
    pid_dependent: bool  # the address depends on a program id
    in_loop: bool
    node: cst.Call = field(repr=False)
    statement_value_used: bool = False  # an atomic whose returned old value is read


@dataclass
class Loop:
    header: str
    kind: str  # "for" | "while"
    advances: list[str]  # names rebound inside the loop with ``+=`` (pointers or offsets moved per iteration)
    loads: list[str]  # pointer expressions of the loads inside
    node: cst.BaseCompoundStatement = field(repr=False)


@dataclass
class Dot:
    precision: str | None  # the input_precision literal, "allow_tf32=False" -> "ieee", None = the default (tf32)
    tiles: list[str]  # constexprs sizing the operands' aranges (BLOCK_M, BLOCK_N, BLOCK_K when visible)
    in_loop: bool
    node: cst.Call = field(repr=False)


@dataclass
class KernelFacts:
    name: str
    params: list[str]
    constexprs: list[str]
    autotuned: bool
    pid: dict[int, str]  # axis -> variable assigned tl.program_id(axis)
    pid_calls: int  # how many tl.program_id calls
    aranges: list[tuple[str, str, bool]]  # (start, end, end is a constexpr or literal)
    accesses: list[Access]
    loops: list[Loop]
    reductions: list[tuple[str, str | None]]  # (function, axis text)
    dots: list[Dot]
    div_mod: list[str]  # texts of ``a // b`` / ``a % b`` whose left side depends on a program id
    branches: int  # if statements
    early_returns: int
    pid_dependent: set[str]  # names whose value depends on a program id
    rebound_params: list[str]  # parameters reassigned in the body (``x_ptr += row * stride``)

    @property
    def pid_dims(self) -> int:
        return max(self.pid, default=-1) + 1

    @property
    def atomics(self) -> list[Access]:
        return [a for a in self.accesses if a.op in ATOMICS]

    @property
    def same_address_atomics(self) -> list[Access]:
        return [a for a in self.atomics if not a.pid_dependent]

    def summary(self) -> list[str]:
        """One line per fact, for the LLM prompt and for humans."""
        pid = ", ".join(f"axis {a} -> {v}" for a, v in sorted(self.pid.items())) or "none"
        out = [f"kernel {self.name}({', '.join(self.params)}): program ids {pid}"
               + (" [autotuned]" if self.autotuned else "")]
        out.append("block ranges: " + (", ".join(f"tl.arange({s}, {e})" + ("" if c else " (size not constexpr)")
                                                 for s, e, c in self.aranges) or "none (one element per program)"))
        for a in self.accesses:
            where = "in a loop, " if a.in_loop else ""
            out.append(f"{a.op}({a.pointer}{', mask=' + a.mask if a.mask else ''}): {where}"
                       + ("per-program address" if a.pid_dependent else "same address in every program"))
        for lp in self.loops:
            out.append(f"{lp.kind} {lp.header}: advances {lp.advances or 'nothing'}; {len(lp.loads)} load(s)")
        if self.reductions:
            out.append("reductions: " + ", ".join(f"{f}(axis={ax})" for f, ax in self.reductions))
        for d in self.dots:
            out.append(f"tl.dot precision={d.precision or 'default (tf32)'} tiles={d.tiles or '?'}"
                       + (" in a K loop" if d.in_loop else ""))
        if self.div_mod:
            out.append("div/mod on program-id values: " + ", ".join(self.div_mod))
        if self.rebound_params:
            out.append("parameters rebound in the body: " + ", ".join(self.rebound_params))
        return out


@dataclass
class LaunchFacts:
    kernel: str
    grid: str
    grid_elements: list[str] | None  # None: not a tuple/list expression (a lambda over META, a helper call)
    grid_is_lambda: bool
    meta: dict[str, str]  # keyword arguments (constexprs and launch options) as text
    function: str | None
    buffers: dict[str, str]  # host variable -> allocation call text in the launching function

    def summary(self) -> str:
        return (f"launch {self.kernel}[{self.grid}] in {self.function or 'module'}: meta {self.meta or '{}'}; "
                f"buffers {list(self.buffers) or 'none'}")


@dataclass
class ModuleFacts:
    kernels: dict[str, KernelFacts]
    launches: list[LaunchFacts]

    def summary(self) -> list[str]:
        out = []
        for k in self.kernels.values():
            out += k.summary()
        out += [lf.summary() for lf in self.launches]
        return out


# ---------------------------------------------------------------------------------------------------- analysis
def _names(node: cst.CSTNode, skip: frozenset[int] = frozenset()) -> set[str]:
    """Names read in ``node``, not looking inside the nodes whose ids are in ``skip``."""
    out, stack = set(), [node]
    while stack:
        n = stack.pop()
        if id(n) in skip:
            continue
        if isinstance(n, cst.Name):
            out.add(n.value)
        stack.extend(kids(n))
    return out


def _targets(stmt: cst.CSTNode) -> tuple[list[str], cst.CSTNode | None]:
    if isinstance(stmt, cst.Assign):
        return [n for t in stmt.targets for n in _names(t.target)], stmt.value
    if isinstance(stmt, (cst.AugAssign, cst.AnnAssign)):
        return list(_names(stmt.target)), stmt.value
    if isinstance(stmt, cst.For):
        return list(_names(stmt.target)), stmt.iter
    return [], None


def dependents(body: cst.CSTNode, seeds: set[str], skip: frozenset[int] = frozenset()) -> set[str]:
    """Names whose value depends on ``seeds`` anywhere in ``body`` (repeated sweeps cover loop-carried values);
    subexpressions in ``skip`` (by node id) are treated as independent."""
    dep = set(seeds)
    small = [n for n in walk(body) if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For))]
    for _ in range(3):
        before = len(dep)
        for s in small:
            targets, value = _targets(s)
            if value is not None and (_names(value, skip) & dep or (isinstance(s, cst.AugAssign) and set(targets) & dep)):
                dep |= set(targets)
        if len(dep) == before:
            break
    return dep


def _axis(call: cst.Call) -> int | None:
    v = arg_value(call, "axis", 0)
    return int(v.value) if isinstance(v, cst.Integer) else None


def _inside_loops(k: cst.FunctionDef) -> set[int]:
    ids: set[int] = set()
    for n in walk(k):
        if isinstance(n, (cst.For, cst.While)):
            ids |= {id(m) for m in walk(n.body)}
    return ids


def kernel_facts(t: Tree, k: CstKernel) -> KernelFacts:
    node = k.node
    pid: dict[int, str] = {}
    pid_calls = 0
    for n in walk(node):
        if isinstance(n, cst.Call) and call_name(n) == "tl.program_id":
            pid_calls += 1
        if (isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name)
                and isinstance(n.value, cst.Call) and call_name(n.value) == "tl.program_id"):
            ax = _axis(n.value)
            if ax is not None:
                pid.setdefault(ax, n.targets[0].target.value)
    seeds = set(pid.values())
    dep = dependents(node.body, seeds)
    # an expression mentioning tl.program_id directly also depends on it
    in_loop = _inside_loops(node)

    def depends(e: cst.CSTNode | None) -> bool:
        if e is None:
            return False
        return bool(_names(e) & dep) or any(isinstance(m, cst.Call) and call_name(m) == "tl.program_id" for m in walk(e))

    aranges, accesses, loops, reductions, dots, div_mod = [], [], [], [], [], []
    value_used: set[int] = set()
    for n in walk(node):
        if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and isinstance(n.value, cst.Call):
            value_used.add(id(n.value))
    for n in walk(node):
        if isinstance(n, cst.Call):
            name = call_name(n)
            if name == "tl.arange":
                s, e = arg_value(n, "start", 0), arg_value(n, "end", 1)
                e_text = t.code(e) if e is not None else "?"
                const = isinstance(e, cst.Integer) or (isinstance(e, cst.Name) and e.value in k.constexprs)
                aranges.append((t.code(s) if s is not None else "?", e_text, const))
            elif name in ("tl.load", "tl.store") or name in ATOMICS:
                ptr = arg_value(n, "pointer", 0)
                mask = arg_value(n, "mask", 1 if name == "tl.load" else 2)
                accesses.append(Access(name, t.code(ptr) if ptr is not None else "?", t.code(mask) if mask is not None else None,
                                       depends(ptr), id(n) in in_loop, n, id(n) in value_used))
            elif name in REDUCTIONS:
                ax = arg_value(n, "axis", 1)
                reductions.append((name, t.code(ax) if ax is not None else None))
            elif name == "tl.dot":
                dots.append(Dot(_precision(t, n), _dot_tiles(t, k, n), id(n) in in_loop, n))
        elif isinstance(n, cst.BinaryOperation) and isinstance(n.operator, (cst.FloorDivide, cst.Modulo)):
            if depends(n.left):
                div_mod.append(t.code(n))
        elif isinstance(n, (cst.For, cst.While)):
            adv = sorted({tg for m in walk(n.body) if isinstance(m, cst.AugAssign) for tg in _names(m.target)})
            loads = [t.code(arg_value(m, "pointer", 0)) for m in walk(n.body)  # type: ignore[arg-type]
                     if isinstance(m, cst.Call) and call_name(m) == "tl.load" and arg_value(m, "pointer", 0) is not None]
            header = t.code(n.iter) if isinstance(n, cst.For) else t.code(n.test)
            loops.append(Loop(header, "for" if isinstance(n, cst.For) else "while", adv, loads, n))
    rebound = sorted({tg for n in walk(node.body) for tg in _targets(n)[0]
                      if isinstance(n, (cst.Assign, cst.AugAssign)) and tg in k.params})
    return KernelFacts(
        name=k.name, params=k.params, constexprs=k.constexprs, autotuned=k.autotuned, pid=pid, pid_calls=pid_calls,
        aranges=aranges, accesses=accesses, loops=loops, reductions=reductions, dots=dots, div_mod=div_mod,
        branches=sum(isinstance(n, cst.If) for n in walk(node.body)),
        early_returns=sum(isinstance(n, cst.Return) for n in walk(node.body)), pid_dependent=dep,
        rebound_params=rebound)


def _precision(t: Tree, call: cst.Call) -> str | None:
    p = arg_value(call, "input_precision")
    if isinstance(p, cst.SimpleString):
        return p.evaluated_value.lower()  # type: ignore[union-attr]
    if p is not None:
        return t.code(p)
    tf = arg_value(call, "allow_tf32")
    if isinstance(tf, cst.Name) and tf.value == "False":
        return "ieee"
    return None


def _dot_tiles(t: Tree, k: CstKernel, call: cst.Call) -> list[str]:
    """Constexprs that size the aranges feeding the dot's operands (through one level of assignment)."""
    defs: dict[str, cst.CSTNode] = {}
    for n in walk(k.node):
        if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
            defs.setdefault(n.targets[0].target.value, n.value)
    seen: list[str] = []
    frontier = [a.value for a in call.args[:2]]
    for _depth in range(4):
        nxt = []
        for e in frontier:
            for m in walk(e):
                if isinstance(m, cst.Call) and call_name(m) == "tl.arange":
                    end = arg_value(m, "end", 1)
                    if isinstance(end, cst.Name) and end.value in k.constexprs and end.value not in seen:
                        seen.append(end.value)
                elif isinstance(m, cst.Name) and m.value in defs:
                    nxt.append(defs.pop(m.value))
        frontier = nxt
    return seen


def launch_facts(t: Tree, site: CstLaunch) -> LaunchFacts:
    grid = site.grid
    if isinstance(grid, cst.Name):
        assigns = t.assignments(site.function, grid.value)
        if len(assigns) == 1:
            grid = assigns[0].value
    elements = [t.code(e.value) for e in grid.elements] if isinstance(grid, (cst.Tuple, cst.List)) else None
    meta = {a.keyword.value: t.code(a.value) for a in site.call.args if a.keyword is not None}
    buffers = {}
    for n in walk(site.function) if site.function is not None else []:
        if (isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name)
                and isinstance(n.value, cst.Call) and call_name(n.value) in TORCH_ALLOC):
            buffers[n.targets[0].target.value] = t.code(n.value)
    return LaunchFacts(site.kernel, t.code(grid), elements, isinstance(grid, cst.Lambda), meta,
                       site.function.name.value if site.function is not None else None, buffers)


_SCALAR_OPS = (cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)
_ORDER = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)
_POINTER_THROUGH = {"tl.advance", "tl.multiple_of", "tl.max_contiguous", "tl.broadcast_to", "tl.reshape", "tl.view",
                    "tl.expand_dims"}


def bound_values(a: cst.Assign) -> list[tuple[str, cst.BaseExpression | None]]:
    """(name, value) for each name an assignment binds, pairing ``a, b = x, y`` element-wise; None: not its own value
    (an unpacked call result, a starred or nested target)."""
    out: list[tuple[str, cst.BaseExpression | None]] = []
    for tg in a.targets:
        t, v = tg.target, a.value
        pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = [(t, v)]
        if isinstance(t, cst.Tuple) and isinstance(v, cst.Tuple) and len(t.elements) == len(v.elements):
            pairs = [(e.value, w.value) for e, w in zip(t.elements, v.elements, strict=True)]
        for te, ve in pairs:
            out += [(te.value, ve)] if isinstance(te, cst.Name) else [(name, None) for name in _names(te)]
    return out


def pointer_bases(k: CstKernel, ptr: cst.CSTNode | None) -> set[str]:
    """The parameters an address may be based on: the additive terms of ``ptr`` that are non-constexpr parameters,
    locals followed through every assignment of them (``p = x_ptr + offs``, ``bp = tl.make_block_ptr(base=y_ptr,
    ...)``, ``tl.advance(bp, ...)``, ``ptrs[:, None]``, both sides of ``tl.where`` / ``a if c else b``, element-wise
    through ``a, b = x, y``). A product is an offset, a ``+=`` moves a pointer without changing its base, a loop
    target is an integer, and so is a parameter the kernel multiplies, divides or orders (``cols < n_cols``).
    Empty: the base cannot be told (an unknown call, an unpacked call result); any other scalar parameter added as
    a bare term is reported too (a superset, which is the safe side for hazard checks)."""
    assigns: dict[str, list[cst.BaseExpression | None]] = {}
    ints: set[str] = set()  # names the kernel multiplies, divides or orders: integers, not pointers
    for n in walk(k.node.body):
        if isinstance(n, cst.Assign):
            for name, value in bound_values(n):
                assigns.setdefault(name, []).append(value)
        elif isinstance(n, cst.BinaryOperation) and isinstance(n.operator, _SCALAR_OPS):
            ints |= {x.value for x in (n.left, n.right) if isinstance(x, cst.Name)}
        elif isinstance(n, cst.Comparison):
            for i, ct in enumerate(n.comparisons):
                if isinstance(ct.operator, _ORDER):
                    ints |= {x.value for x in (n.comparisons[i - 1].comparator if i else n.left, ct.comparator)
                             if isinstance(x, cst.Name)}
    params = set(k.params) - set(k.constexprs) - ints
    seen: set[str] = set()

    def bases(e: cst.CSTNode | None) -> set[str] | None:  # None: unknown
        if e is None:
            return None
        if isinstance(e, cst.Name):
            if e.value in seen:
                return set()
            seen.add(e.value)
            out: set[str] | None = {e.value} if e.value in params else set()
            for v in assigns.get(e.value, []):
                b = bases(v)
                out = None if b is None or out is None else out | b
            return out
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, (cst.Add, cst.Subtract)):
            left = bases(e.left)
            right = bases(e.right) if isinstance(e.operator, cst.Add) else set()
            return None if left is None or right is None else left | right
        if isinstance(e, cst.Subscript):
            return bases(e.value)
        if isinstance(e, cst.IfExp):
            a, b = bases(e.body), bases(e.orelse)
            return None if a is None or b is None else a | b
        if isinstance(e, cst.Call):
            name = call_name(e)
            if name == "tl.make_block_ptr":
                return bases(arg_value(e, "base", 0))
            if name in _POINTER_THROUGH:
                return bases(arg_value(e, "input", 0) or (e.args[0].value if e.args else None))
            if name == "tl.where":
                a, b = bases(arg_value(e, "x", 1)), bases(arg_value(e, "y", 2))
                return None if a is None or b is None else a | b
            if isinstance(e.func, cst.Attribute) and e.func.attr.value == "to":  # ptr.to(tl.pointer_type(...))
                return bases(e.func.value)
            return set() if name.startswith("tl.") else None
        return set()

    return bases(ptr) or set()


def module_facts(t: Tree) -> ModuleFacts:
    return ModuleFacts({name: kernel_facts(t, k) for name, k in t.kernels.items()},
                       [launch_facts(t, s) for s in t.launches])


def rank_of(k: cst.FunctionDef, e: cst.CSTNode, _defs: dict[str, cst.CSTNode] | None = None, _depth: int = 0) -> int:
    """The number of block dimensions of ``e`` (0: a scalar), following names to their last assignment.

    A small shape inference: ``tl.arange`` is 1-D, ``x[:, None]`` adds a dimension per ``None``, a reduction over
    an axis removes one (over everything: a scalar), ``tl.zeros``/``tl.full`` take their shape's length, and any
    other expression has the largest rank of its operands.
    """
    if _defs is None:
        _defs = {}
        for n in walk(k.body):
            if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
                _defs[n.targets[0].target.value] = n.value
    if _depth > 40:
        return 0

    def r(x: cst.CSTNode) -> int:
        return rank_of(k, x, _defs, _depth + 1)

    if isinstance(e, cst.Name):
        d = _defs.get(e.value)
        return r(d) if d is not None and d is not e else 0
    if isinstance(e, cst.Call):
        name = call_name(e)
        if name == "tl.arange":
            return 1
        if name in ("tl.zeros", "tl.full", "tl.empty"):
            shape = arg_value(e, "shape", 0)
            return len(shape.elements) if isinstance(shape, (cst.List, cst.Tuple)) else 1
        if name in REDUCTIONS - {"tl.cumsum", "tl.cumprod", "tl.associative_scan", "tl.sort"}:
            src = arg_value(e, "input", 0)
            axis = arg_value(e, "axis", 1)
            keep = arg_value(e, "keep_dims")
            if axis is None or (isinstance(axis, cst.Name) and axis.value == "None"):
                return 0
            base = r(src) if src is not None else 0
            return base if isinstance(keep, cst.Name) and keep.value == "True" else max(base - 1, 0)
        return max([r(a.value) for a in e.args] + [r(e.func.value)] if isinstance(e.func, cst.Attribute) else
                   [r(a.value) for a in e.args] or [0])
    if isinstance(e, cst.Subscript):
        nones = sum(1 for el in e.slice if isinstance(el.slice, cst.Index) and isinstance(el.slice.value, cst.Name)
                    and el.slice.value.value == "None")
        return r(e.value) + nones if nones else r(e.value)
    if isinstance(e, cst.Attribute):
        return r(e.value)
    return max((r(c) for c in kids(e) if isinstance(c, cst.BaseExpression)), default=0)
