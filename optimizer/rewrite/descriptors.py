"""Tensor descriptors for the tile loads (and the output store) of a pointer-arithmetic ``tl.dot`` kernel.

Card ``tensor-descriptor-tma``; offered as a variant of ``dot_tile_search`` (timed in the same round as the tile
configs) and as its own recipe kind ``dot_tensor_descriptor``. Each dot operand
``x = tl.load(ptr + r[:, None] * S + c[None, :], mask=(r[:, None] < R) & (c[None, :] < C), other=0.0)`` becomes::

    if USE_TMA:  # before the statement (the K loop) that holds the load
        x_desc = tl.make_tensor_descriptor(ptr, shape=[R, C], strides=[S, 1], block_shape=[BR, BC])
    ...
    x = x_desc.load([r0, c0]) if USE_TMA else tl.load(...)   # r = r0 + tl.arange(0, BR), c = c0 + tl.arange(0, BC)

The address and the mask are read term by term: the address is a pointer parameter plus scalar offsets plus one
broadcast index per axis (``r[:, None] * S``, ``(k0 + r[:, None]) * S``, ``c[None, :]``), following the pointer
name to its definition and to its per-iteration advance (``a_ptrs += BLOCK_K`` in ``for k in range(0, K,
BLOCK_K)`` adds ``k`` to the column index; ``+= BLOCK_K * stride`` with a unit-step loop adds ``k * BLOCK_K`` to
the row index). Each mask conjunct ``lhs < bound`` (``lhs < B - t`` counts as ``lhs + t < B``) must bound one axis
with exactly the index terms of the address: then the descriptor's shape is the bounds and its zero fill out of
bounds is the mask with ``other=0``. A tile whose stride-1 axis is its first one (``w[n, k]`` read as a [K, N]
tile) loads the [N, K] box and transposes it. The output store is converted the same way when it has that form.

Domain (each refused with its reason): the installed Triton has ``tl.make_tensor_descriptor``; backend ``cuda``
(below sm_90 Triton lowers descriptors back to pointer loads; no other backend is offered this); every dot
operand is a name bound to such a ``tl.load`` (2-D tile, one stride-1 axis: a literal 1, or a stride argument that
every recorded launch passes as 1, then re-checked at each launch; ``other`` absent or zero, every axis
bounded by the mask; the tile sizes are constexprs, the contiguous one at least 16 elements at the launch);
descriptor bases, shapes and strides use only kernel arguments and names fixed before the loop; one tuple-grid
launch site. TMA needs 16-byte aligned bases and strides: a recorded launch (``ctx.launches``) that shows an
unaligned stride or base refuses the rewrite ("descriptors would never be used"); otherwise the launch computes
``USE_TMA`` from the actual tensors (``_ladder_tma_ok``: base pointers, strides and batch offsets times the
element size all multiples of 16), so a shape that breaks alignment runs the original pointer loads. The
launcher sets ``triton.set_allocator`` (Triton 3.4+ allocates a global scratch for device-side descriptors at
launch and raises without an allocator); the interpreter never calls it.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import libcst as cst

from optimizer.rewrite.common import call_arg, fresh, launch_arg, single_site_reasons
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import arg_value, body_of, call_name, range_args, statements, walk
from optimizer.triton_types import elem_bytes

__all__ = ["DotTensorDescriptor", "descriptor_reasons", "plan_descriptors", "rewrite_descriptors"]

FLAG = "USE_TMA"
OK_HELPER = "_ladder_tma_ok"
ALLOC_HELPER = "_ladder_tma_scratch"
_HELPERS = f'''

def {OK_HELPER}(*byte_values):
    """Tensor descriptors (TMA) need 16-byte aligned bases and strides: True when every value is a multiple of 16."""
    return all(int(v) % 16 == 0 for v in byte_values)


def {ALLOC_HELPER}(size, alignment, stream):
    """Global scratch for device-side tensor descriptors (Triton >= 3.4 asks for it at launch)."""
    return torch.empty(size, dtype=torch.int8, device="cuda")
'''


def _code(n: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(n)


def _norm(n: cst.CSTNode | str) -> str:
    text = n if isinstance(n, str) else _code(n)
    return "".join(text.split())


def _bare(n: cst.BaseExpression) -> cst.BaseExpression:
    return n.with_changes(lpar=[], rpar=[]) if getattr(n, "lpar", None) else n


def _sum_terms(e: cst.BaseExpression, sign: int = 1) -> list[tuple[int, cst.BaseExpression]]:
    """Additive terms of ``e`` with their signs (parentheses around a sum are looked through)."""
    e = _bare(e)
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, (cst.Add, cst.Subtract)):
        right = -sign if isinstance(e.operator, cst.Subtract) else sign
        return _sum_terms(e.left, sign) + _sum_terms(e.right, right)
    return [(sign, e)]


def _factors(e: cst.BaseExpression) -> list[cst.BaseExpression]:
    e = _bare(e)
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Multiply):
        return _factors(e.left) + _factors(e.right)
    return [e]


def _bcast_axis(e: cst.CSTNode) -> int | None:
    """``v[:, None]`` -> 0, ``v[None, :]`` -> 1 (the axis the vector runs along), else None."""
    if not (isinstance(e, cst.Subscript) and len(e.slice) == 2):
        return None
    a, b = (el.slice for el in e.slice)
    none = lambda s: isinstance(s, cst.Index) and isinstance(s.value, cst.Name) and s.value.value == "None"  # noqa: E731
    full = lambda s: isinstance(s, cst.Slice) and s.lower is None and s.upper is None and s.step is None  # noqa: E731
    if full(a) and none(b):
        return 0
    if none(a) and full(b):
        return 1
    return None


def _bcasts(e: cst.CSTNode) -> list[tuple[int, cst.Subscript]]:
    return [(ax, n) for n in walk(e) if isinstance(n, cst.Subscript) and (ax := _bcast_axis(n)) is not None]


@dataclass
class _Axis:
    terms: list[str] = field(default_factory=list)  # normalized index terms (the broadcast vector, scalars)
    coord: list[str] = field(default_factory=list)  # the same terms with the vector replaced by its start
    stride: str = "1"
    stride_node: cst.BaseExpression | None = None
    block: str = ""  # the constexpr sizing the vector's arange


@dataclass
class Access:
    """One tile load or store that a descriptor can replace."""

    call: cst.Call
    is_load: bool
    base: str  # the pointer parameter
    offsets: list[cst.BaseExpression]  # scalar terms added to the base (batch offsets)
    shape: list[str]  # descriptor order: contiguous axis last
    strides: list[str]
    stride_nodes: list[cst.BaseExpression | None]
    block: list[str]
    coords: list[str]
    transposed: bool  # the tile's stride-1 axis is its first: load the box, then transpose
    anchor: cst.BaseStatement  # the top-level kernel statement before which the descriptor is made
    desc: str = ""
    unit_param: str | None = None  # a stride argument the recorded launches show is 1 (checked again at the launch)


@dataclass
class Plan:
    accesses: list[Access]
    flag: str


class _Kernel:
    """Definitions of a kernel's names, for following a pointer or an index vector to what it is."""

    def __init__(self, t: Target, unit: frozenset[str] = frozenset()) -> None:
        self.t = t
        self.unit = unit  # stride arguments every recorded launch passes as 1
        self.assigns: dict[str, list[cst.Assign]] = {}
        self.augs: dict[str, list[cst.AugAssign]] = {}
        for n in walk(t.kernel.node.body):
            if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
                self.assigns.setdefault(n.targets[0].target.value, []).append(n)
            elif isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name):
                self.augs.setdefault(n.target.value, []).append(n)
        self.top = body_of(t.kernel.node)
        self.loops = [n for n in walk(t.kernel.node) if isinstance(n, cst.For)]

    def top_of(self, node: cst.CSTNode) -> cst.BaseStatement:
        return next(s for s in self.top if any(m is node for m in walk(s)))

    def loop_of(self, node: cst.CSTNode) -> cst.For | None:
        around = [f for f in self.loops if any(m is node for m in walk(f.body))]
        return min(around, key=lambda f: sum(1 for _ in walk(f)), default=None)

    def single(self, name: str) -> cst.BaseExpression | None:
        a = self.assigns.get(name, [])
        return a[0].value if len(a) == 1 else None


