"""Tile loads at a lane index ``idx // R`` (packed int4 weights: ``offs_k[:, None] // 8``): each word is read R times.

One fact for both readers: L1 finds ``redundant_passes`` from it (``KernelFacts.repeated_index_loads``) and the
``repeated_index_loads`` transform (``optimizer.rewrite.repeated_rows``) rewrites exactly the loads it returns.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from optimizer.rewrite.tree import CstKernel, Tree, arg_value, call_name, walk

__all__ = ["Repeat", "find_repeats", "repeated_index_loads"]


@dataclass
class Repeat:
    """One load of a tile whose ``axis`` index is ``idx // factor``."""

    load: cst.Call
    div: cst.BinaryOperation  # the ``idx[:, None] // R`` node
    index: str  # idx
    axis: int  # 0: rows repeat, 1: columns repeat
    factor: int
    blocks: set[str]  # constexprs idx is built from (each must be a multiple of factor)


def _bcast(node: cst.CSTNode) -> tuple[str, int] | None:
    from optimizer.kernel.lane_index import broadcast_index

    return broadcast_index(node)


def _defs(k: cst.FunctionDef) -> tuple[dict[str, list[cst.BaseExpression]], dict[str, list[cst.BaseExpression]]]:
    """name -> assigned values, name -> ``+=`` increments."""
    assigned: dict[str, list[cst.BaseExpression]] = {}
    incs: dict[str, list[cst.BaseExpression]] = {}
    for n in walk(k):
        if isinstance(n, cst.Assign):
            for tgt in n.targets:
                if isinstance(tgt.target, cst.Name):
                    assigned.setdefault(tgt.target.value, []).append(n.value)
        elif isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name):
            (incs if isinstance(n.operator, cst.AddAssign) else assigned).setdefault(n.target.value, []).append(
                n.value)
        elif isinstance(n, (cst.For, cst.CompFor)) and isinstance(n.target, cst.Name):
            assigned.setdefault(n.target.value, []).extend([n.iter, n.iter])
    return assigned, incs


def _lane_names(k: cst.FunctionDef, assigned: dict[str, list[cst.BaseExpression]]) -> set[str]:
    """Names whose value derives from ``tl.arange`` (lane-varying), to a fixed point."""
    out: set[str] = set()
    for _ in range(8):
        grew = False
        for name, vals in assigned.items():
            if name in out:
                continue
            for v in vals:
                if any(isinstance(c, cst.Call) and call_name(c) == "tl.arange" for c in walk(v)) or any(
                        isinstance(c, cst.Name) and c.value in out for c in walk(v)):
                    out.add(name)
                    grew = True
                    break
        if not grew:
            break
    return out


def _pow2(n: int) -> bool:
    return n >= 2 and n & (n - 1) == 0


def find_repeats(kernel: CstKernel, tree: Tree) -> tuple[list[Repeat], list[str]]:
    """The repeated-index loads of the kernel, and why the candidates that look like one are not."""
    from optimizer.kernel.lane_index import ArangeIndex

    k = kernel.node
    assigned, incs = _defs(k)
    lanes = _lane_names(k, assigned)
    index = ArangeIndex(k, kernel.constexprs)
    loads = [n for n in walk(k) if isinstance(n, cst.Call) and call_name(n) == "tl.load"]
    out: list[Repeat] = []
    why: list[str] = []
    for call in loads:
        ptr = call.args[0].value if call.args and call.args[0].keyword is None else None
        if ptr is None:
            continue
        address: cst.BaseExpression = ptr
        if isinstance(ptr, cst.Name):
            vals = assigned.get(ptr.value, [])
            if len(vals) != 1:
                continue
            address = vals[0]
        divs = [(n, lane) for n in walk(address) if isinstance(n, cst.BinaryOperation)
                and isinstance(n.operator, cst.FloorDivide) and (lane := _bcast(n.left)) is not None
                and isinstance(n.right, cst.Integer)]
        if not divs:
            continue
        label = tree.code(ptr)[:60]
        if len(divs) > 1:
            why.append(f"{label}: several `idx // R` lane indices in one address")
            continue
        div, (idx, axis) = divs[0]
        factor = int(cst.ensure_type(div.right, cst.Integer).evaluated_value)
        if not _pow2(factor):
            why.append(f"{label}: `{idx} // {factor}`: the repeat factor is not a power of two")
            continue
        if arg_value(call, "mask", 1) is not None or arg_value(call, "other", 2) is not None:
            why.append(f"{label}: a masked load (the mask would have to be reduced with the rows)")
            continue
        blocks: set[str] = set()
        if not index.name(idx, blocks):
            why.append(f"{label}: `{idx}` is not tl.arange(0, B) plus multiples of constexpr blocks (runs of "
                       f"{factor} could straddle a packed row)")
            continue
        inner = {id(m) for m in walk(div)}
        same_axis = [m for m in walk(address) if id(m) not in inner and (bc := _bcast(m)) is not None
                     and bc[1] == axis and bc[0] in lanes]
        if same_axis:
            why.append(f"{label}: another lane index on the repeated axis ({tree.code(same_axis[0])})")
            continue
        if isinstance(ptr, cst.Name):
            advances = incs.get(ptr.value, [])
            if any(isinstance(m, cst.Name) and m.value in lanes or isinstance(m, cst.Call)
                   and call_name(m) == "tl.arange" for a in advances for m in walk(a)):
                why.append(f"{label}: advanced by a lane-varying value")
                continue
            uses = [m for m in walk(k) if isinstance(m, cst.Name) and m.value == ptr.value]
            # reads: the load's argument, each advance's target, the definition's target
            expected = 1 + len(advances) + 1
            if sum(1 for c in loads if c.args and isinstance(c.args[0].value, cst.Name)
                   and c.args[0].value.value == ptr.value) != 1 or len(uses) != expected:
                why.append(f"{label}: the pointer is read by more than one unmasked load and its advances")
                continue
        out.append(Repeat(call, div, idx, axis, factor, blocks))
    return out, why


def repeated_index_loads(kernel: CstKernel, tree: Tree) -> list[Repeat]:
    """The kernel's loads that read each element several times through an ``idx // R`` lane index (the kernel fact
    ``KernelFacts.repeated_index_loads``, which L1 reads as ``redundant_passes`` evidence)."""
    return find_repeats(kernel, tree)[0]
