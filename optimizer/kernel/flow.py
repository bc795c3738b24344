"""Data flow over a kernel's libcst tree: the one definition of "derives from" that every kernel fact reads.

``names`` (the names an expression reads), ``assigned`` (what a statement binds and from what), ``dependents`` (a
fixpoint over assignments: the names whose value derives from seed names or from calls of seed functions; L1's
"program / vector / loaded" values and the transforms' program-id dependence are all this one function),
``pointer_bases`` (which pointer parameters an address is based on), ``bound_values`` and ``rank_of`` (a small
shape inference).
"""

from __future__ import annotations

import libcst as cst

from optimizer.rewrite.tree import CstKernel, arg_value, call_name, kids, skip_ids, walk

__all__ = ["ATOMICS", "NEW_ALLOC", "REDUCTIONS", "TORCH_ALLOC", "assigned", "bound_values", "calls_in", "dependents",
           "is_allocation", "names", "pointer_bases", "rank_of", "var_names"]

REDUCTIONS = {"tl.max", "tl.min", "tl.sum", "tl.argmax", "tl.argmin", "tl.xor_sum", "tl.reduce", "tl.cumsum",
              "tl.cumprod", "tl.associative_scan", "tl.sort"}
ATOMICS = {"tl.atomic_add", "tl.atomic_max", "tl.atomic_min", "tl.atomic_xchg", "tl.atomic_cas", "tl.atomic_and",
           "tl.atomic_or", "tl.atomic_xor"}
TORCH_ALLOC = {"torch.empty", "torch.zeros", "torch.ones", "torch.full", "torch.empty_like", "torch.zeros_like",
               "torch.ones_like", "torch.full_like", "torch.empty_strided"}
#: tensor methods that allocate a new tensor (``x.new_empty(n)``)
NEW_ALLOC = {"new_empty", "new_zeros", "new_ones", "new_full", "new_empty_strided"}


def is_allocation(call: cst.CSTNode) -> bool:
    """A host call that allocates a fresh tensor: ``torch.empty(...)`` and its kin, or ``x.new_empty(...)``."""
    return isinstance(call, cst.Call) and (call_name(call) in TORCH_ALLOC or (
        isinstance(call.func, cst.Attribute) and call.func.attr.value in NEW_ALLOC))


def calls_in(node: cst.CSTNode, fns: set[str] | frozenset[str]) -> bool:
    """Whether ``node`` calls one of the functions ``fns`` (dotted names)."""
    return any(isinstance(m, cst.Call) and call_name(m) in fns for m in walk(node))


def names(node: cst.CSTNode, skip: frozenset[int] = frozenset()) -> set[str]:
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


def var_names(node: cst.CSTNode) -> set[str]:
    """Variable names ``node`` mentions: ``names`` less attribute names (``x.dtype``) and keyword names (``mask=``)."""
    skip = skip_ids(node)
    return {n.value for n in walk(node) if isinstance(n, cst.Name) and id(n) not in skip}


def assigned(stmt: cst.CSTNode) -> tuple[list[str], cst.CSTNode | None]:
    if isinstance(stmt, cst.Assign):
        return [n for t in stmt.targets for n in names(t.target)], stmt.value
    if isinstance(stmt, (cst.AugAssign, cst.AnnAssign)):
        return list(names(stmt.target)), stmt.value
    if isinstance(stmt, cst.For):
        return list(names(stmt.target)), stmt.iter
    return [], None


def dependents(body: cst.CSTNode, seeds: set[str], skip: frozenset[int] = frozenset(),
               calls: frozenset[str] | set[str] = frozenset()) -> set[str]:
    """Names whose value depends on ``seeds`` -- or on a call of one of ``calls`` (``tl.program_id``, ``tl.arange``,
    ``tl.load``) -- anywhere in ``body``: a fixpoint over assignments, augmented assignments and loop targets, so
    loop-carried values are covered; subexpressions in ``skip`` (by node id) are treated as independent."""
    dep = set(seeds)
    small = [n for n in walk(body) if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For))]
    hits = {id(s) for s in small if calls and (v := assigned(s)[1]) is not None and calls_in(v, calls)}
    while True:
        before = len(dep)
        for s in small:
            targets, value = assigned(s)
            if value is not None and (id(s) in hits or names(value, skip) & dep
                                      or (isinstance(s, cst.AugAssign) and set(targets) & dep)):
                dep |= set(targets)
        if len(dep) == before:
            return dep


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
            out += [(te.value, ve)] if isinstance(te, cst.Name) else [(name, None) for name in names(te)]
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
                name = n.targets[0].target.value
                # `x = x * scale` keeps x's rank: follow the earlier assignment, not the rebinding to itself
                if name not in _defs or not any(isinstance(m, cst.Name) and m.value == name for m in walk(n.value)):
                    _defs[name] = n.value
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