def _is_vec(kn: _Kernel, e: cst.BaseExpression, depth: int = 0) -> bool:
    """``e`` holds a tl.arange, directly or through names bound once."""
    for m in walk(e):
        if isinstance(m, cst.Call) and call_name(m) == "tl.arange":
            return True
        d = kn.single(m.value) if isinstance(m, cst.Name) and depth < 4 else None
        if d is not None and _is_vec(kn, d, depth + 1):
            return True
    return False


def _vector(kn: _Kernel, sub: cst.Subscript) -> tuple[str, str] | str:
    """(start text, block constexpr) of the vector ``v`` in ``v[:, None]``: ``v = start + tl.arange(0, B)``, where
    the arange may sit behind names bound once (``k = k0 + offs_k``, ``offs_k = tl.arange(0, BLOCK_K)``)."""
    starts: list[str] = []
    v: cst.BaseExpression = sub.value
    for _ in range(5):
        if isinstance(v, cst.Name):
            if kn.augs.get(v.value):
                return f"the index vector {v.value} is advanced in place"
            d = kn.single(v.value)
            if d is None:
                return f"the index vector {v.value} is not assigned exactly once"
            v = d
            continue
        terms = _sum_terms(v)
        vec = [e for s, e in terms if _is_vec(kn, e)]
        if len(vec) != 1 or any(s < 0 for s, _ in terms):
            return f"index vector {_code(sub.value)} is not start + tl.arange(0, BLOCK) (a wrap-around % or a gather?)"
        if any(_bcasts(e) for _, e in terms):
            return f"index vector {_code(sub.value)} is built from a broadcast"
        starts += [_code(e) for _, e in terms if e is not vec[0]]
        v = vec[0]
        if isinstance(v, cst.Call) and call_name(v) == "tl.arange":
            start, end = arg_value(v, "start", 0), arg_value(v, "end", 1)
            if not (isinstance(start, cst.Integer) and start.value == "0" and isinstance(end, cst.Name)
                    and end.value in kn.t.kernel.constexprs):
                return f"{_code(v)} is not tl.arange(0, <constexpr>)"
            return (" + ".join(starts) or "0"), end.value
        if not isinstance(v, cst.Name):
            return f"index vector {_code(sub.value)} is not start + tl.arange(0, BLOCK) (a wrap-around % or a gather?)"
    return f"index vector {_code(sub.value)} is defined too indirectly"


