"""Structural facts of a Triton kernel read from its AST, each with the source lines it comes from.

These are the L1 facts the cause findings rest on (``optimizer.ladder.causes.code``): does the kernel have a
block range (``tl.arange``) or handle one element per program; does it index with ``//`` and ``%``; do its
atomics all hit one address; how many loops read the same pointer; its dots (input precision, tile constexprs);
1-D vs 2-D program ids; pointer advances inside loops. Data flow is tracked by a small fixpoint over assignments:
a name is *vector* when it derives from ``tl.arange`` (or a load of vector pointers), *program* when it derives
from ``tl.program_id``, *loaded* when it derives from a ``tl.load``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from optimizer.source import Kernel

__all__ = ["DotFact", "KernelStructure", "analyze_kernel"]


@dataclass
class DotFact:
    line: int
    precision: str | None  # the literal input_precision, "ieee" for allow_tf32=False, None when default
    operands: list[str] = field(default_factory=list)  # source text of a and b


@dataclass
class KernelStructure:
    name: str
    block_range: bool  # some tl.arange in the kernel
    load_lines: list[int] = field(default_factory=list)
    store_lines: list[int] = field(default_factory=list)
    div_mod_lines: list[int] = field(default_factory=list)  # // or % on vector (per-element) values
    same_address_atomics: list[int] = field(default_factory=list)  # atomics whose addresses are the same in every program
    atomic_lines: list[int] = field(default_factory=list)
    scatter_atomics: list[tuple[int, str]] = field(default_factory=list)  # (line, pointer param) of data-indexed atomics
    passes: dict[str, list[int]] = field(default_factory=dict)  # pointer param -> first line of each loop loading it
    dots: list[DotFact] = field(default_factory=list)
    program_axes: list[int] = field(default_factory=list)
    grouped_order: bool = False  # a GROUP / swizzle remap of the program id
    pointer_advances: list[int] = field(default_factory=list)  # `ptr += ...` inside a loop
    loops: int = 0
    loop_bounds: list[str] = field(default_factory=list)  # parameter names bounding `for _ in range(..., bound, ...)`
    #: bound -> the loop's step as written (a parameter name or an int literal; 1 when the range has no step)
    loop_steps: dict[str, str | int] = field(default_factory=dict)
    loop_reductions: list[int] = field(default_factory=list)  # `s += tl.sum(..)` / `s = tl.maximum(s, tl.max(..))` in a loop

    @property
    def multi_pass(self) -> dict[str, list[int]]:
        return {p: ls for p, ls in self.passes.items() if len(ls) >= 2}


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _call_name(c: ast.Call) -> str:
    f = c.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        return f"{f.value.id}.{f.attr}"
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _calls(node: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and _call_name(n) == name]


def _assignments(fn: ast.FunctionDef) -> list[tuple[set[str], ast.AST]]:
    out: list[tuple[set[str], ast.AST]] = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign):
            out.append(({t.id for tgt in n.targets for t in ast.walk(tgt) if isinstance(t, ast.Name)}, n.value))
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and isinstance(n.target, ast.Name) and n.value is not None:
            out.append(({n.target.id}, n.value))
        elif isinstance(n, ast.For) and isinstance(n.target, ast.Name):
            out.append(({n.target.id}, n.iter))
    return out


def _taint(fn: ast.FunctionDef, seed: str, *, name: bool = False) -> set[str]:
    """Names whose value derives from a call to ``seed`` (or, ``name=True``, from the name ``seed``)."""
    assigns = _assignments(fn)
    tainted: set[str] = {seed} if name else set()
    changed = True
    while changed:
        changed = False
        for targets, value in assigns:
            hit = (not name and bool(_calls(value, seed))) or bool(_names(value) & tainted)
            if hit and not targets <= tainted:
                tainted |= targets
                changed = True
    return tainted


def _is_vector(expr: ast.AST, vector: set[str]) -> bool:
    return bool(_calls(expr, "tl.arange")) or bool(_names(expr) & vector)


def _precision(c: ast.Call) -> str | None:
    for kw in c.keywords:
        if kw.arg == "input_precision" and isinstance(kw.value, ast.Constant):
            return str(kw.value.value)
        if kw.arg == "allow_tf32" and isinstance(kw.value, ast.Constant) and kw.value.value is False:
            return "ieee"
    return None


def _bases(expr: ast.AST, derived: dict[str, set[str]]) -> set[str]:
    """Pointer parameters an address expression derives from (directly or through local names)."""
    names = _names(expr)
    return {p for p, ds in derived.items() if names & ds}


def _loop_pointer_bases(loop: ast.For | ast.While, derived: dict[str, set[str]]) -> set[str]:
    bases: set[str] = set()
    for c in _calls(loop, "tl.load"):
        if c.args:
            bases |= _bases(c.args[0], derived)
    return bases


def analyze_kernel(k: Kernel) -> KernelStructure:
    fn = k.node
    params = set(k.params) - set(k.constexprs)
    vector = _taint(fn, "tl.arange")
    program = _taint(fn, "tl.program_id")
    loaded = _taint(fn, "tl.load")
    derived = {p: _taint(fn, p, name=True) for p in params if "ptr" in p.lower() or p.lower() in ("x", "y", "a", "b", "out")}
    derived = derived or {p: _taint(fn, p, name=True) for p in params}
    s = KernelStructure(name=k.name, block_range=bool(_calls(fn, "tl.arange")))
    s.load_lines = sorted(c.lineno for c in _calls(fn, "tl.load"))
    s.store_lines = sorted(c.lineno for c in _calls(fn, "tl.store"))
    for n in ast.walk(fn):
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.FloorDiv, ast.Mod)) and (
                _is_vector(n.left, vector) or (not s.block_range and bool(_names(n.left) & program))):
            s.div_mod_lines.append(n.lineno)
        if isinstance(n, ast.Call) and _call_name(n).startswith("tl.atomic_"):
            s.atomic_lines.append(n.lineno)
            ptr = n.args[0] if n.args else next((kw.value for kw in n.keywords if kw.arg == "pointer"), None)
            if ptr is not None and not (_names(ptr) & (program | loaded)) and not _calls(ptr, "tl.program_id"):
                s.same_address_atomics.append(n.lineno)
            elif ptr is not None and _names(ptr) & loaded and (bs := sorted(_bases(ptr, derived))):
                s.scatter_atomics.append((n.lineno, bs[0]))
        if isinstance(n, ast.Call) and _call_name(n) == "tl.dot":
            ops = [ast.unparse(a) for a in n.args[:2]]
            s.dots.append(DotFact(line=n.lineno, precision=_precision(n), operands=ops))
        if isinstance(n, ast.Call) and _call_name(n) == "tl.program_id":
            axis = n.args[0] if n.args else next((kw.value for kw in n.keywords if kw.arg == "axis"), None)
            if isinstance(axis, ast.Constant) and isinstance(axis.value, int) and axis.value not in s.program_axes:
                s.program_axes.append(axis.value)
    s.div_mod_lines = sorted(set(s.div_mod_lines))
    src = ast.unparse(fn).lower()
    s.grouped_order = "group" in src or "swizzle" in src
    loops = [n for n in fn.body if isinstance(n, (ast.For, ast.While))]
    all_loops = [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))]
    s.loops = len(all_loops)
    for lp in all_loops:  # the extent a loop walks: range(bound), range(start, bound[, step]) with a parameter bound
        it = lp.iter if isinstance(lp, ast.For) else None
        if isinstance(it, ast.Call) and _call_name(it) in ("range", "tl.range", "tl.static_range") and it.args:
            bound = it.args[0] if len(it.args) == 1 else it.args[1]
            if isinstance(bound, ast.Name) and bound.id in params and bound.id not in s.loop_bounds:
                s.loop_bounds.append(bound.id)
                step = it.args[2] if len(it.args) >= 3 else None
                s.loop_steps[bound.id] = (step.id if isinstance(step, ast.Name) else step.value
                                          if isinstance(step, ast.Constant) and isinstance(step.value, int) else 1
                                          if step is None else "?")
    for lp in loops:
        for base in _loop_pointer_bases(lp, derived):
            s.passes.setdefault(base, []).append(lp.lineno)
    straight: dict[str, list[int]] = {}
    for stmt in fn.body:
        if isinstance(stmt, (ast.For, ast.While)):
            continue
        for c in _calls(stmt, "tl.load"):
            if c.args and (bs := _bases(c.args[0], derived)):
                straight.setdefault(ast.unparse(c.args[0]), []).append(c.lineno)
                base_of = sorted(bs)[0]
                straight.setdefault("#base:" + ast.unparse(c.args[0]), [base_of])  # type: ignore[list-item]
    for expr, lines in straight.items():  # the same pointer expression loaded twice outside loops: a second pass
        if not expr.startswith("#base:") and len(lines) >= 2:
            base = str(straight["#base:" + expr][0])
            s.passes.setdefault(base, []).extend(lines)
    for lp in all_loops:
        for n in ast.walk(lp):
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id in params and isinstance(n.op, ast.Add):
                s.pointer_advances.append(n.lineno)
    s.pointer_advances = sorted(set(s.pointer_advances))
    s.loop_reductions = sorted({st.lineno for lp in all_loops for st in lp.body if _accumulates_reduction(st)})
    return s


def _accumulates_reduction(st: ast.stmt) -> bool:
    """``s += tl.sum(..)``, ``s = s + tl.sum(..)``, ``s = tl.maximum(s, tl.max(..))`` (or min): a block reduction to
    a scalar that is carried across iterations of the loop whose body holds ``st``."""
    def red(e: ast.expr, fns: tuple[str, ...]) -> bool:
        return isinstance(e, ast.Call) and _call_name(e) in fns
    if isinstance(st, ast.AugAssign) and isinstance(st.op, ast.Add) and isinstance(st.target, ast.Name):
        return red(st.value, ("tl.sum",))
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
        return False
    acc, v = st.targets[0].id, st.value
    if isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add):
        return any(isinstance(a, ast.Name) and a.id == acc and red(b, ("tl.sum",)) for a, b in ((v.left, v.right), (v.right, v.left)))
    if isinstance(v, ast.Call) and _call_name(v) in ("tl.maximum", "tl.minimum") and len(v.args) == 2:
        inner = "tl.max" if _call_name(v) == "tl.maximum" else "tl.min"
        a, b = v.args
        return any(isinstance(p, ast.Name) and p.id == acc and red(q, (inner,)) for p, q in ((a, b), (b, a)))
    return False