def _advance(kn: _Kernel, name: str, load: cst.Call, strides: dict[int, str],
             unit: int) -> tuple[int, str] | str | None:
    """The index term a pointer advance adds on the load's axis: (axis, term), a refusal, or None (no advance)."""
    augs = kn.augs.get(name, [])
    if not augs:
        return None
    loop = kn.loop_of(load)
    if len(augs) != 1 or loop is None or not isinstance(augs[0].operator, cst.AddAssign):
        return f"{name} is advanced other than once by += in the loop around its load"
    body = body_of(loop)
    line = next((s for s in body if isinstance(s, cst.SimpleStatementLine) and s.body[0] is augs[0]), None)
    at = next((i for i, s in enumerate(body) if any(m is load for m in walk(s))), None)
    if line is None or at is None or body.index(line) < at:
        return f"{name} is not advanced at the top level of its loop after the load"
    it = loop.iter
    if not (isinstance(loop.target, cst.Name) and 1 <= len(range_args(it)) <= 3):
        return f"the loop around {name} is not for v in range(...) / tl.range(...)"
    args = [_code(a.value) for a in range_args(it)]
    start, step = (args[0], args[2] if len(args) == 3 else "1") if len(args) > 1 else ("0", "1")
    var = loop.target.value
    facs = _factors(augs[0].value)
    axis: int | None = None
    per: list[cst.BaseExpression] = []  # set with axis below, or by the fallback when none is found
    for ax, s in strides.items():
        hit = [f for f in facs if _norm(f) == _norm(s)]
        if s != "1" and hit:
            axis, per = ax, [f for f in facs if f is not hit[0]]
    if axis is None:
        axis, per = unit, facs
    per_text = " * ".join(_code(f) for f in per) or "1"
    base = var if start == "0" else f"({var} - {start})"
    if _norm(per_text) == _norm(step):
        return axis, base
    if step == "1":
        return axis, f"{base} * {per_text}"
    return f"{name} advances by {per_text} per iteration of a loop stepping {step}"


def _access(kn: _Kernel, call: cst.Call, is_load: bool) -> Access | str:
    t = kn.t
    ptr = arg_value(call, "pointer", 0)
    mask = arg_value(call, "mask", 1 if is_load else 2)
    what = "load" if is_load else "store"
    if ptr is None:
        return f"{what} without a pointer argument"
    if mask is None:
        return f"{what} of {_code(ptr)} has no mask: the descriptor's shape is unknown"
    if not is_load and arg_value(call, "value", 1) is None:
        return f"store of {_code(ptr)} passes no value the descriptor store can read (none, or through *args)"
    if is_load:
        other = arg_value(call, "other", 2)
        if other is not None and not (isinstance(other, (cst.Integer, cst.Float)) and float(other.value) == 0.0):
            return f"load of {_code(ptr)} fills with {_code(other)} (a descriptor fills with zeros)"
        if any(a.keyword is not None and a.keyword.value not in ("pointer", "mask", "other") for a in call.args):
            return f"load of {_code(ptr)} passes cache or eviction options"
    adv_name = None
    expr = ptr
    if isinstance(ptr, cst.Name):
        d = kn.single(ptr.value)
        if d is None:
            return f"pointer {ptr.value} is not assigned exactly once"
        adv_name, expr = ptr.value, d
    # flatten the address, expanding names that are sums (a_base = a_ptr + batch * M * K)
    terms: list[cst.BaseExpression] = []
    todo = [(s, e) for s, e in _sum_terms(expr)]
    while todo:
        s, e = todo.pop(0)
        if s < 0:
            return f"address of {_code(ptr)} subtracts {_code(e)}"
        d = kn.single(e.value) if isinstance(e, cst.Name) and not kn.augs.get(e.value) else None
        if d is not None and isinstance(bare := _bare(d), cst.BinaryOperation) and isinstance(bare.operator, cst.Add):
            todo = list(_sum_terms(d)) + todo
            continue
        terms.append(e)
    first = terms[0]
    if not (isinstance(first, cst.Name) and first.value in t.kernel.params and first.value not in t.kernel.constexprs):
        return f"address of {_code(ptr)} does not start with a pointer argument"
    base = first.value
    if base in t.facts.rebound_params:
        return f"pointer argument {base} is rebound in the body"
    axes: dict[int, _Axis] = {}
    scalars: list[cst.BaseExpression] = []
    for e in terms[1:]:
        bc = _bcasts(e)
        if not bc:
            scalars.append(e)
            continue
        if len({ax for ax, _ in bc}) != 1 or len(bc) != 1:
            return f"address term {_code(e)} mixes broadcast axes"
        ax, sub = bc[0]
        if ax in axes:
            return f"two address terms index axis {ax}"
        facs = _factors(e)
        holder = [f for f in facs if _bcasts(f)]
        inner = _sum_terms(holder[0])
        if any(s < 0 for s, _ in inner) or any(_bcasts(x) and x is not sub for _, x in inner):
            return f"address term {_code(e)} is not (index) * stride"
        stride = [f for f in facs if f is not holder[0]]
        st = " * ".join(_code(f) for f in stride) or "1"
        vec = _vector(kn, sub)
        if isinstance(vec, str):
            return vec
        start, block = vec
        axes[ax] = _Axis([_norm(x) for _, x in inner], [start if x is sub else _code(x) for _, x in inner], st,
                         (stride[0] if len(stride) == 1 else None) if stride else None, block)
    if set(axes) != {0, 1}:
        return f"address of {_code(ptr)} is not a 2-D tile (r[:, None] and c[None, :] terms)"
    unit = [ax for ax, a in axes.items() if a.stride == "1"] or [ax for ax, a in axes.items() if a.stride in kn.unit]
    if len(unit) != 1:
        return (f"address of {_code(ptr)} has no single stride-1 axis (the last dimension must be contiguous; a stride "
                "argument counts as 1 only where every recorded launch passes 1)")
    unit_param = axes[unit[0]].stride if axes[unit[0]].stride != "1" else None
    if adv_name is not None:
        adv = _advance(kn, adv_name, call, {ax: a.stride for ax, a in axes.items()}, unit[0])
        if isinstance(adv, str):
            return adv
        if adv is not None:
            axes[adv[0]].terms.append(_norm(adv[1]))
            axes[adv[0]].coord.append(adv[1])
    # the mask: one conjunct per axis, bounding exactly the address's index terms
    bounds: dict[int, str] = {}
    for c in _conjuncts(mask):
        c = _bare(c)
        if not (isinstance(c, cst.Comparison) and len(c.comparisons) == 1
                and isinstance(c.comparisons[0].operator, cst.LessThan)):
            return f"mask conjunct {_code(c)} is not lhs < bound"
        rhs = _sum_terms(c.comparisons[0].comparator)
        pos = [e for s, e in rhs if s > 0]
        if len(pos) != 1 or _bcasts(pos[0]):
            return f"mask conjunct {_code(c)} has no single scalar bound"
        lhs = _sum_terms(c.left) + [(1, e) for s, e in rhs if s < 0]
        bounded = {ax for _, e in lhs for ax, _ in _bcasts(e)}
        if any(s < 0 for s, _ in lhs) or len(bounded) != 1:
            return f"mask conjunct {_code(c)} does not bound one axis"
        ax = bounded.pop()
        scal = [x for x in scalars if _norm(x) in {_norm(e) for _, e in lhs}]
        want = sorted(axes[ax].terms + ([_norm(x) for x in scal] if ax in unit else []))
        if ax in bounds or sorted(_norm(e) for _, e in lhs) != want:
            return (f"mask conjunct {_code(c)} does not bound the address's axis-{ax} index "
                    f"({' + '.join(axes[ax].terms)})")
        if ax in unit:  # scalars of the contiguous axis (k0 in ... + k0 + rk[None, :]) are its coordinate
            axes[ax].coord += [_code(x) for x in scal]
            scalars = [x for x in scalars if x not in scal]
        bounds[ax] = _code(pos[0])
    if set(bounds) != {0, 1}:
        return f"the mask of {_code(ptr)} does not bound both axes (the descriptor's shape is unknown)"
    order = [0, 1] if unit[0] == 1 else [1, 0]
    other_ax = order[0]
    coord = [" + ".join(x for x in axes[ax].coord if x != "0") or "0" for ax in order]
    return Access(call, is_load, base, scalars, [bounds[ax] for ax in order], [axes[other_ax].stride, "1"],
                  [axes[other_ax].stride_node, None], [axes[ax].block for ax in order], coord, unit[0] == 0,
                  kn.top_of(call), unit_param=unit_param)


def _conjuncts(e: cst.BaseExpression) -> list[cst.BaseExpression]:
    e = _bare(e)
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.BitAnd):
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def _names_in(e: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(e) if isinstance(n, cst.Name)}


@functools.lru_cache(maxsize=1)
def _installed_has_descriptors() -> bool:
    """``hasattr(tl, "make_tensor_descriptor")`` for the installed Triton, without importing it here when it is not
    imported yet: importing ``triton.language`` outside ``TRITON_INTERPRET=1`` makes its jitted helpers unusable by
    a later interpreter run in the same process, so the language package's source is read instead."""
    tl = sys.modules.get("triton.language")
    if tl is not None:
        return hasattr(tl, "make_tensor_descriptor")
    spec = importlib.util.find_spec("triton")
    for root in (spec.submodule_search_locations or []) if spec is not None else []:
        init = Path(root) / "language" / "__init__.py"
        if init.exists():
            return "make_tensor_descriptor" in init.read_text()
    return False


def unit_strides(t: Target, ctx: RecipeContext) -> frozenset[str]:
    """Integer arguments that every recorded launch of ``t`` passes as 1 (none recorded: none)."""
    recs = [r for r in ctx.launches if r.get("kernel") == t.kernel.name]
    if not recs:
        return frozenset()
    ones = [{k for k, v in {**(r.get("constexprs") or {}), **(r.get("ir_args") or {})}.items()
             if v == 1 and not isinstance(v, bool)} for r in recs]
    return frozenset(set.intersection(*ones) & (set(t.kernel.params) - set(t.kernel.constexprs)))


def plan_descriptors(t: Target, unit: frozenset[str] = frozenset()) -> Plan | list[str]:
    """The accesses to convert (every dot operand's load, the output store where it fits), or the reasons not to."""
    out = []
    if not _installed_has_descriptors():
        out.append("the installed Triton has no tl.make_tensor_descriptor")
    if not t.facts.dots:
        return [*out, "no tl.dot: tensor descriptors are offered for dot kernels only"]
    out += single_site_reasons(t)
    kn = _Kernel(t, unit)
    loads: list[Access] = []
    for d in t.facts.dots:
        for arg in d.node.args[:2]:
            v = arg.value
            val = kn.single(v.value) if isinstance(v, cst.Name) else None
            if not (isinstance(val, cst.Call) and call_name(val) == "tl.load"):
                out.append(f"dot operand {_code(v)} is not a name bound to one tl.load")
                continue
            acc = _access(kn, val, True)
            if isinstance(acc, str):
                out.append(acc)
            elif all(a.call is not val for a in loads):
                loads.append(acc)
    stores = []
    for n in walk(t.kernel.node.body):
        if isinstance(n, cst.Call) and call_name(n) == "tl.store" and kn.loop_of(n) is None:
            acc = _access(kn, n, False)
            if not isinstance(acc, str):
                stores.append(acc)
    accesses = loads + stores[:1] if len(stores) == 1 else loads
    for a in accesses:  # what the descriptor is built from must exist before the statement it goes in front of
        at = kn.top.index(a.anchor)
        used: set[str] = set()
        for x in [*a.offsets, *(cst.parse_expression(s) for s in a.shape + a.strides)]:
            used |= _names_in(x)
        for name in sorted(used - {"tl"}):
            if name in t.kernel.params:
                if name in t.facts.rebound_params:
                    out.append(f"{name} (in a descriptor's base, shape or stride) is rebound in the body")
                continue
            defs = kn.assigns.get(name, [])
            where = [i for i, s in enumerate(kn.top) if len(defs) == 1 and s is not a.anchor
                     and isinstance(s, cst.SimpleStatementLine) and s.body[0] is defs[0]]
            if kn.augs.get(name) or not where or where[0] >= at:
                head = _code(a.anchor).strip().splitlines()[0]
                out.append(f"{name} (in a descriptor's base, shape or stride) is not fixed before `{head}`")
    return out or Plan(accesses, fresh(t, FLAG) if FLAG in t.kernel.params else FLAG)


def _host_bytes(t: Target, a: Access, e: cst.BaseExpression | str) -> str | None:
    """Host text for ``e`` (a kernel-side integer over kernel arguments) times the base tensor's element size."""
    node = cst.parse_expression(e) if isinstance(e, str) else e
    site, k = t.sites[0], t.kernel
    host = site.arg_for(k, a.base)
    if host is None:
        return None
    missing: list[str] = []

    class Sub(cst.CSTTransformer):
        def leave_Name(self, orig: cst.Name, upd: cst.Name) -> cst.BaseExpression:
            arg = site.arg_for(k, orig.value) if orig.value in k.params else None
            if arg is None:
                missing.append(orig.value)
                return upd
            text = _code(arg).strip()
            simple = isinstance(arg, (cst.Name, cst.Integer, cst.Attribute, cst.Call))
            return cst.parse_expression(text if simple else f"({text})")

    # Sub replaces names by expressions only, so the visited expression stays one
    done = _bare(cast(cst.BaseExpression, node.visit(Sub())))
    if missing:
        return None
    text = _code(done).strip()
    text = f"({text})" if isinstance(done, cst.BinaryOperation) else text
    return f"{text} * {_code(host).strip()}.element_size()"


def _offset_core(t: Target, e: cst.BaseExpression) -> cst.BaseExpression | None:
    """The factors of a scalar offset term that do not depend on a program id (their product must stay aligned)."""
    keep: list[cst.BaseExpression] = []
    for f in _factors(e):
        if isinstance(f, cst.Integer):
            keep.append(f)
        elif isinstance(f, cst.Name) and (f.value in t.facts.pid_dependent):
            continue
        elif isinstance(f, cst.Call) and call_name(f) == "tl.program_id":
            continue
        elif isinstance(f, cst.Name) and f.value in t.kernel.params:
            keep.append(f)
        else:
            return None
    return cst.parse_expression(" * ".join(_code(f) for f in keep) or "1")


def _evaluate(e: cst.BaseExpression, values: dict[str, Any]) -> int | None:
    e = _bare(e)
    if isinstance(e, cst.Integer):
        return int(e.value)
    if isinstance(e, cst.Name):
        v = values.get(e.value)
        return int(v) if isinstance(v, int) and not isinstance(v, bool) else None
    if isinstance(e, cst.BinaryOperation):
        a, b = _evaluate(e.left, values), _evaluate(e.right, values)
        if a is None or b is None:
            return None
        ops = {cst.Add: lambda: a + b, cst.Subtract: lambda: a - b, cst.Multiply: lambda: a * b,
               cst.FloorDivide: lambda: a // b if b else None}
        fn = ops.get(type(e.operator))
        return fn() if fn else None
    return None


def alignment_terms(t: Target, plan: Plan) -> list[tuple[Access, str, cst.BaseExpression | None]]:
    """(access, what, kernel-side integer) that must be a multiple of 16 bytes; None for the base pointer itself."""
    out: list[tuple[Access, str, cst.BaseExpression | None]] = []
    for a in plan.accesses:
        out.append((a, f"base {a.base}", None))
        for o in a.offsets:
            out.append((a, f"offset {_code(o)}", _offset_core(t, o)))
        out.append((a, f"stride {a.strides[0]}", cst.parse_expression(a.strides[0])))
    return out


def descriptor_reasons(t: Target, ctx: RecipeContext, tiles: dict[str, int] | None = None) -> list[str]:
    """Every reason descriptors do not apply to ``t`` (``tiles``: the constexpr values the launch will pass)."""
    if ctx.backend != "cuda":
        return [f"backend {ctx.backend}: tensor descriptors (TMA) are generated for cuda only"]
    plan = plan_descriptors(t, unit_strides(t, ctx))
    if isinstance(plan, list):
        return plan
    out = []
    for acc, what, e in alignment_terms(t, plan):
        if e is not None and _host_bytes(t, acc, e) is None:
            out.append(f"{what} is not an expression of kernel arguments (alignment cannot be checked at the launch)")
    for a in plan.accesses:
        from optimizer.rewrite.dot_tiles import literal_int_arg

        lit = tiles.get(a.block[1]) if tiles else None
        if lit is None:
            node = literal_int_arg(t, t.sites[0].arg_for(t.kernel, a.block[1]))
            lit = int(node.value) if node is not None else None
        if lit is None:
            out.append(f"{a.block[1]} (the contiguous block) is not a literal at the launch")
        elif lit < 16:
            out.append(f"{a.block[1]}={lit}: a descriptor box needs at least 16 bytes in its contiguous dimension")
        elif lit > 256 or (tiles or {}).get(a.block[0], 0) > 256:
            out.append(f"{a.block[1]}={lit}: a TMA box dimension is at most 256")
    for rec in [r for r in ctx.launches if r.get("kernel") == t.kernel.name]:
        values = {**(rec.get("constexprs") or {}), **(rec.get("ir_args") or {})}
        sig = rec.get("signature") or {}
        for acc, what, e in alignment_terms(t, plan):
            size = elem_bytes(sig.get(acc.base))
            if e is None:
                if acc.base in sig and acc.base not in (rec.get("divisible_by_16") or []):
                    out.append(f"the recorded launch passes {acc.base} at an address not 16-byte aligned: "
                               "descriptors would never be used")
                continue
            v = _evaluate(e, values)
            if v is not None and size and (v * size) % 16:
                out.append(f"the recorded launch has {what} = {v} x {size} B = {v * size} B, not a multiple of 16 "
                           "(TMA needs 16-byte aligned strides): descriptors would never be used")
    return list(dict.fromkeys(out))


def rewrite_descriptors(t: Target, plan: Plan) -> str:
    """Edit the kernel and its launch; return the description."""
    tree, k, site = t.tree, t.kernel, t.sites[0]
    flag = plan.flag
    made: dict[int, list[str]] = {}
    for a in plan.accesses:
        stem = a.base.removesuffix("_ptr") or a.base
        a.desc = fresh(t, f"{stem}_desc")
        while any(b.desc == a.desc for b in plan.accesses if b is not a):
            a.desc = fresh(t, f"{a.desc}_")
        base = " + ".join([a.base, *(_code(o).strip() for o in a.offsets)])
        made.setdefault(id(a.anchor), []).append(
            f"    {a.desc} = tl.make_tensor_descriptor({base}, shape=[{', '.join(a.shape)}], "
            f"strides=[{', '.join(a.strides)}], block_shape=[{', '.join(a.block)}])\n")
        coords = f"[{', '.join(a.coords)}]"
        if a.is_load:
            new = f"{a.desc}.load({coords})" + (".T" if a.transposed else "")
            def load(old: cst.CSTNode, new: str = new) -> cst.CSTNode:
                return cst.parse_expression(f"{new} if {flag} else {_code(old).strip()}")
            tree.edit(a.call, load)
        else:
            v = _code(call_arg(a.call, "value", 1)).strip() + (".T" if a.transposed else "")  # _access: passed
            stmt = next(s for s in walk(a.anchor)
                        if isinstance(s, cst.SimpleStatementLine) and any(m is a.call for m in walk(s)))
            make = made[id(a.anchor)].pop() if stmt is a.anchor else ""  # the store's own line: one if/else
            def store(old: cst.CSTNode, d: str = a.desc, c: str = coords, v: str = v, make: str = make) -> cst.CSTNode:
                return cst.parse_statement(
                    f"if {flag}:\n{make}    {d}.store({c}, {v})\nelse:\n    {_code(old).strip()}\n")
            tree.edit(stmt, store)
    for a in plan.accesses:
        lines = made.pop(id(a.anchor), None)
        if lines:
            tree.insert_before(a.anchor, f"if {flag}:\n{''.join(lines)}")
    tree.add_params(k.node, [f"{flag}: tl.constexpr"])
    checks = []
    for acc, _what, e in alignment_terms(t, plan):
        if e is None:  # the base pointer itself
            checks.append(f"{_code(launch_arg(t, acc.base)).strip()}.data_ptr()")
            continue
        nbytes = _host_bytes(t, acc, e)
        assert nbytes is not None  # descriptor_reasons: every term is an expression of the launch's arguments
        checks.append(nbytes)
    units = [f"{_code(arg).strip()} == 1" for acc in plan.accesses if acc.unit_param
             and (arg := site.arg_for(k, acc.unit_param)) is not None]
    ok = " and ".join([f"{OK_HELPER}({', '.join(dict.fromkeys(checks))})", *dict.fromkeys(units)])
    tree.add_keyword(site.call, flag, ok)
    if site.statement is not None:
        tree.insert_before(site.statement,
                           f'if hasattr(triton, "set_allocator"):\n    triton.set_allocator({ALLOC_HELPER})\n')
    defined = {n.name.value for n in tree.module.body if isinstance(n, cst.FunctionDef)}
    if OK_HELPER not in defined:
        helpers = statements(_HELPERS)
        gap = [cst.EmptyLine(), cst.EmptyLine()]
        tree.insert_after(k.node, [helpers[0].with_changes(leading_lines=gap), *helpers[1:]])
    parts = [f"{'load' if a.is_load else 'store'} {a.base} [{', '.join(a.block)}]"
             + (" (transposed)" if a.transposed else "") for a in plan.accesses]
    return (f"{k.name}: tensor descriptors (tl.make_tensor_descriptor) for {'; '.join(parts)}; {flag} chosen at the "
            f"launch from 16-byte alignment of bases and strides (else the pointer loads)")


class DotTensorDescriptor:
    """Tensor-descriptor tile loads for a pointer-arithmetic dot kernel (also a ``dot_tile_search`` variant)."""

    kind = "dot_tensor_descriptor"
    card = "tensor-descriptor-tma"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        return descriptor_reasons(t, ctx)

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"mode": "descriptor"}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        plan = plan_descriptors(t, unit_strides(t, ctx))
        assert not isinstance(plan, list)
        return rewrite_descriptors(t, plan)
